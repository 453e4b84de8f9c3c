/**
 * Projects: `unit` (pure logic, no emulators), `integration` (real HTTP against the HTTP functions
 * on the production runtime and the official emulators, started by scripts/test.mjs and
 * scripts/test-stack.mjs) and `framework` (faults injected into functions-framework processes of
 * its own), plus `kit`, `rules-sdk` and `monitoring` below. @swc/jest transpiles TypeScript; `jose`, pulled in by
 * firebase-admin 14, is ESM-only and must be transformed too.
 */
const transform = {
  '^.+\\.(t|j|mj)s$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } },
  ],
};
const transformIgnorePatterns = ['/node_modules/(?!(jose)/)'];
// SDK sources import siblings as `./x.js` (NodeNext ESM); the resolver maps them to `.ts` under Jest.
const common = { resolver: '<rootDir>/sdk/test/jest-resolver.cjs', transform, transformIgnorePatterns, testEnvironment: 'node',
  // Generated copies (bench builds, emulator data) must not be seen by Jest's module map.
  modulePathIgnorePatterns: ['<rootDir>/.local/', '<rootDir>/.emulators/'], moduleFileExtensions: ['ts', 'js', 'mjs', 'json'] };

module.exports = {
  // Jest 30 reads the timeout globally; integration tests wait for triggers and Pub/Sub.
  testTimeout: 60000,
  // Suites that say `@long` start first (see the file).
  testSequencer: '<rootDir>/scripts/lib/test-sequencer.cjs',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/sdk/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/sdk/test/e2e/**/*.test.ts'],
      testTimeout: 60000,
    },
    // Parity (decision 16): the SDK end-to-end scenarios on the SDK's test service instead of the
    // emulator stack (sdk/test/e2e/target.ts), in the unit phase of scripts/test.mjs (no emulators).
    // The suites listed run on both targets; what differs between the targets is in the neutral
    // helpers of sdk/test/e2e/target.ts and helpers.ts.
    {
      ...common,
      displayName: 'kit',
      testMatch: [
        '<rootDir>/sdk/test/e2e/deliveries.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/process.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/attachments.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/messages.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/loops.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/erasures.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/channel.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/fallback.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/example-connector.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/lifecycle.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/targets.e2e.test.ts',
        '<rootDir>/sdk/test/e2e/windows.e2e.test.ts',
      ],
      setupFiles: ['<rootDir>/sdk/test/e2e/kit-target.cjs'],
      testTimeout: 60000,
    },
    // The rules' unit tests again, on the SDK's generated copy of the rules (sdk/src/internal/rules,
    // scripts/sdk-generate.mjs), which the test service runs: the same tests pass on both copies.
    {
      ...common,
      displayName: 'rules-sdk',
      testMatch: ['<rootDir>/test/unit/rules/**/*.test.ts'],
      moduleNameMapper: { '^(?:\\.\\./)+functions/src/rules/(.*)$': '<rootDir>/sdk/src/internal/rules/$1' },
    },
    // With the integration suites (scripts/test-stack.mjs): tests that start their own
    // functions-framework processes (injected hangs, a missing image bucket).
    { ...common, displayName: 'framework', testMatch: ['<rootDir>/test/framework/**/*.test.ts'], testTimeout: 120000 },
    // After the integration phase (scripts/test.mjs): the monitoring's log filters against the
    // log lines that phase captured (test/monitoring/filters.test.ts, docs/operations.md#monitoring).
    { ...common, displayName: 'monitoring', testMatch: ['<rootDir>/test/monitoring/**/*.test.ts'] },
  ],
};
