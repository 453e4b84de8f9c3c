/**
 * The SDK release gate (scripts/release-check.mjs) and the release workflow that runs it
 * (.github/workflows/release-sdk.yml): a tag publishes only what the tag, the package, the
 * changelog and the tarball agree on, and only after the tests, with provenance.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { changelogSection, entryFiles, releaseProblems, versionOfTag, type ReleaseInput } from '../../../scripts/release-check.mjs';

const ROOT = join(__dirname, '..', '..', '..');

const pkg = {
  version: '0.3.0',
  exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
  bin: { 'support-desk-connector-check': './dist/check/cli.js' },
  repository: { type: 'git', url: 'git+https://github.com/acme/desk.git', directory: 'sdk' },
};
const good: ReleaseInput = {
  tag: 'sdk-v0.3.0',
  pkg,
  versionSource: "export const SDK_VERSION = '0.3.0';\n",
  changelog: '# Changelog\n\n## 0.3.0 (2026-12-01)\n\nAdded: things.\n\n## 0.2.0 (2026-10-01)\n',
  packedFiles: ['package.json', 'README.md', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts', 'dist/check/cli.js', 'src/index.ts'],
  repository: 'acme/desk',
};

test('a consistent release has no problems', () => {
  expect(releaseProblems(good)).toEqual([]);
});

test('each disagreement is named', () => {
  expect(releaseProblems({ ...good, tag: 'v0.3.0' })).toEqual([expect.stringContaining('not a release tag')]);
  expect(releaseProblems({ ...good, tag: 'sdk-v0.3' })).toEqual([expect.stringContaining('not a release tag')]);
  expect(releaseProblems({ ...good, tag: 'sdk-v0.3.1' })).toEqual([
    'sdk/package.json has version 0.3.0, the tag says 0.3.1',
    'sdk/src/version.ts has SDK_VERSION 0.3.0, the tag says 0.3.1',
    'sdk/CHANGELOG.md has no "## 0.3.1" section',
  ]);
  expect(releaseProblems({ ...good, versionSource: "export const SDK_VERSION = '0.2.0';" })).toEqual(['sdk/src/version.ts has SDK_VERSION 0.2.0, the tag says 0.3.0']);
  expect(releaseProblems({ ...good, changelog: '## 0.3.0 (unreleased)\n' })).toEqual([expect.stringContaining('marks 0.3.0 unreleased')]);
  expect(releaseProblems({ ...good, repository: 'someone/else' })).toEqual([expect.stringContaining('is not github.com/someone/else')]);
  expect(releaseProblems({ ...good, pkg: { ...pkg, repository: { url: 'git+https://github.com/acme/desk.git' } } })).toEqual([expect.stringContaining('directory must be "sdk"')]);
  expect(releaseProblems({ ...good, packedFiles: good.packedFiles.filter((f) => f !== 'dist/check/cli.js') })).toEqual(['the tarball lacks dist/check/cli.js']);
  expect(releaseProblems({ ...good, packedFiles: [...good.packedFiles, 'test/unit/x.test.ts'] })).toEqual([expect.stringContaining('the tarball holds tests')]);
});

test('tags, changelog sections and entry files are read exactly', () => {
  expect(versionOfTag('sdk-v1.2.3-rc.1')).toBe('1.2.3-rc.1');
  expect(versionOfTag('sdk-v01.2.3')).toBeNull();
  // 0.3.0 must not match the section of 0.3.0-rc.1 or 0.3.01.
  expect(changelogSection('## 0.3.0-rc.1 (2026-11-01)\n', '0.3.0')).toBeNull();
  expect(changelogSection('## 0.3.0 — 2026-12-01\n', '0.3.0')).toEqual({ heading: '## 0.3.0 — 2026-12-01', released: true });
  expect(entryFiles(pkg)).toEqual(['dist/check/cli.js', 'dist/index.d.ts', 'dist/index.js']);
});

test('the package as committed names every entry file its tarball needs, and its changelog has the current version', () => {
  const sdkPackage = JSON.parse(readFileSync(join(ROOT, 'sdk', 'package.json'), 'utf8')) as { version: string; files: string[] };
  const changelog = readFileSync(join(ROOT, 'sdk', 'CHANGELOG.md'), 'utf8');
  expect(changelogSection(changelog, sdkPackage.version)).not.toBeNull();
  // `files` decides what npm packs: the changelog must be in it (the tarball check then passes on CI).
  expect(sdkPackage.files).toEqual(expect.arrayContaining(['dist', 'README.md', 'CHANGELOG.md']));
});

describe('the release workflow', () => {
  interface Step {
    name?: string;
    run?: string;
    uses?: string;
    with?: Record<string, unknown>;
    env?: Record<string, string>;
  }
  interface Workflow {
    on: { push?: { tags?: string[]; branches?: string[] } };
    jobs: Record<string, { permissions?: Record<string, string>; environment?: string; steps: Step[] }>;
  }
  const workflowFile = 'release-sdk.yml';
  const workflowText = readFileSync(join(ROOT, '.github', 'workflows', workflowFile), 'utf8');
  const workflow = YAML.parse(workflowText) as Workflow;
  const jobs = Object.values(workflow.jobs);
  const steps = jobs.flatMap((job) => job.steps);
  const indexOf = (match: (step: Step) => boolean) => steps.findIndex(match);

  test('runs on release tags only', () => {
    expect(workflow.on).toEqual({ push: { tags: ['sdk-v*'] } });
  });

  test('tests, then checks the release, then publishes the SDK with provenance', () => {
    const install = indexOf((s) => s.run?.startsWith('npm ci') === true);
    const test = indexOf((s) => s.run === 'npm test');
    const gate = indexOf((s) => s.run?.startsWith('node scripts/release-check.mjs --tag "$GITHUB_REF_NAME"') === true);
    const publish = indexOf((s) => s.run?.startsWith('npm publish') === true);
    expect([install, test, gate, publish].every((i) => i >= 0)).toBe(true);
    expect(install < test && test < gate && gate < publish).toBe(true);
    expect(steps[publish]?.run).toBe('npm publish --workspace sdk --provenance --access public');
    expect(steps.some((s) => s.uses?.startsWith('actions/setup-node') === true && s.with?.['registry-url'] === 'https://registry.npmjs.org')).toBe(true);
    // One job: the publish must not run on a different checkout than the one tested.
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
  });

  test('publishes with npm trusted publishing: no token secret, an npm that can exchange the OIDC token', () => {
    const publish = indexOf((s) => s.run?.startsWith('npm publish') === true);
    // The job's OIDC token is the only credential: no step gets a token, and the file names no
    // secret at all (a long-lived NPM_TOKEN coming back fails here).
    expect(steps[publish]?.env).toBeUndefined();
    expect(steps.filter((s) => s.env !== undefined && 'NODE_AUTH_TOKEN' in s.env)).toEqual([]);
    expect(workflowText).not.toMatch(/secrets\./);
    expect(workflowText).not.toMatch(/NPM_TOKEN|NODE_AUTH_TOKEN/);
    // The trusted publisher configured on npmjs.com names this file and the job's environment:
    // docs/releases.md's one-time setup says which, and must follow a rename.
    expect(jobs[0]?.environment).toBe('npm');
    const releasesDoc = readFileSync(join(ROOT, 'docs', 'releases.md'), 'utf8');
    expect(releasesDoc).toContain(`Workflow filename: \`${workflowFile}\``);
    expect(releasesDoc).toContain('Environment name: `npm`');
    // Trusted publishing needs npm 11.5.1 or later; Node 22 bundles npm 10. The Node is the repository's.
    const npmUpgrade = indexOf((s) => s.run?.startsWith('npm install --global npm@') === true);
    expect(npmUpgrade).toBeGreaterThanOrEqual(0);
    expect(npmUpgrade).toBeLessThan(publish);
    const [major = 0, minor = 0, patch = 0] = (steps[npmUpgrade]?.run?.split('@')[1] ?? '').split('.').map(Number);
    expect(major > 11 || (major === 11 && (minor > 5 || (minor === 5 && patch >= 1)))).toBe(true);
    expect(steps.find((s) => s.uses?.startsWith('actions/setup-node') === true)?.with?.['node-version-file']).toBe('.nvmrc');
  });
});
