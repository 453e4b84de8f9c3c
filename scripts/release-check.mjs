#!/usr/bin/env node
/**
 * The SDK release gate: what .github/workflows/release-sdk.yml runs right before `npm publish`.
 * A release is a tag `sdk-v<version>` pushed on a commit whose tests passed; this script refuses
 * to publish unless everything the registry will show agrees with that tag:
 *
 * - the tag is `sdk-v` + sdk/package.json's version, a semver version;
 * - sdk/src/version.ts's SDK_VERSION (sent in the User-Agent) is the same version;
 * - sdk/CHANGELOG.md has a section for that version, and it is not marked unreleased;
 * - sdk/package.json's `repository` names the repository the workflow runs in (npm provenance
 *   links the package to its source and refuses a mismatch), with `directory: "sdk"`;
 * - the packed tarball (`npm pack --dry-run`) holds the entry points its `exports` and `bin`
 *   name, the README and the CHANGELOG, and no tests.
 *
 * WHY a script and not workflow YAML: every rule above is a pure function over the files, unit
 * tested (test/unit/scripts/release-check.test.ts) the way the deploy workflow's lockfile check
 * is; the workflow only calls it. docs/releases.md describes the whole procedure.
 *
 * Usage: node scripts/release-check.mjs --tag sdk-v0.3.0 [--repository owner/name]
 *        (--repository defaults to $GITHUB_REPOSITORY; without either, the repository check is skipped)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SDK = join(ROOT, 'sdk');

/** The tag prefix of SDK releases (the service deploys from main; only the SDK is versioned by tags). */
export const TAG_PREFIX = 'sdk-v';

// semver 2.0.0's version grammar (numbers without leading zeros, optional pre-release and build).
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** The version a release tag names, or null when it is not a release tag. */
export function versionOfTag(tag) {
  if (typeof tag !== 'string' || !tag.startsWith(TAG_PREFIX)) return null;
  const version = tag.slice(TAG_PREFIX.length);
  return SEMVER.test(version) ? version : null;
}

/** The `SDK_VERSION` a version.ts source declares, or null. */
export function sdkVersionOf(versionSource) {
  return /export const SDK_VERSION = '([^']+)';/.exec(versionSource)?.[1] ?? null;
}

/**
 * The changelog's section of `version`: `{ heading, released }`, or null when it has none. A
 * section is a `## <version>` heading; `(unreleased)` anywhere in the heading marks it unreleased.
 */
export function changelogSection(changelog, version) {
  const escaped = version.replace(/[.+]/g, (c) => `\\${c}`);
  const heading = new RegExp(`^## ${escaped}(?![0-9A-Za-z.+-]).*$`, 'm').exec(changelog)?.[0];
  if (heading === undefined) return null;
  return { heading, released: !/unreleased/i.test(heading) };
}

/** The files `exports` and `bin` point at, relative to the package (without their leading `./`). */
export function entryFiles(pkg) {
  const files = new Set();
  const walk = (value) => {
    if (typeof value === 'string') files.add(value.replace(/^\.\//, ''));
    else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) walk(v);
  };
  walk(pkg.exports);
  walk(pkg.bin);
  files.delete('package.json');
  return [...files].sort();
}

/**
 * Every reason not to publish `tag` (empty: publish). Pure: the caller reads the files.
 * `packedFiles` are the tarball's paths (relative to the package); `repository` is `owner/name`
 * or undefined to skip that check.
 */
export function releaseProblems({ tag, pkg, versionSource, changelog, packedFiles, repository }) {
  const problems = [];
  const version = versionOfTag(tag);
  if (version === null) {
    problems.push(`tag ${JSON.stringify(tag)} is not a release tag: expected ${TAG_PREFIX}<semver>, e.g. ${TAG_PREFIX}${pkg.version}`);
    return problems;
  }
  if (pkg.version !== version) problems.push(`sdk/package.json has version ${pkg.version}, the tag says ${version}`);
  const sdkVersion = sdkVersionOf(versionSource);
  if (sdkVersion !== version) problems.push(`sdk/src/version.ts has SDK_VERSION ${String(sdkVersion)}, the tag says ${version}`);
  const section = changelogSection(changelog, version);
  if (section === null) problems.push(`sdk/CHANGELOG.md has no "## ${version}" section`);
  else if (!section.released) problems.push(`sdk/CHANGELOG.md marks ${version} unreleased ("${section.heading}"): date the section first`);
  if (repository !== undefined) {
    const url = typeof pkg.repository === 'object' && pkg.repository !== null ? pkg.repository.url : pkg.repository;
    const expected = `github.com/${repository}`;
    if (typeof url !== 'string' || !url.replace(/\.git$/, '').endsWith(expected)) {
      problems.push(`sdk/package.json's repository.url (${String(url)}) is not ${expected}: npm provenance would refuse the package`);
    }
    if (typeof pkg.repository !== 'object' || pkg.repository?.directory !== 'sdk') problems.push('sdk/package.json\'s repository.directory must be "sdk"');
  }
  const packed = new Set(packedFiles);
  for (const file of [...entryFiles(pkg), 'README.md', 'CHANGELOG.md', 'package.json']) {
    if (!packed.has(file)) problems.push(`the tarball lacks ${file}`);
  }
  const tests = packedFiles.filter((file) => /(^|\/)(test|__tests__)\/|\.test\.[cm]?[jt]s$/.test(file));
  if (tests.length > 0) problems.push(`the tarball holds tests: ${tests.slice(0, 3).join(', ')}`);
  return problems;
}

/** The tarball's file list, from `npm pack --dry-run --json` in sdk/ (`--ignore-scripts`: the list only). */
function packedFilesOfSdk() {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: SDK, encoding: 'utf8' });
  const [report] = JSON.parse(out);
  return report.files.map((f) => f.path);
}

function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const tag = arg('--tag');
  if (tag === undefined) {
    console.error('usage: node scripts/release-check.mjs --tag sdk-v<version> [--repository owner/name]');
    return 2;
  }
  const repository = arg('--repository') ?? (process.env.GITHUB_REPOSITORY || undefined);
  const problems = releaseProblems({
    tag,
    pkg: JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')),
    versionSource: readFileSync(join(SDK, 'src', 'version.ts'), 'utf8'),
    changelog: readFileSync(join(SDK, 'CHANGELOG.md'), 'utf8'),
    packedFiles: packedFilesOfSdk(),
    repository,
  });
  if (problems.length > 0) {
    console.error(`release-check: not publishing ${tag}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  }
  console.log(`release-check: ${tag} is ready to publish`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
