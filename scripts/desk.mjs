#!/usr/bin/env node
/**
 * `npm run desk -- <command> ...`: the operator's and admin's CLI for the local stack (docs/cli.md).
 *
 * The CLI is TypeScript in console/cli that imports the console's own data modules
 * (console/src/thread-data.ts, integrations-data.ts, privacy-data.ts), so it reads and writes
 * exactly what the console does. This launcher bundles it with esbuild (as
 * scripts/build-console.mjs bundles the console; the packages stay external and load from
 * node_modules) into a file named by its content under .local/desk (so parallel runs never write
 * over each other's), and runs it with the local stack's addresses:
 * the emulator variables when set (the test runner sets them), else firebase.json and .firebaserc,
 * the files the stack starts from (scripts/lib/emulators.mjs, as the banner prints them).
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BASE_URL, FUNCTIONS_URL, HOSTS, PROJECT_ID, ROOT } from './lib/emulators.mjs';
import { DEMO } from './lib/seed.mjs';

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: [join('console', 'cli', 'desk.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  packages: 'external',
  tsconfig: join(ROOT, 'console', 'cli', 'tsconfig.json'),
  write: false,
  logLevel: 'warning',
});
const code = result.outputFiles[0].contents;
const dir = join(ROOT, '.local', 'desk');
mkdirSync(dir, { recursive: true });
const bundle = join(dir, `desk-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
if (!existsSync(bundle)) {
  const temporary = `${bundle}.${process.pid}.tmp`;
  writeFileSync(temporary, code);
  renameSync(temporary, bundle);
}
const { main, stackAddresses } = await import(pathToFileURL(bundle).href);

const env = process.env;
const stack = stackAddresses(env, { projectId: PROJECT_ID, authHost: HOSTS.auth, firestoreHost: HOSTS.firestore, baseUrl: BASE_URL, functionsUrl: FUNCTIONS_URL });
const demo = Object.fromEntries(DEMO.users.map((u) => [u.role, { email: u.email, password: u.password }]));
const io = { out: (text) => process.stdout.write(`${text}\n`), err: (text) => process.stderr.write(`${text}\n`) };
const status = await main(process.argv.slice(2), stack, demo, env, io);
// The Firebase app is deleted; exit now rather than wait for the SDK's idle timers.
process.exit(status);
