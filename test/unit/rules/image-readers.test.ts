/**
 * functions/src/rules/images.ts reads image headers by hand (it is a pure rules module: no
 * package, no Node API). These tests hold its readers to the implementations they replaced:
 * image-size 2.1 (the dimensions of PNG, VP8 and VP8X, and the names of the formats we refuse)
 * and node:zlib's crc32. Each side runs on the same bytes, so a reader that drifts fails here.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { BMP } from 'image-size/types/bmp';
import { GIF } from 'image-size/types/gif';
import { HEIF } from 'image-size/types/heif';
import { ICNS } from 'image-size/types/icns';
import { ICO } from 'image-size/types/ico';
import { J2C } from 'image-size/types/j2c';
import { JP2 } from 'image-size/types/jp2';
import { JXL } from 'image-size/types/jxl';
import { PNG } from 'image-size/types/png';
import { PSD } from 'image-size/types/psd';
import { SVG } from 'image-size/types/svg';
import { TIFF } from 'image-size/types/tiff';
import { WEBP } from 'image-size/types/webp';
import type { IImage } from 'image-size/types/interface';
import { ApiError } from '../../../functions/src/rules/errors';
import { crc32, inspectImage } from '../../../functions/src/rules/images';
import { png, riffChunk, vp8Data, vp8lData, vp8xData, webpContainer } from '../fixtures/image-bytes';

/** A copy in an ArrayBuffer of its own: image-size's readers read on into the underlying buffer. */
const own = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

// ------------------------------------------------------------------------------------------ CRC

describe('crc32 (PNG chunk CRC) against node:zlib', () => {
  it('matches the check value and edge inputs', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    for (const bytes of [Buffer.alloc(0), Buffer.from([0]), Buffer.alloc(1000, 0xff), Buffer.from('IHDR')]) {
      expect(crc32(bytes)).toBe(zlibCrc32(bytes));
    }
  });

  it('matches on generated inputs (including views into larger buffers)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(8), (bytes, skip) => {
        const view = Buffer.from(bytes).subarray(Math.min(skip, bytes.length));
        expect(crc32(view)).toBe(zlibCrc32(view));
      }),
      { numRuns: 500 },
    );
  });
});

// ----------------------------------------------------------------------------------- dimensions

/** What inspectImage read, whether it accepted the file or named the dimensions in its refusal. */
function ourDimensions(bytes: Uint8Array): { width: number; height: number } {
  try {
    const { width, height } = inspectImage(bytes, 'images[0]');
    return { width, height };
  } catch (err) {
    const m = /image is (\d+)x(\d+) pixels|the canvas is (\d+)x(\d+)|: (\d+)x(\d+) has a zero side/.exec(String((err as Error).message));
    if (m === null) throw err;
    const [w, h] = m.slice(1).filter((x) => x !== undefined);
    return { width: Number(w), height: Number(h) };
  }
}

function imageSizeDimensions(handler: IImage, bytes: Uint8Array): { width: number; height: number } {
  const { width, height } = handler.calculate(own(bytes));
  return { width, height };
}

describe('dimensions: the fields image-size reads', () => {
  it('PNG IHDR width and height (32 bits big-endian)', () => {
    const sides = fc.oneof(fc.integer({ min: 1, max: 16385 }), fc.integer({ min: 1, max: 0x7fffffff }), fc.constantFrom(1, 255, 256, 65535, 65536, 16384));
    fc.assert(
      fc.property(sides, sides, (width, height) => {
        const bytes = png(width, height);
        expect(ourDimensions(bytes)).toEqual(imageSizeDimensions(PNG, bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('VP8 (lossy): 14 bits each, the 2 scale bits masked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff }), (w16, h16) => {
        const data = vp8Data(1, 1);
        data.writeUInt16LE(w16, 6); // scale bits (top 2) may be set
        data.writeUInt16LE(h16, 8);
        const bytes = webpContainer([riffChunk('VP8 ', data)]);
        expect(ourDimensions(bytes)).toEqual(imageSizeDimensions(WEBP, bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('VP8X canvas: width-1 and height-1 in 24 bits little-endian', () => {
    const sides = fc.oneof(fc.integer({ min: 1, max: 16384 }), fc.integer({ min: 1, max: 0x1000000 }), fc.constantFrom(1, 256, 257, 65536, 65537, 0x1000000));
    fc.assert(
      fc.property(sides, sides, fc.boolean(), (width, height, lossless) => {
        // The image data says the same where 14 bits can (else the canvas is refused as a mismatch, naming it).
        const [bw, bh] = [Math.min(width, 16383), Math.min(height, 16383)];
        const image = lossless ? riffChunk('VP8L', vp8lData(bw, bh)) : riffChunk('VP8 ', vp8Data(bw, bh));
        const bytes = webpContainer([riffChunk('VP8X', vp8xData(width, height)), image]);
        expect(ourDimensions(bytes)).toEqual(imageSizeDimensions(WEBP, bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('a VP8X header with a reserved bit set is refused, as image-size refused it', () => {
    for (const flags of [0x01, 0x40, 0x80, 0xc1, 0x3c]) {
      const bytes = webpContainer([riffChunk('VP8X', vp8xData(10, 10, flags)), riffChunk('VP8L', vp8lData(10, 10))]);
      const refusedBy = (() => {
        try {
          WEBP.calculate(own(bytes));
          return false;
        } catch {
          return true;
        }
      })();
      let ours: unknown = null;
      try {
        inspectImage(bytes, 'images[0]');
      } catch (err) {
        ours = err;
      }
      expect([flags, ours instanceof ApiError ? ours.code : 'accepted']).toEqual([flags, refusedBy ? 'invalid_image' : 'accepted']);
    }
  });
});

// -------------------------------------------------------------------------- refused format names

/** The name the module gave before: the first image-size validator (in this order) that takes the bytes. */
const IMAGE_SIZE_ORDER: ReadonlyArray<readonly [string, IImage]> = [
  ['GIF', GIF],
  ['BMP', BMP],
  ['TIFF', TIFF],
  ['HEIF', HEIF],
  ['JPEG 2000', JP2],
  ['JPEG 2000', J2C],
  ['JPEG XL', JXL],
  ['Photoshop', PSD],
  ['ICNS', ICNS],
  ['ICO', ICO],
  ['SVG', SVG],
];

function imageSizeName(bytes: Uint8Array): string | null {
  const input = own(bytes);
  for (const [name, handler] of IMAGE_SIZE_ORDER) {
    let matches = false;
    try {
      matches = handler.validate(input);
    } catch {
      // a read past the end of the input: no match
    }
    if (matches) return name === 'HEIF' && Buffer.from(input.subarray(8, 11)).toString('latin1') === 'avi' ? 'AVIF' : name;
  }
  return null;
}

/** The name in inspectImage's `unsupported_image` message; undefined when the file was not refused as an unknown format. */
function ourName(bytes: Uint8Array): string | null | undefined {
  try {
    inspectImage(bytes, 'images[0]');
    return undefined;
  } catch (err) {
    const m = /: file is (?:a (.+) image|not a recognized image format); only PNG/.exec((err as Error).message);
    return m === null ? undefined : (m[1] ?? null);
  }
}

const box = (type: string, payload: Buffer | string, size?: number): Buffer => {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'latin1');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(size ?? 8 + body.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
};
const ftyp = (brand: string, size?: number) => box('ftyp', `${brand}\0\0\0\0mif1`, size);
const JP2_SIGNATURE = box('jP  ', Buffer.from([0x0d, 0x0a, 0x87, 0x0a]));
const JXL_SIGNATURE = box('JXL ', Buffer.from([0x0d, 0x0a, 0x87, 0x0a]));
const u16le = (...values: number[]) => Buffer.concat(values.map((v) => Buffer.from([v & 0xff, v >> 8])));
const bytes = (...parts: Array<Buffer | string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.isBuffer(p) ? p : Buffer.from(p))));

const SAMPLES: Array<[string, Buffer]> = [
  ['GIF87a', bytes('GIF87a', Buffer.alloc(20))],
  ['GIF89a', bytes('GIF89a', Buffer.alloc(20))],
  ['GIF88a', bytes('GIF88a', Buffer.alloc(20))],
  ['GIF89 (5 bytes)', bytes('GIF89')],
  ['BM', bytes('BM')],
  ['B', bytes('B')],
  ['TIFF II*', bytes('II*\0', Buffer.alloc(8))],
  ['TIFF MM*', bytes([0x4d, 0x4d, 0, 0x2a], Buffer.alloc(8))],
  ['BigTIFF II+', bytes('II+\0', Buffer.alloc(8))],
  ['BigTIFF MM+', bytes([0x4d, 0x4d, 0, 0x2b])],
  ['TIFF cut (3 bytes)', bytes('II*')],
  ['TIFF II\0*', bytes('II\0*')],
  ...['avif', 'mif1', 'msf1', 'heic', 'heix', 'hevc', 'hevx', 'avis', 'mp42', 'isom', 'jp2 '].map(
    (brand): [string, Buffer] => [`ftyp ${brand}`, bytes(ftyp(brand), Buffer.alloc(16))],
  ),
  ['ftyp box longer than the file', ftyp('heic', 400)],
  ['ftyp with its brand cut', ftyp('heic').subarray(0, 10)],
  ['ftyp box of size 4, then a heic ftyp box 8 bytes on', bytes([0, 0, 0, 4], 'ftyp', ftyp('heic'))],
  ['ftyp box of size 4, then a free box and a mif1 ftyp box', bytes([0, 0, 0, 4], 'ftyp', box('free', 'xxxx'), ftyp('mif1'))],
  ['ftyp box of size 0', bytes([0, 0, 0, 0], 'ftyp', 'heic')],
  ['JP2', bytes(JP2_SIGNATURE, ftyp('jp2 '), Buffer.alloc(8))],
  ['JP2 brand jpx', bytes(JP2_SIGNATURE, ftyp('jpx '))],
  ['JP2 signature only', JP2_SIGNATURE],
  ['J2K codestream', bytes([0xff, 0x4f, 0xff, 0x51], Buffer.alloc(40))],
  ['J2K codestream cut (3 bytes)', bytes([0xff, 0x4f, 0xff])],
  ['JPEG XL container', bytes(JXL_SIGNATURE, ftyp('jxl '), box('jxlc', Buffer.from([0xff, 0x0a, 0, 0])))],
  ['JPEG XL codestream (not named)', bytes([0xff, 0x0a], Buffer.alloc(10))],
  ['JPEG XL container with brand jxlx', bytes(JXL_SIGNATURE, ftyp('jxlx'))],
  ['Photoshop', bytes('8BPS', Buffer.alloc(30))],
  ['ICNS', bytes('icns', Buffer.alloc(30))],
  ['ICO', bytes(u16le(0, 1, 1), Buffer.alloc(16))],
  ['ICO with 0x0100 images', bytes(u16le(0, 1, 0x100))],
  ['ICO with no image', bytes(u16le(0, 1, 0), Buffer.alloc(16))],
  ['CUR (not named)', bytes(u16le(0, 2, 1), Buffer.alloc(16))],
  ['ICO cut (5 bytes)', bytes(u16le(0, 1), [1])],
  ['SVG', bytes('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>')],
  ['SVG after an XML declaration', bytes('<?xml version="1.0"?>\n<!-- a > b -->\n<svg\n  viewBox="0 0 1 1">')],
  ['SVG with a BOM', bytes([0xef, 0xbb, 0xbf], '<svg a="1">')],
  ['<svg> without attributes', bytes('<svg>')],
  ['<svg with > inside quotes only, left open', bytes('<svg a=">" b=\'>')],
  ['<svg with > inside quotes, then closed', bytes('<svg a=">" b=\'>\'>')],
  ['<svg with a quote left open', bytes('<svg a="x>')],
  ['<svg beyond the first 1000 bytes', bytes(' '.repeat(1000), '<svg a="1">')],
  ['<svg whose > is the 1000th byte', bytes(' '.repeat(989), '<svg a="1">')],
  ['<svg whose > is the 1001st byte', bytes(' '.repeat(990), '<svg a="1">')],
  ['<svg + NBSP', bytes('<svg\u00a0>')],
  ['<svg + NBSP cut by the 1000-byte window', bytes(' '.repeat(995), '<svg', [0xc2, 0xa0], '>')],
  ['<svg + lone A0 byte', bytes('<svg', [0xa0], '>')],
  ['<svg + U+3000', bytes('<svg\u3000>')],
  ['<svg + U+FEFF', bytes('<svg\ufeffx>')],
  ['<SVG upper case', bytes('<SVG a="1">')],
  ['<svg twice, the first left open', bytes('<svg a="1 <svg b="2">')],
  ['<svgz', bytes('<svgz a="1">')],
  ['BM with an svg tag after', bytes('BM<svg a="1">')],
  ['GIF89a with an svg tag after', bytes('GIF89a<svg a="1">')],
  ['text', bytes('hello, this is not an image')],
  ['RIFF WAVE', bytes('RIFF', [36, 0, 0, 0], 'WAVEfmt ', Buffer.alloc(28))],
  ['random bytes', Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 73 + 19) & 0xff))],
];

describe('names of refused formats: image-size validate order and checks', () => {
  it.each(SAMPLES)('%s', (_name, sample) => {
    const ours = ourName(sample);
    expect(ours).not.toBeUndefined();
    expect(ours).toBe(imageSizeName(sample));
  });

  it('names representative files as before', () => {
    const named = SAMPLES.map(([name, sample]) => [name, ourName(sample)]).filter(([, n]) => n !== null);
    expect(new Set(named.map(([, n]) => n))).toEqual(
      new Set(['GIF', 'BMP', 'TIFF', 'HEIF', 'AVIF', 'JPEG 2000', 'JPEG XL', 'Photoshop', 'ICNS', 'ICO', 'SVG']),
    );
  });

  it('the whitespace after <svg is any character JavaScript calls whitespace, decoded as UTF-8 (every BMP code point)', () => {
    const differ: string[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const sample = Buffer.from(`<svg${String.fromCharCode(cp)}>`, 'utf8');
      if (ourName(sample) !== imageSizeName(sample)) differ.push(cp.toString(16));
    }
    expect(differ).toEqual([]);
  });

  it('... and any byte, or broken sequence, there', () => {
    const differ: string[] = [];
    for (let x = 0; x < 256; x++) {
      for (const sample of [bytes('<svg', [x], '>'), bytes('<svg', [0xe2, 0x80, x], '>'), bytes('<svg', [0xe2, x, 0x80], '>'), bytes('<svg', [0xc2, x], '>')]) {
        if (ourName(sample) !== imageSizeName(sample)) differ.push(sample.toString('hex'));
      }
    }
    expect(differ).toEqual([]);
  });

  it('agree on generated inputs starting like each format', () => {
    const prefixes = [
      'GIF8', 'BM', 'II', 'MM', '<svg', '8BPS', 'icns', '', '\u0000\u0000\u0001\u0000', '\u0000\u0000\u0000\u0018ftyp', '\u0000\u0000\u0000\u0004ftyp',
      '\u0000\u0000\u0000\u000cjP  \r\n\u0087\n', '\u0000\u0000\u0000\u000cJXL \r\n\u0087\n', '\u00ffO\u00ffQ',
    ].map((p) => Buffer.from(p, 'latin1'));
    const tails = fc.array(fc.oneof(fc.constantFrom(...'9a7*+\0 \t\n"\'><>svgftypheicavifmif1jp2 jxl \u00a0'.split('').map((c) => c.charCodeAt(0) & 0xff)), fc.nat(255)), { maxLength: 40 });
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), tails, (prefix, tail) => {
        const sample = Buffer.concat([prefix, Buffer.from(tail)]);
        const ours = ourName(sample);
        fc.pre(ours !== undefined); // not refused as an unknown format (empty, or an accepted format's signature)
        expect(ours).toBe(imageSizeName(sample));
      }),
      { numRuns: 3000 },
    );
  });
});
