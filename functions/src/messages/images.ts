/**
 * Image validation for incoming messages (spec section 8, decisions section 4 "Images").
 *
 * Pure module: no Firebase, no I/O. The format comes from magic bytes only (a declared content
 * type is never trusted), dimensions come from the container/bitstream headers only, and pixels
 * are never decoded, so a 100-byte file that claims 16384x16384 costs a few microseconds.
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
import { createHash } from 'node:crypto';
import { BadRequestError, PayloadTooLargeError } from '../platform/errors';

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
  /** Lowercase hex SHA-256 of the file bytes. */
  sha256: string;
}

interface Dimensions {
  width: number;
  height: number;
}

const FORMAT_LABELS: { readonly [F in ImageFormat]: string } = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };

const ACCEPTED = 'only PNG, JPEG and static (non-animated) WebP images are accepted';

/**
 * Validates one uploaded image and returns its sniffed format, header dimensions, size and SHA-256.
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
    const other = sniffOtherFormat(bytes);
    const what = other === null ? 'not a recognized image format' : `a ${other} image`;
    throw new BadRequestError(IMAGE_ERROR_CODES.unsupported, `${fieldPath}: file is ${what}; ${ACCEPTED}`);
  }

  const reader = new HeaderReader(bytes, fieldPath, format);
  const dims = format === 'png' ? readPng(reader) : format === 'jpeg' ? readJpeg(reader) : readWebp(reader);
  checkDimensions(dims, fieldPath, format);

  return {
    format,
    contentType: IMAGE_CONTENT_TYPES[format],
    width: dims.width,
    height: dims.height,
    bytes: size,
    sha256: createHash('sha256').update(bytes).digest('hex'),
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

/** Only used to make the `unsupported_image` message more helpful. */
function sniffOtherFormat(b: Uint8Array): string | null {
  const head = ascii(b, 0, Math.min(b.length, 12));
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'GIF';
  if (head.startsWith('BM') && b.length >= 14) return 'BMP';
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'TIFF';
  if (head.length >= 12 && head.slice(4, 8) === 'ftyp') {
    const brand = head.slice(8, 12);
    if (brand.startsWith('avi')) return 'AVIF';
    if (brand.startsWith('hei') || brand.startsWith('hev') || brand === 'mif1' || brand === 'msf1') return 'HEIF';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Bounds-checked header reading

class HeaderReader {
  constructor(
    readonly b: Uint8Array,
    private readonly fieldPath: string,
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
    return (
      (this.b[at] as number) * 0x1000000 +
      (((this.b[at + 1] as number) << 16) | ((this.b[at + 2] as number) << 8) | (this.b[at + 3] as number))
    );
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
// PNG: signature, then IHDR must be the first chunk (length 13, valid CRC).

const CRC_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(b: Uint8Array, start: number, end: number): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = (CRC_TABLE[(c ^ (b[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Allowed bit depths per PNG colour type. */
const PNG_BIT_DEPTHS: ReadonlyMap<number, readonly number[]> = new Map([
  [0, [1, 2, 4, 8, 16]],
  [2, [8, 16]],
  [3, [1, 2, 4, 8]],
  [4, [8, 16]],
  [6, [8, 16]],
]);

function readPng(r: HeaderReader): Dimensions {
  // 8 signature + 4 length + 4 type + 13 data + 4 CRC = 33 bytes
  r.need(8, 8);
  if (ascii(r.b, 12, 4) !== 'IHDR') throw r.invalid('the first chunk is not IHDR');
  const length = r.u32be(8);
  if (length !== 13) throw r.invalid(`the IHDR chunk has length ${length}, expected 13`);
  r.need(8, 25);
  const crc = r.u32be(29);
  if (crc32(r.b, 12, 29) !== crc) throw r.invalid('the IHDR chunk has a bad CRC');

  const width = r.u32be(16);
  const height = r.u32be(20);
  if (width > 0x7fffffff || height > 0x7fffffff) throw r.invalid('the IHDR dimensions are out of range');
  const bitDepth = r.u8(24);
  const colorType = r.u8(25);
  const allowed = PNG_BIT_DEPTHS.get(colorType);
  if (allowed === undefined) throw r.invalid(`unknown colour type ${colorType}`);
  if (!allowed.includes(bitDepth)) throw r.invalid(`bit depth ${bitDepth} is not valid for colour type ${colorType}`);
  if (r.u8(26) !== 0 || r.u8(27) !== 0 || r.u8(28) > 1) {
    throw r.invalid('unknown compression, filter or interlace method');
  }
  return { width, height };
}

// ---------------------------------------------------------------------------------------------
// JPEG: walk the marker segments from SOI to the first SOFn frame header.

function isSofMarker(m: number): boolean {
  // SOF0..SOF15 = C0..CF, except DHT (C4), JPG (C8) and DAC (CC).
  return m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
}

function readJpeg(r: HeaderReader): Dimensions {
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
// WebP: RIFF container, chunk walk (headers only), VP8 / VP8L / VP8X dimensions.

const VP8X_FLAG_ANIMATION = 0x02;

function readVp8(r: HeaderReader, data: number, size: number): Dimensions {
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
  return { width: u14le(r, data + 6), height: u14le(r, data + 8) };
}

function u14le(r: HeaderReader, at: number): number {
  return (r.u8(at) | (r.u8(at + 1) << 8)) & 0x3fff;
}

function readVp8l(r: HeaderReader, data: number, size: number): Dimensions {
  // signature 0x2F, then 32 bits LE: width-1 (14), height-1 (14), alpha (1), version (3)
  if (size < 5) throw r.invalid('the VP8L chunk is too short for a header');
  if (r.u8(data) !== 0x2f) throw r.invalid('bad VP8L signature');
  const bits = r.u32le(data + 1);
  if (Math.floor(bits / 0x20000000) !== 0) throw r.invalid('unknown VP8L version');
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

function readWebp(r: HeaderReader): Dimensions {
  const riffSize = r.u32le(4);
  if (riffSize < 4) throw r.invalid(`RIFF size ${riffSize} is too small`);
  const end = 8 + riffSize;
  if (end > r.length) throw r.invalid(`the file is truncated (RIFF size says ${end} bytes, got ${r.length})`);

  let canvas: Dimensions | null = null; // set for VP8X
  let simple: Dimensions | null = null; // set for a simple (VP8 / VP8L first) file
  let bitstream: Dimensions | null = null; // first VP8/VP8L inside a VP8X file
  let first = true;
  let pos = 12;
  while (pos + 8 <= end) {
    const fourcc = ascii(r.b, pos, 4);
    const size = r.u32le(pos + 4);
    const data = pos + 8;
    if (data + size > end) throw r.invalid(`the ${fourcc.trim() || 'chunk'} chunk is truncated`);

    if (fourcc === 'ANIM' || fourcc === 'ANMF') throw r.animated(`${fourcc} chunk`);
    if (first) {
      first = false;
      if (fourcc === 'VP8 ') simple = readVp8(r, data, size);
      else if (fourcc === 'VP8L') simple = readVp8l(r, data, size);
      else if (fourcc === 'VP8X') {
        if (size < 10) throw r.invalid('the VP8X chunk is too short');
        if ((r.u8(data) & VP8X_FLAG_ANIMATION) !== 0) throw r.animated('the VP8X animation flag is set');
        canvas = { width: r.u24le(data + 4) + 1, height: r.u24le(data + 7) + 1 };
      } else {
        throw r.invalid(`the first chunk is ${JSON.stringify(fourcc)}, expected "VP8 ", "VP8L" or "VP8X"`);
      }
    } else if (canvas !== null && bitstream === null && (fourcc === 'VP8 ' || fourcc === 'VP8L')) {
      bitstream = fourcc === 'VP8 ' ? readVp8(r, data, size) : readVp8l(r, data, size);
    }
    pos = data + size + (size & 1); // chunks are padded to an even size
  }

  if (first) throw r.invalid('the file has no chunks');
  if (simple !== null) return simple;
  if (canvas === null || bitstream === null) throw r.invalid('the VP8X file has no VP8 or VP8L image data');
  if (bitstream.width !== canvas.width || bitstream.height !== canvas.height) {
    throw r.invalid(
      `the canvas is ${canvas.width}x${canvas.height} but the image data is ${bitstream.width}x${bitstream.height}`,
    );
  }
  return canvas;
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
