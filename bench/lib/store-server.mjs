/**
 * The local object store served over HTTP, in a process of its own: `node store-server.mjs <dir>`
 * prints its port, then answers `GET /<object path>` with the object's bytes, streamed from the
 * file, as a storage service serves an object to a client that reads it directly. The baseline
 * of the attachment fetch figure (bench/README.md, 4c).
 */
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const server = http.createServer((req, res) => {
  const target = join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://store').pathname));
  let size;
  try {
    if (!target.startsWith(`${root}/`)) throw new Error('outside the store');
    size = statSync(target).size;
  } catch {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
  createReadStream(target).pipe(res);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
