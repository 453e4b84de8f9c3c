import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StreamedBodyMismatch, VerifyingPassThrough } from '../../../functions/src/platform/http/streamed-body';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Runs `chunks` through a verifier for `expected`: what came out, and the failure if any. */
async function through(chunks: Buffer[], expected: { length: number; sha256Hex?: string }): Promise<{ out: Buffer; error: Error | null }> {
  const received: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk);
      callback();
    },
  });
  let error: Error | null = null;
  try {
    await pipeline(Readable.from(chunks), new VerifyingPassThrough(expected), sink);
  } catch (err) {
    error = err as Error;
  }
  return { out: Buffer.concat(received), error };
}

const file = Buffer.from('the bytes of a stored file, in several chunks');
const chunks = [file.subarray(0, 10), file.subarray(10, 30), file.subarray(30)];

test('bytes of the announced length and digest pass through unchanged, all of them', async () => {
  const { out, error } = await through(chunks, { length: file.length, sha256Hex: sha256(file) });
  expect(error).toBeNull();
  expect(out.equals(file)).toBe(true);
});

test('without a digest, the length alone decides', async () => {
  const { out, error } = await through(chunks, { length: file.length });
  expect(error).toBeNull();
  expect(out.equals(file)).toBe(true);
});

test('same length, other bytes: fails at the end, and the last chunk never comes out', async () => {
  const altered = Buffer.from(file);
  altered[5] = altered[5]! ^ 0xff;
  const { out, error } = await through([altered.subarray(0, 10), altered.subarray(10, 30), altered.subarray(30)], { length: file.length, sha256Hex: sha256(file) });
  expect(error).toBeInstanceOf(StreamedBodyMismatch);
  expect(out.length).toBeLessThan(file.length);
  expect(out.equals(altered.subarray(0, 30))).toBe(true);
});

test('an alteration in the last chunk alone: nothing of that chunk comes out', async () => {
  const altered = Buffer.from(file);
  altered[file.length - 1] = altered[file.length - 1]! ^ 0xff;
  const { out, error } = await through([altered.subarray(0, 10), altered.subarray(10, 30), altered.subarray(30)], { length: file.length, sha256Hex: sha256(file) });
  expect(error).toBeInstanceOf(StreamedBodyMismatch);
  expect(out.length).toBe(30);
});

test('a single-chunk file that does not match: nothing at all comes out', async () => {
  const { out, error } = await through([Buffer.from('x'.repeat(file.length))], { length: file.length, sha256Hex: sha256(file) });
  expect(error).toBeInstanceOf(StreamedBodyMismatch);
  expect(out.length).toBe(0);
});

test('fewer bytes than announced: fails at the end, short', async () => {
  const { out, error } = await through(chunks.slice(0, 2), { length: file.length, sha256Hex: sha256(file) });
  expect(error).toBeInstanceOf(StreamedBodyMismatch);
  expect(error?.message).toMatch(`read 30 bytes, ${file.length} announced`);
  expect(out.length).toBe(10);
});

test('more bytes than announced: fails as soon as they arrive', async () => {
  const { out, error } = await through([...chunks, Buffer.from('extra')], { length: file.length });
  expect(error).toBeInstanceOf(StreamedBodyMismatch);
  expect(out.length).toBeLessThan(file.length);
});

test('an empty file is an empty body', async () => {
  const empty = Buffer.alloc(0);
  const { out, error } = await through([], { length: 0, sha256Hex: sha256(empty) });
  expect(error).toBeNull();
  expect(out.length).toBe(0);
});

test('a read error on the source fails the whole pipeline, the held chunk stays held', async () => {
  const failing = new Readable({ read() {} });
  const verifier = new VerifyingPassThrough({ length: file.length, sha256Hex: sha256(file) });
  const received: Buffer[] = [];
  const sink = new Writable({ write(chunk: Buffer, _e, cb) { received.push(chunk); cb(); } });
  const done = pipeline(failing, verifier, sink);
  failing.push(file.subarray(0, 10));
  failing.push(file.subarray(10, 30));
  setImmediate(() => failing.destroy(new Error('read failed')));
  await expect(done).rejects.toThrow('read failed');
  expect(Buffer.concat(received).length).toBeLessThanOrEqual(10);
});
