#!/usr/bin/env node
/**
 * Builds the workspace console (console/src, plain TypeScript + the Firebase JS SDK) into one
 * browser bundle served by Hosting at /console/ (hosting/public/console/app.js, generated and
 * git-ignored). Called by the local stack's build (scripts/lib/emulators.mjs: npm start, npm test,
 * the bench) and by the Hosting predeploy in firebase.json.
 *
 * The project id and the emulator ports are baked in from .firebaserc and firebase.json: a console
 * served from 127.0.0.1/localhost talks to the emulators of the same project; anywhere else it reads
 * the deployed project's config from Hosting's reserved /__/firebase/init.json.
 *
 * Usage: buildConsole() or `node scripts/build-console.mjs`.
 */
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGION } from './lib/region.cjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function buildConsole() {
  const firebaseJson = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8'));
  const projectId = JSON.parse(readFileSync(join(ROOT, '.firebaserc'), 'utf8')).projects.default;
  const local = {
    projectId,
    authPort: firebaseJson.emulators.auth.port,
    firestorePort: firebaseJson.emulators.firestore.port,
    functionsPort: firebaseJson.emulators.functions.port,
    // The workspace `npm start` seeds (scripts/lib/seed.mjs), pre-filled on the local sign-in form.
    demoWorkspace: 'demo-workspace',
  };
  // The functions' region, for the URL of the export download (a function the console calls itself).
  const region = REGION;
  await build({
    absWorkingDir: ROOT,
    entryPoints: [join('console', 'src', 'main.ts')],
    outfile: join('hosting', 'public', 'console', 'app.js'),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    tsconfig: join(ROOT, 'console', 'tsconfig.json'),
    define: { __LOCAL_STACK__: JSON.stringify(local), __FUNCTIONS_REGION__: JSON.stringify(region) },
    logLevel: 'warning',
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole();
}
