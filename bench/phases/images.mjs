/**
 * Phase "images" (no emulator): image validation (functions/lib/messages/images.js `inspectImage`)
 * must not grow with the pixel count. Same-size PNG files whose headers claim 16x16, 6000x6000
 * (36 Mpx, the largest square accepted) and 16384x16384 (rejected: over 40 Mpx), timed in small
 * interleaved batches. Accepted ones against the 16x16 one, the rejected one against a 16x16 one
 * rejected for another header reason (a rejection builds an error: that costs the same whatever
 * the pixel count, and is not what is compared). Target: ratio ~1.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';
import { png } from '../lib/images.mjs';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { log, output, pick } from '../lib/session.mjs';
import { median, summarize } from '../lib/stats.mjs';

const { inspectImage } = createRequire(import.meta.url)(join(FUNCTIONS_LIB, 'messages', 'images.js'));

/** A PNG whose IHDR declares an invalid bit depth (rejected as invalid_image, CRC recomputed). */
function badBitDepth(width, height) {
  const bytes = Buffer.from(png(width, height, 64));
  bytes[24] = 3; // bit depth 3 is not valid for RGB
  bytes.writeUInt32BE(crc32(bytes.subarray(12, 29)) >>> 0, 29);
  return bytes;
}

const CASES = {
  '16x16': png(16, 16, 64),
  '6000x6000 (accepted)': png(6000, 6000, 64),
  '16x16 rejected (invalid bit depth)': badBitDepth(16, 16),
  '16384x16384 rejected (image_too_large_dimensions)': png(16384, 16384, 64),
};
/** Which case each one is compared with. */
const BASELINE = {
  '16x16': '16x16',
  '6000x6000 (accepted)': '16x16',
  '16x16 rejected (invalid bit depth)': '16x16 rejected (invalid bit depth)',
  '16384x16384 rejected (image_too_large_dimensions)': '16x16 rejected (invalid bit depth)',
};

function inspect(bytes) {
  try {
    inspectImage(bytes, 'images[0]');
    return 'accepted';
  } catch (err) {
    return err.code;
  }
}

const verdicts = Object.fromEntries(Object.entries(CASES).map(([name, bytes]) => [name, inspect(bytes)]));
const names = Object.keys(CASES);
const BATCH = 200; // calls per timed sample (one call is a few microseconds)
const reps = pick(9, 5);
const samplesPerRep = pick(60, 30);
for (let i = 0; i < 2000; i++) for (const n of names) inspect(CASES[n]); // warm-up (JIT)

const perRep = Object.fromEntries(names.map((n) => [n, []]));
for (let rep = 0; rep < reps; rep++) {
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let s = 0; s < samplesPerRep; s++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(s + k) % names.length];
      const bytes = CASES[name];
      const t0 = performance.now();
      for (let i = 0; i < BATCH; i++) inspect(bytes);
      samples[name].push(((performance.now() - t0) * 1000) / BATCH);
    }
  }
  for (const n of names) perRep[n].push(median(samples[n]));
}
log(`images: ${reps} x ${samplesPerRep} x ${BATCH} calls per header`);

output({
  fileBytes: CASES['16x16'].length,
  cases: Object.fromEntries(
    names.map((n) => {
      const base = perRep[BASELINE[n]];
      return [n, { verdict: verdicts[n], against: BASELINE[n], micros: summarize(perRep[n], 2), ratio: summarize(perRep[n].map((v, i) => v / base[i])) }];
    }),
  ),
});
