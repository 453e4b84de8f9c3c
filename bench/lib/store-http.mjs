/**
 * Starts `store-server.mjs` (the local object store over HTTP, in a process of its own) for `dir`;
 * resolves to `{ urlOf(file), stop() }`, where `urlOf` takes a file's absolute path under `dir`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export async function startStoreServer(dir) {
  const server = spawn(process.execPath, [join(fileURLToPath(new URL('.', import.meta.url)), 'store-server.mjs'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    server.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
    server.once('exit', (code) => reject(new Error(`store server exited ${code}`)));
  });
  return {
    urlOf: (file) => `http://127.0.0.1:${port}/${file.slice(dir.length + 1)}`,
    stop: () => server.kill(),
  };
}
