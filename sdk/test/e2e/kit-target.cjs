// The jest project `kit` (jest.config.cjs): the SDK end-to-end scenarios on the test service
// (sdk/test/e2e/target.ts) instead of the emulator stack. Set before any test module loads.
process.env.SDK_E2E_TARGET = 'test-service';
