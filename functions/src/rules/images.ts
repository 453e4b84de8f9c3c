/**
 * Image validation for incoming messages (docs/contract.md#limits, docs/contract.md#incoming-messages).
 *
 * Pure rules module: no Firebase, no I/O, no Node API and no package (it imports only
 * ../platform/errors), so the SDK's test service can run the same code. The format comes from magic
 * bytes only (a declared content type is never trusted), dimensions come from the
 * container/bitstream headers only, and pixels are never decoded, so a 100-byte file that claims
 * 16384x16384 costs a few microseconds. The SHA-256 of the bytes is the caller's
 * (`withSha256` in image-store.ts, with node:crypto).
 *
 * Everything is read here, each rule with a test in test/unit/rules/images.test.ts:
 * - the accepted formats' magic bytes;
 * - integrity: PNG's IHDR must be first, 13 bytes long, with a valid CRC (`crc32` below),
 *   colour type, bit depth and methods; WebP's RIFF size, chunk sizes, VP8 key frame and start
 *   code, VP8L signature and version, VP8X reserved bits; truncation anywhere before the dimensions;
 * - the dimensions: PNG's IHDR width/height, VP8's 14-bit width/height (scale bits masked), VP8L's
 *   14-bit width-1/height-1, VP8X's 24-bit canvas width-1/height-1 (the fields image-size 2.1,
 *   which did this before, reads: the test compares);
 * - animated WebP (the VP8X flag, `ANIM`/`ANMF` chunks) and a VP8X canvas that disagrees with
 *   its image data;
 * - JPEG: the marker walk to the first frame header (any SOFn) and its length checks;
 * - the formats we refuse, named in the `unsupported_image` message (GIF, BMP, TIFF, HEIF/AVIF,
 *   JPEG 2000, JPEG XL, Photoshop, ICNS, ICO, SVG) by the same magic-byte checks image-size's
 *   `validate` functions make (the test compares on samples and on generated inputs);
 * - the limits (sides, pixels, bytes), which are the service's.
 *
 * Accepted: PNG, JPEG (any SOF frame type) and static WebP (lossy `VP8 `, lossless `VP8L`, and
 * extended `VP8X` without the animation flag and without `ANIM`/`ANMF` chunks).
 *
 * Errors (all messages start with the field path that was passed in, e.g. `images[1]`):
 * - 413 `image_too_large`            one image over `IMAGE_LIMITS.maxBytesEach`
 * - 400 `unsupported_image`          not PNG/JPEG/WebP (incl. empty), or animated WebP
 * - 400 `invalid_image`              truncated or corrupt header, or a zero width/height
 * - 400 `image_too_large_dimensions` a side over `maxSide` or more than `maxPixels` pixels
 * - 400 `too_many_images`            more than `maxImages` images in one message
 * - 413 `images_too_large`           all images together over `maxBytesTotal`
 */
import { BadRequestError, PayloadTooLargeError } from './errors';

export const IMAGE_LIMITS = {
  maxImages: 3,
  maxBytesEach: 10 * 1024 * 1024,
  maxBytesTotal: 20 * 1024 * 1024,
  maxSide: 16384,
  maxPixels: 40_000_000,
} as const;

export const IMAGE_ERROR_CODES = {
  unsupported: 'unsupported_image',
  invalid: 'invalid_image',
  tooLargeDimensions: 'image_too_large_dimensions',
  tooLarge: 'image_too_large',
  tooMany: 'too_many_images',
  setTooLarge: 'images_too_large',
} as const;

export type ImageFormat = 'png' | 'jpeg' | 'webp';
export type ImageContentType = 'image/png' | 'image/jpeg' | 'image/webp';

export const IMAGE_CONTENT_TYPES: { readonly [F in ImageFormat]: ImageContentType } = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/** The content types the service accepts (for OpenAPI / docs). */
export const ACCEPTED_IMAGE_CONTENT_TYPES: readonly ImageContentType[] = ['image/png', 'image/jpeg', 'image/webp'];

export interface InspectedImage {
  format: ImageFormat;
  contentType: ImageContentType;
  width: number;
  height: number;
  /** Size of the file in bytes. */
  bytes: number;
}

interface Dimensions {
  width: number;
  height: number;
}

const FORMAT_LABELS: { readonly [F in ImageFormat]: string } = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };

const ACCEPTED = 'only PNG, JPEG and static (non-animated) WebP images are accepted';

/**
 * Validates one uploaded image and returns its sniffed format, header dimensions and size.
 * Throws `PayloadTooLargeError` (413) or `BadRequestError` (400), see the module comment.
 */
export function inspectImage(bytes: Uint8Array, fieldPath: string): InspectedImage {
  const size = bytes.length;
  if (size > IMAGE_LIMITS.maxBytesEach) {
    throw new PayloadTooLargeError(
      IMAGE_ERROR_CODES.tooLarge,
      `${fieldPath}: image is ${size} bytes; the limit is ${IMAGE_LIMITS.maxBytesEach} bytes (10 MB) per image`,
    );
  }
  if (size === 0) {
    throw new BadRequestError(IMAGE_ERROR_CODES.unsupported, `${fieldPath}: image is empty; ${ACCEPTED}`);
  }

  const format = sniffFormat(bytes);
  if (format === null) {
    const other = otherFormatName(bytes);
    const what = other === null ? 'not a recognized image format' : `a ${other} image`;
    throw new BadRequestError(IMAGE_ERROR_CODES.unsupported, `${fieldPath}: file is ${what}; ${ACCEPTED}`);
  }

  const reader = new HeaderReader(bytes, fieldPath, format);
  const dims = format === 'jpeg' ? readJpegFrame(reader) : format === 'png' ? pngSize(reader) : webpSize(reader);
  checkDimensions(dims, fieldPath, format);

  return {
    format,
    contentType: IMAGE_CONTENT_TYPES[format],
    width: dims.width,
    height: dims.height,
    bytes: size,
  };
}

/**
 * Enforces the per-message limits on an already inspected set: at most `maxImages` images
 * (400 `too_many_images`) and at most `maxBytesTotal` bytes together (413 `images_too_large`).
 */
export function assertImageSet(images: readonly Pick<InspectedImage, 'bytes'>[], fieldPath = 'images'): void {
  assertImageCount(images.length, fieldPath);
  let total = 0;
  for (const image of images) total += image.bytes;
  if (total > IMAGE_LIMITS.maxBytesTotal) {
    throw new PayloadTooLargeError(
      IMAGE_ERROR_CODES.setTooLarge,
      `${fieldPath}: images total ${total} bytes; the limit is ${IMAGE_LIMITS.maxBytesTotal} bytes (20 MB) per message`,
    );
  }
}

/** Count check alone, so a streaming parser can reject the 4th file before reading it. */
export function assertImageCount(count: number, fieldPath = 'images'): void {
  if (count > IMAGE_LIMITS.maxImages) {
    throw new BadRequestError(
      IMAGE_ERROR_CODES.tooMany,
      `${fieldPath}: ${count} images; at most ${IMAGE_LIMITS.maxImages} images per message`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Format sniffing

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

function startsWith(b: Uint8Array, sig: readonly number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

function ascii(b: Uint8Array, at: number, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += String.fromCharCode(b[at + i] ?? 0);
  return s;
}

function sniffFormat(b: Uint8Array): ImageFormat | null {
  if (startsWith(b, PNG_SIGNATURE)) return 'png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'webp';
  return null;
}

function startsWithText(b: Uint8Array, text: string, at = 0): boolean {
  if (b.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Big-endian 32 bits at `at`; the caller made sure the 4 bytes are there. */
function u32beAt(b: Uint8Array, at: number): number {
  return ((b[at] as number) * 0x1000000 + (((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number)));
}

// ---------------------------------------------------------------------------------------------
// The formats we refuse, named only to make the `unsupported_image` message helpful. Each check is
// the magic-byte test image-size 2.1's `validate` makes for that format (types/<format>.ts there),
// in its order, except that nothing is read past the end of the input (image-size's readers read
// on into the rest of the underlying buffer, or throw, which we took as "no match").

const TIFF_SIGNATURES: readonly (readonly number[])[] = [
  [0x49, 0x49, 0x2a, 0x00], // II*\0  little-endian TIFF
  [0x4d, 0x4d, 0x00, 0x2a], // MM\0*  big-endian TIFF
  [0x49, 0x49, 0x2b, 0x00], // II+\0  little-endian BigTIFF
  [0x4d, 0x4d, 0x00, 0x2b], // MM\0+  big-endian BigTIFF
];

/** The `ftyp` brands image-size takes for HEIF (AVIF, HEIC and HEIF proper). */
const HEIF_BRANDS: ReadonlySet<string> = new Set(['avif', 'mif1', 'msf1', 'heic', 'heix', 'hevc', 'hevx']);

/**
 * image-size's `findBox`: the offset of the first ISO BMFF box of `type`, walking the boxes from
 * `start` by their sizes (a size under 8 skips 8 bytes; a box that runs past the end stops the walk).
 */
function findBox(b: Uint8Array, type: string, start: number): number | null {
  let at = start;
  while (b.length - at >= 4) {
    const size = u32beAt(b, at);
    if (size < 8) {
      at += 8;
      continue;
    }
    if (b.length - at < 8 || b.length - at < size) return null;
    if (startsWithText(b, type, at + 4)) return at;
    at += size;
  }
  return null;
}

/** The major brand of the `ftyp` box of an ISO BMFF file whose first box is of type `firstBox`. */
function ftypBrand(b: Uint8Array, firstBox: string): string | null {
  if (!startsWithText(b, firstBox, 4)) return null;
  const ftyp = findBox(b, 'ftyp', 0);
  if (ftyp === null || b.length < ftyp + 12) return null;
  return ascii(b, ftyp + 8, 4);
}

/** ICO: reserved 0, type 1 (icon, not cursor), at least one image (16-bit little-endian fields). */
function isIco(b: Uint8Array): boolean {
  return b.length >= 6 && b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0 && (b[4] !== 0 || b[5] !== 0);
}

/** How far image-size looks for an `<svg` tag. */
const SVG_WINDOW = 1000;

/**
 * The UTF-8 encodings of the characters JavaScript's `\s` matches beyond ASCII (U+00A0, U+1680,
 * U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF): image-size decodes the bytes
 * as UTF-8 before its regular expression looks for whitespace after `<svg`.
 */
const UNICODE_SPACES: readonly (readonly number[])[] = [
  [0xc2, 0xa0],
  [0xe1, 0x9a, 0x80],
  ...Array.from({ length: 11 }, (_, i) => [0xe2, 0x80, 0x80 + i]),
  [0xe2, 0x80, 0xa8],
  [0xe2, 0x80, 0xa9],
  [0xe2, 0x80, 0xaf],
  [0xe2, 0x81, 0x9f],
  [0xe3, 0x80, 0x80],
  [0xef, 0xbb, 0xbf],
];

/** The byte length of the whitespace character at `at` (0 if there is none) within `end`. */
function whitespaceAt(b: Uint8Array, at: number, end: number): number {
  const c = b[at];
  if (at >= end || c === undefined) return 0;
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return 1;
  for (const seq of UNICODE_SPACES) if (at + seq.length <= end && startsWith(b, seq, at)) return seq.length;
  return 0;
}

/**
 * SVG: image-size's `/<svg\s([^>"']|"[^"]*"|'[^']*')*>/` on the first 1000 bytes: `<svg`, one
 * whitespace character, then a `>` outside quotes before any quote left open. (Bytes other than
 * `>`, `"` and `'` may be anything: only the whitespace needs decoding.)
 */
function isSvg(b: Uint8Array): boolean {
  const end = Math.min(b.length, SVG_WINDOW);
  for (let i = 0; i + 4 <= end; i++) {
    if (!startsWithText(b, '<svg', i)) continue;
    const space = whitespaceAt(b, i + 4, end);
    if (space === 0) continue;
    for (let j = i + 4 + space; j < end; j++) {
      const c = b[j];
      if (c === 0x3e) return true; // '>'
      if (c === 0x22 || c === 0x27) {
        // a quoted value: skip to its closing quote; a quote left open ends this candidate
        let k = j + 1;
        while (k < end && b[k] !== c) k++;
        if (k >= end) break;
        j = k;
      }
    }
  }
  return false;
}

/** In image-size's order: the first that matches names the file. */
const OTHER_FORMATS: ReadonlyArray<readonly [string, (b: Uint8Array) => boolean]> = [
  ['GIF', (b) => startsWithText(b, 'GIF87a') || startsWithText(b, 'GIF89a')],
  ['BMP', (b) => startsWithText(b, 'BM')],
  ['TIFF', (b) => TIFF_SIGNATURES.some((sig) => startsWith(b, sig))],
  ['HEIF', (b) => HEIF_BRANDS.has(ftypBrand(b, 'ftyp') ?? '')],
  ['JPEG 2000', (b) => ftypBrand(b, 'jP  ') === 'jp2 '], // JP2 file
  ['JPEG 2000', (b) => startsWith(b, [0xff, 0x4f, 0xff, 0x51])], // J2K codestream: SOC + SIZ markers
  ['JPEG XL', (b) => ftypBrand(b, 'JXL ') === 'jxl '], // the container (a bare codestream is not named)
  ['Photoshop', (b) => startsWithText(b, '8BPS')],
  ['ICNS', (b) => startsWithText(b, 'icns')],
  ['ICO', isIco],
  ['SVG', isSvg],
];

function otherFormatName(b: Uint8Array): string | null {
  for (const [name, matches] of OTHER_FORMATS) {
    // HEIF is a container: its brand tells AVIF (an AV1 image) from HEIC/HEIF.
    if (matches(b)) return name === 'HEIF' && ascii(b, 8, 3) === 'avi' ? 'AVIF' : name;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Bounds-checked header reading

class HeaderReader {
  constructor(
    readonly b: Uint8Array,
    readonly fieldPath: string,
    private readonly format: ImageFormat,
  ) {}

  get length(): number {
    return this.b.length;
  }


  /** 400 `invalid_image`. */
  invalid(detail: string): BadRequestError {
    return new BadRequestError(
      IMAGE_ERROR_CODES.invalid,
      `${this.fieldPath}: invalid ${FORMAT_LABELS[this.format]} image: ${detail}`,
    );
  }

  truncated(): BadRequestError {
    return this.invalid('the file is truncated (header ends before the image dimensions)');
  }

  animated(detail: string): BadRequestError {
    return new BadRequestError(
      IMAGE_ERROR_CODES.unsupported,
      `${this.fieldPath}: animated WebP is not supported (${detail}); ${ACCEPTED}`,
    );
  }

  /** Throws `truncated()` unless `n` bytes are available at `at`. */
  need(at: number, n: number): void {
    if (at < 0 || at + n > this.b.length) throw this.truncated();
  }

  u8(at: number): number {
    this.need(at, 1);
    return this.b[at] as number;
  }

  u16be(at: number): number {
    this.need(at, 2);
    return ((this.b[at] as number) << 8) | (this.b[at + 1] as number);
  }

  u32be(at: number): number {
    this.need(at, 4);
    return u32beAt(this.b, at);
  }

  u16le(at: number): number {
    this.need(at, 2);
    return (this.b[at] as number) | ((this.b[at + 1] as number) << 8);
  }

  u24le(at: number): number {
    this.need(at, 3);
    return (this.b[at] as number) | ((this.b[at + 1] as number) << 8) | ((this.b[at + 2] as number) << 16);
  }

  u32le(at: number): number {
    this.need(at, 4);
    return (
      (this.b[at + 3] as number) * 0x1000000 +
      (((this.b[at + 2] as number) << 16) | ((this.b[at + 1] as number) << 8) | (this.b[at] as number))
    );
  }
}

// ---------------------------------------------------------------------------------------------
// PNG: signature, then IHDR must be the first chunk (length 13, valid CRC): width and height are
// its first two fields (32 bits big-endian each).

/** Allowed bit depths per PNG colour type. */
const PNG_BIT_DEPTHS: ReadonlyMap<number, readonly number[]> = new Map([
  [0, [1, 2, 4, 8, 16]],
  [2, [8, 16]],
  [3, [1, 2, 4, 8]],
  [4, [8, 16]],
  [6, [8, 16]],
]);

/** CRC-32 (ISO 3309, reflected polynomial 0xEDB88320), one table entry per byte value. */
const CRC32_TABLE: readonly number[] = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** The CRC-32 of `bytes` as PNG chunks (and zlib) compute it: an unsigned 32-bit number. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC32_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngSize(r: HeaderReader): Dimensions {
  // 8 signature + 4 length + 4 type + 13 data + 4 CRC = 33 bytes
  r.need(8, 8);
  if (ascii(r.b, 12, 4) !== 'IHDR') throw r.invalid('the first chunk is not IHDR');
  const length = r.u32be(8);
  if (length !== 13) throw r.invalid(`the IHDR chunk has length ${length}, expected 13`);
  r.need(8, 25);
  if (crc32(r.b.subarray(12, 29)) !== r.u32be(29)) throw r.invalid('the IHDR chunk has a bad CRC');
  const bitDepth = r.u8(24);
  const colorType = r.u8(25);
  const allowed = PNG_BIT_DEPTHS.get(colorType);
  if (allowed === undefined) throw r.invalid(`unknown colour type ${colorType}`);
  if (!allowed.includes(bitDepth)) throw r.invalid(`bit depth ${bitDepth} is not valid for colour type ${colorType}`);
  if (r.u8(26) !== 0 || r.u8(27) !== 0 || r.u8(28) > 1) {
    throw r.invalid('unknown compression, filter or interlace method');
  }
  const size = { width: r.u32be(16), height: r.u32be(20) };
  if (size.width > 0x7fffffff || size.height > 0x7fffffff) throw r.invalid('the IHDR dimensions are out of range');
  return size;
}

// ---------------------------------------------------------------------------------------------
// JPEG: walk the marker segments from SOI to the first SOFn frame header.

function isSofMarker(m: number): boolean {
  // SOF0..SOF15 = C0..CF, except DHT (C4), JPG (C8) and DAC (CC).
  return m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
}

function readJpegFrame(r: HeaderReader): Dimensions {
  const b = r.b;
  const len = b.length;
  let pos = 2; // after SOI (FF D8)
  // Every iteration advances `pos` by at least one byte, so the walk is linear in the file size.
  for (;;) {
    if (pos >= len) throw r.truncated();
    if (b[pos] !== 0xff) throw r.invalid(`expected a marker at offset ${pos}`);
    // One or more 0xFF: the first is the marker prefix, the rest are fill bytes.
    while (pos < len && b[pos] === 0xff) pos++;
    if (pos >= len) throw r.truncated();
    const marker = b[pos] as number;
    pos++;

    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RST0..7: no length
    if (marker === 0x00) throw r.invalid('stuffed byte (FF 00) outside of entropy-coded data');
    if (marker === 0xd8) throw r.invalid('a second SOI marker before the frame header');
    if (marker === 0xd9) throw r.invalid('end of image (EOI) before any frame header (SOF)');
    if (marker === 0xda) throw r.invalid('scan data (SOS) before any frame header (SOF)');

    const segLen = r.u16be(pos);
    if (segLen < 2) throw r.invalid(`segment FF${marker.toString(16).toUpperCase()} has length ${segLen}`);
    const segEnd = pos + segLen;
    if (segEnd > len) throw r.truncated();

    if (isSofMarker(marker)) {
      // length(2) precision(1) height(2) width(2) components(1), then 3 bytes per component
      if (segLen < 8) throw r.invalid(`frame header is ${segLen} bytes`);
      const height = r.u16be(pos + 3);
      const width = r.u16be(pos + 5);
      const components = r.u8(pos + 7);
      if (components === 0 || segLen !== 8 + 3 * components) {
        throw r.invalid(`frame header length ${segLen} does not match ${components} components`);
      }
      if (height === 0) throw r.invalid('height is 0 (heights defined later by a DNL marker are not supported)');
      return { width, height };
    }
    pos = segEnd;
  }
}

// ---------------------------------------------------------------------------------------------
// WebP: RIFF container, chunk walk (headers only): sizes, key frame and signatures, animation,
// and the dimensions of the VP8 (lossy), VP8L (lossless) and VP8X (canvas) headers.

const VP8X_FLAG_ANIMATION = 0x02;
/** A WebP's first chunk: right after `RIFF<size>WEBP`. */
const FIRST_CHUNK = 12;
/** VP8X flag bits that must be zero (the reserved bits around ICC, alpha, EXIF, XMP and animation). */
const VP8X_RESERVED = 0xc1;

/** A VP8 chunk's frame header, checked before its dimensions are read (`vp8Size`). */
function checkVp8(r: HeaderReader, data: number, size: number): void {
  // frame tag (3 bytes), start code 9D 01 2A, width (14 bits + 2 scale), height (14 bits + 2 scale)
  if (size < 10) throw r.invalid('the VP8 chunk is too short for a frame header');
  const tag = r.u24le(data);
  if ((tag & 1) !== 0) throw r.invalid('the VP8 bitstream does not start with a key frame');
  if (((tag >> 1) & 7) > 3) throw r.invalid('unknown VP8 profile');
  if (((tag >> 4) & 1) === 0) throw r.invalid('the VP8 key frame is not shown');
  if (tag >> 5 >= size) throw r.invalid('the VP8 partition size exceeds the chunk');
  if (r.u8(data + 3) !== 0x9d || r.u8(data + 4) !== 0x01 || r.u8(data + 5) !== 0x2a) {
    throw r.invalid('bad VP8 start code');
  }
}

function vp8lSize(r: HeaderReader, data: number, size: number): Dimensions {
  // signature 0x2F, then 32 bits LE: width-1 (14), height-1 (14), alpha (1), version (3)
  if (size < 5) throw r.invalid('the VP8L chunk is too short for a header');
  if (r.u8(data) !== 0x2f) throw r.invalid('bad VP8L signature');
  const bits = r.u32le(data + 1);
  if (Math.floor(bits / 0x20000000) !== 0) throw r.invalid('unknown VP8L version');
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

/** A checked VP8 chunk's dimensions: 14 bits each, little-endian, after the start code (the top 2 bits are the scale). */
function vp8Size(r: HeaderReader, data: number): Dimensions {
  return { width: r.u16le(data + 6) & 0x3fff, height: r.u16le(data + 8) & 0x3fff };
}

/** A VP8X chunk's canvas: reserved flag bits clear, then width-1 and height-1 in 24 bits little-endian each. */
function vp8xCanvas(r: HeaderReader, data: number): Dimensions {
  // The message is the one image-size's refusal gave when it read the canvas.
  if ((r.u8(data) & VP8X_RESERVED) !== 0) throw r.invalid('Invalid WebP');
  return { width: 1 + r.u24le(data + 4), height: 1 + r.u24le(data + 7) };
}

/** The dimensions of the image data chunk at `chunk` (VP8 or VP8L, checked by the chunk walk). */
function bitstreamSize(r: HeaderReader, chunk: number): Dimensions {
  if (ascii(r.b, chunk, 4) === 'VP8L') return vp8lSize(r, chunk + 8, r.u32le(chunk + 4));
  return vp8Size(r, chunk + 8);
}

function webpSize(r: HeaderReader): Dimensions {
  const riffSize = r.u32le(4);
  if (riffSize < 4) throw r.invalid(`RIFF size ${riffSize} is too small`);
  const end = 8 + riffSize;
  if (end > r.length) throw r.invalid(`the file is truncated (RIFF size says ${end} bytes, got ${r.length})`);

  let extended = false; // the first chunk is VP8X
  let bitstreamChunk: number | null = null; // the first VP8/VP8L chunk inside a VP8X file
  let pos = FIRST_CHUNK;
  while (pos + 8 <= end) {
    const fourcc = ascii(r.b, pos, 4);
    const size = r.u32le(pos + 4);
    const data = pos + 8;
    if (data + size > end) throw r.invalid(`the ${fourcc.trim() || 'chunk'} chunk is truncated`);
    if (fourcc === 'ANIM' || fourcc === 'ANMF') throw r.animated(`${fourcc} chunk`);
    const first = pos === FIRST_CHUNK;
    if (fourcc === 'VP8 ' && (first || (extended && bitstreamChunk === null))) checkVp8(r, data, size);
    else if (fourcc === 'VP8L' && (first || (extended && bitstreamChunk === null))) vp8lSize(r, data, size);
    else if (fourcc === 'VP8X' && first) {
      if (size < 10) throw r.invalid('the VP8X chunk is too short');
      if ((r.u8(data) & VP8X_FLAG_ANIMATION) !== 0) throw r.animated('the VP8X animation flag is set');
    } else if (first) {
      throw r.invalid(`the first chunk is ${JSON.stringify(fourcc)}, expected "VP8 ", "VP8L" or "VP8X"`);
    }
    if (first) extended = fourcc === 'VP8X';
    else if (extended && bitstreamChunk === null && (fourcc === 'VP8 ' || fourcc === 'VP8L')) bitstreamChunk = pos;
    pos = data + size + (size & 1); // chunks are padded to an even size
  }

  if (pos === FIRST_CHUNK) throw r.invalid('the file has no chunks');
  // A simple file's dimensions are its bitstream's; an extended file's are its canvas.
  if (!extended) return bitstreamSize(r, FIRST_CHUNK);
  const size = vp8xCanvas(r, FIRST_CHUNK + 8);
  if (bitstreamChunk === null) throw r.invalid('the VP8X file has no VP8 or VP8L image data');
  const image = bitstreamSize(r, bitstreamChunk);
  if (image.width !== size.width || image.height !== size.height) {
    throw r.invalid(`the canvas is ${size.width}x${size.height} but the image data is ${image.width}x${image.height}`);
  }
  return size;
}

// ---------------------------------------------------------------------------------------------

function checkDimensions({ width, height }: Dimensions, fieldPath: string, format: ImageFormat): void {
  if (width === 0 || height === 0) {
    throw new BadRequestError(
      IMAGE_ERROR_CODES.invalid,
      `${fieldPath}: invalid ${FORMAT_LABELS[format]} image: ${width}x${height} has a zero side`,
    );
  }
  const { maxSide, maxPixels } = IMAGE_LIMITS;
  if (width > maxSide || height > maxSide || width * height > maxPixels) {
    throw new BadRequestError(
      IMAGE_ERROR_CODES.tooLargeDimensions,
      `${fieldPath}: image is ${width}x${height} pixels; the limits are ${maxSide} pixels per side ` +
        `and ${maxPixels} pixels (40 megapixels) in total`,
    );
  }
}
