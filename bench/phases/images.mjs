/**
 * Phase "images" (no emulator): image validation (functions/lib/rules/images.js `inspectImage`,
 * then the SHA-256 its caller adds: image-store.js `withSha256`) must not grow with the pixel count. Same-size PNG files whose headers claim 16x16, 6000x6000
 * (36 Mpx, the largest square accepted) and 16384x16384 (rejected: over 40 Mpx), timed in small
 * interleaved batches. Accepted ones against the 16x16 one, the rejected one against a 16x16 one
 * rejected for another header reason (a rejection builds an error: that costs the same whatever
 * the pixel count, and is not what is compared). Target: ratio ~1.
 *
 * Before/after: the same cases, plus a lossy WebP and a JPEG, timed in the same batches against
 * `inspectImage` as it was at BENCH_IMAGES_BASELINE (default 2a8d1e5: the hand-written header
 * parsers, before image-size read the dimensions; it hashed the file itself), built from git into
 * the bench's build directory. Skipped with a log line when that revision is not in the clone.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import { performance } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';
import { jpeg, png, webpLossy } from '../lib/images.mjs';
import { BUILD_DIR, FUNCTIONS_LIB } from '../lib/build.mjs';
import { ROOT } from '../../scripts/lib/emulators.mjs';
import { log, output, pick } from '../lib/session.mjs';
import { median, summarize } from '../lib/stats.mjs';

const require = createRequire(import.meta.url);
const { inspectImage } = require(join(FUNCTIONS_LIB, 'rules', 'images.js'));
const { withSha256 } = require(join(FUNCTIONS_LIB, 'messages', 'image-store.js'));
/** The service's step per image: the header checks, then the content address (one call before inspectImage stopped hashing). */
const inspectAndHash = (bytes, fieldPath) => withSha256(inspectImage(bytes, fieldPath), bytes);

const BASELINE_REV = process.env.BENCH_IMAGES_BASELINE ?? '2a8d1e5';
/** The baseline's sources: its images module and the errors module it imports, at their paths then. */
const BASELINE_SOURCES = ['functions/src/domain/images.ts', 'functions/src/errors.ts'];

/** `inspectImage` of the baseline revision, bundled from git; null when the revision is not here. */
function baselineInspect(rev) {
  const dir = join(BUILD_DIR, 'images-baseline', rev);
  try {
    for (const path of BASELINE_SOURCES) {
      const file = join(dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, execFileSync('git', ['show', `${rev}:${path}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }));
    }
  } catch {
    log(`images: baseline ${rev} not found in this clone, before/after skipped`);
    return null;
  }
  const outfile = join(dir, 'images.cjs');
  buildSync({ entryPoints: [join(dir, BASELINE_SOURCES[0])], bundle: true, platform: 'node', format: 'cjs', target: 'node22', outfile, logLevel: 'warning' });
  return require(outfile).inspectImage;
}
const before = baselineInspect(BASELINE_REV);

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

function inspectWith(fn, bytes) {
  try {
    fn(bytes, 'images[0]');
    return 'accepted';
  } catch (err) {
    return err.code;
  }
}
const inspect = (bytes) => inspectWith(inspectAndHash, bytes);

/**
 * Before/after cases: the pixel-count ones and one of each other accepted kind, all header-only
 * files (a few hundred bytes: the header work is all there is), and a 1 MB PNG, where hashing the
 * file is most of the work, as it is for a real photo.
 */
const PHOTO = 'PNG 1200x900, 1 MB';
const COMPARED = { ...CASES, 'JPEG 640x480': jpeg(640, 480), 'WebP lossy 640x480': webpLossy(640, 480), [PHOTO]: png(1200, 900, 1_000_000) };

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

/** Per case, after / before, timed in alternating batches of the same bytes. */
function compareWithBaseline() {
  if (before === null) return null;
  const cases = {};
  for (const [name, bytes] of Object.entries(COMPARED)) {
    const verdicts = { after: inspect(bytes), before: inspectWith(before, bytes) };
    const batch = bytes.length > 100_000 ? 2 : BATCH; // hashing 1 MB takes ~2 ms
    const ratios = [];
    const afterMicros = [];
    for (let rep = 0; rep < reps; rep++) {
      const a = [];
      const b = [];
      for (let s = 0; s < samplesPerRep; s++) {
        for (const [fn, into] of s % 2 === 0 ? [[inspectAndHash, a], [before, b]] : [[before, b], [inspectAndHash, a]]) {
          const t0 = performance.now();
          for (let i = 0; i < batch; i++) inspectWith(fn, bytes);
          into.push(((performance.now() - t0) * 1000) / batch);
        }
      }
      ratios.push(median(a) / median(b));
      afterMicros.push(median(a));
    }
    cases[name] = { verdicts, ratio: summarize(ratios), micros: summarize(afterMicros, 2) };
  }
  return { rev: BASELINE_REV, cases };
}
for (let i = 0; i < 2000 && before !== null; i++) for (const [name, bytes] of Object.entries(COMPARED)) if (name !== PHOTO || i < 20) inspectWith(before, bytes); // warm-up (JIT)
const beforeAfter = compareWithBaseline();

output({
  fileBytes: CASES['16x16'].length,
  beforeAfter,
  cases: Object.fromEntries(
    names.map((n) => {
      const base = perRep[BASELINE[n]];
      return [n, { verdict: verdicts[n], against: BASELINE[n], micros: summarize(perRep[n], 2), ratio: summarize(perRep[n].map((v, i) => v / base[i])) }];
    }),
  ),
});
