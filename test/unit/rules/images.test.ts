import { createHash } from 'node:crypto';
import { ApiError, BadRequestError, PayloadTooLargeError } from '../../../functions/src/rules/errors';
import {
  ACCEPTED_IMAGE_CONTENT_TYPES,
  IMAGE_CONTENT_TYPES,
  IMAGE_ERROR_CODES,
  IMAGE_LIMITS,
  assertImageCount,
  assertImageSet,
  inspectImage,
  type InspectedImage,
} from '../../../functions/src/rules/images';
import { withSha256 } from '../../../functions/src/messages/image-store';
import {
  JPEG_APP0_JFIF,
  JPEG_DHT,
  JPEG_DQT,
  JPEG_SCAN_AND_EOI,
  PNG_SIGNATURE,
  VP8X_FLAGS,
  jpeg,
  jpegSegment,
  jpegSof,
  png,
  pngChunk,
  riffChunk,
  vp8Data,
  vp8lData,
  vp8xData,
  webpAnimated,
  webpContainer,
  webpExtended,
  webpLossless,
  webpLossy,
} from '../fixtures/image-bytes';

const MB = 1024 * 1024;
/** sha256 of the 65-byte 1x1 PNG below, computed independently (Python hashlib). */
const PNG_1X1_SHA256 = 'e94bd68580b034f70df40abf099d81c4bf4fdee52d0005fe8a49da175c8f9dbc';

/** Runs `fn`, expects an ApiError, and checks its class, status, code and message. */
function expectApiError(
  fn: () => unknown,
  expected: { status: 400 | 413; code: string; message?: Array<string | RegExp> },
): ApiError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(expected.status === 400 ? BadRequestError : PayloadTooLargeError);
  const err = caught as ApiError;
  expect(err.status).toBe(expected.status);
  expect(err.code).toBe(expected.code);
  for (const part of expected.message ?? []) expect(err.message).toMatch(part);
  return err;
}

const invalid = (fieldPath = 'images[0]') => ({ status: 400 as const, code: 'invalid_image', message: [fieldPath] });
const unsupported = (fieldPath = 'images[0]') => ({ status: 400 as const, code: 'unsupported_image', message: [fieldPath] });
const tooBig = { status: 400 as const, code: 'image_too_large_dimensions', message: ['images[0]', '16384', '40000000'] };

function replace(buf: Buffer, at: number, bytes: number[]): Buffer {
  const copy = Buffer.from(buf);
  bytes.forEach((b, i) => (copy[at + i] = b));
  return copy;
}

describe('IMAGE_LIMITS and constants', () => {
  it('match spec section 8', () => {
    expect(IMAGE_LIMITS).toEqual({
      maxImages: 3,
      maxBytesEach: 10 * 1024 * 1024,
      maxBytesTotal: 20 * 1024 * 1024,
      maxSide: 16384,
      maxPixels: 40_000_000,
    });
    expect(IMAGE_CONTENT_TYPES).toEqual({ png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' });
    expect([...ACCEPTED_IMAGE_CONTENT_TYPES].sort()).toEqual(['image/jpeg', 'image/png', 'image/webp']);
    expect(Object.values(IMAGE_ERROR_CODES).every((c) => /^[a-z][a-z0-9_]*$/.test(c))).toBe(true);
  });
});

describe('PNG', () => {
  it('reads format, content type, dimensions and size of a minimal PNG (the caller adds the sha256: withSha256)', () => {
    const bytes = png(640, 480);
    const result = inspectImage(bytes, 'images[0]');
    expect(result).toEqual<InspectedImage>({
      format: 'png',
      contentType: 'image/png',
      width: 640,
      height: 480,
      bytes: bytes.length,
    });
    expect(withSha256(result, bytes)).toEqual({ ...result, sha256: createHash('sha256').update(bytes).digest('hex') });
  });

  it('withSha256 computes the sha256 of the exact bytes (fixed vector)', () => {
    // Signature + IHDR(1x1, RGBA 8-bit) + IDAT + IEND, as built by the fixture; the digest was
    // computed independently (Python zlib + hashlib).
    const bytes = png(1, 1);
    expect(bytes.toString('hex')).toBe(
      '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
        '1f15c4890000000849444154789c030000000001480689d2' +
        '0000000049454e44ae426082',
    );
    expect(withSha256(inspectImage(bytes, 'images[0]'), bytes).sha256).toBe(PNG_1X1_SHA256);
    // one flipped byte after the header changes the digest
    const other = replace(bytes, bytes.length - 13, [0x02]);
    expect(withSha256(inspectImage(other, 'images[0]'), other).sha256).not.toBe(PNG_1X1_SHA256);
  });

  it.each([
    [0, 1],
    [0, 16],
    [2, 16],
    [3, 1],
    [3, 8],
    [4, 8],
    [6, 16],
  ])('accepts colour type %i with bit depth %i', (colorType, bitDepth) => {
    expect(inspectImage(png(3, 2, { colorType, bitDepth }), 'images[0]')).toMatchObject({ width: 3, height: 2 });
  });

  it.each([
    [2, 4],
    [3, 16],
    [6, 1],
    [1, 8],
    [5, 8],
    [7, 8],
  ])('rejects colour type %i with bit depth %i as invalid_image', (colorType, bitDepth) => {
    expectApiError(() => inspectImage(png(3, 2, { colorType, bitDepth }), 'images[0]'), invalid());
  });

  it('rejects a bad IHDR CRC', () => {
    const bytes = png(10, 10);
    const corrupted = replace(bytes, 29, [(bytes[29] as number) ^ 0xff]);
    expectApiError(() => inspectImage(corrupted, 'images[2]'), { ...invalid('images[2]'), message: ['images[2]', /CRC/] });
  });

  it('rejects dimensions edited without fixing the CRC', () => {
    const bytes = png(10, 10);
    expectApiError(() => inspectImage(replace(bytes, 16, [0, 0, 0, 5]), 'images[0]'), invalid());
  });

  it('requires IHDR as the first chunk', () => {
    const ihdr = Buffer.concat([Buffer.from([0, 0, 0, 4, 0, 0, 0, 4]), Buffer.from([8, 6, 0, 0, 0])]);
    const bytes = Buffer.concat([PNG_SIGNATURE, pngChunk('tEXt', Buffer.from('a\0b')), pngChunk('IHDR', ihdr)]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), { ...invalid(), message: ['images[0]', /IHDR/] });
  });

  it('requires an IHDR length of 13', () => {
    const ihdr = Buffer.concat([Buffer.from([0, 0, 0, 4, 0, 0, 0, 4]), Buffer.from([8, 6, 0, 0, 0, 0])]);
    const bytes = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), invalid());
  });

  it('rejects unknown compression, filter or interlace methods', () => {
    for (const [at, value] of [
      [26, 1],
      [27, 1],
      [28, 2],
    ] as const) {
      const ihdr = Buffer.from([0, 0, 0, 4, 0, 0, 0, 4, 8, 6, 0, 0, 0]);
      ihdr[at - 16] = value;
      const bytes = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]);
      expectApiError(() => inspectImage(bytes, 'images[0]'), invalid());
    }
    // interlace method 1 (Adam7) is valid
    const adam7 = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', Buffer.from([0, 0, 0, 4, 0, 0, 0, 4, 8, 6, 0, 0, 1]))]);
    expect(inspectImage(adam7, 'images[0]')).toMatchObject({ format: 'png', width: 4, height: 4 });
  });

  it.each([
    [0, 10],
    [10, 0],
    [0, 0],
  ])('rejects %ix%i as invalid_image (zero side)', (w, h) => {
    expectApiError(() => inspectImage(png(w, h), 'images[0]'), invalid());
  });

  it('rejects widths over 2^31-1 (not valid PNG) as invalid_image', () => {
    expectApiError(() => inspectImage(png(0x80000000, 1), 'images[0]'), invalid());
  });
});

describe('JPEG', () => {
  it('reads the frame header of a baseline JPEG (APP0 JFIF + SOF0), height before width', () => {
    const bytes = jpeg(800, 600);
    expect(inspectImage(bytes, 'images[0]')).toEqual<InspectedImage>({
      format: 'jpeg',
      contentType: 'image/jpeg',
      width: 800,
      height: 600,
      bytes: bytes.length,
    });
  });

  it('reads a progressive JPEG (SOF2)', () => {
    expect(inspectImage(jpeg(1024, 77, { sof: 0xc2 }), 'images[0]')).toMatchObject({
      format: 'jpeg',
      width: 1024,
      height: 77,
    });
  });

  it.each([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf].map((m) => [m.toString(16), m] as const))(
    'accepts SOF marker 0x%s',
    (_hex, sof) => {
      expect(inspectImage(jpeg(33, 44, { sof }), 'images[0]')).toMatchObject({ width: 33, height: 44 });
    },
  );

  it.each([0xc4, 0xc8, 0xcc].map((m) => [m.toString(16), m] as const))(
    'does not take marker 0x%s (DHT/JPG/DAC) for a frame header',
    (_hex, marker) => {
    // A segment with that marker shaped like a 1x1 frame header, then the real SOF0 (50x60).
    const before = Buffer.concat([JPEG_APP0_JFIF, jpegSof(marker, 1, 1)]);
    expect(inspectImage(jpeg(50, 60, { before }), 'images[0]')).toMatchObject({ width: 50, height: 60 });
    // Without a real SOF afterwards, the walk reaches SOS and rejects the file.
    const noFrame = Buffer.concat([Buffer.from([0xff, 0xd8]), JPEG_APP0_JFIF, jpegSof(marker, 1, 1), JPEG_SCAN_AND_EOI]);
    expectApiError(() => inspectImage(noFrame, 'images[0]'), invalid());
    },
  );

  it('skips fill bytes and standalone markers (TEM, RSTn) before the frame header', () => {
    const before = Buffer.concat([
      Buffer.from([0xff, 0xff, 0xff]), // fill bytes before APP0's marker
      JPEG_APP0_JFIF,
      Buffer.from([0xff, 0x01]), // TEM
      Buffer.from([0xff, 0xd0, 0xff, 0xff, 0xd7]), // RST0, fill, RST7
      JPEG_DQT,
      Buffer.from([0xff, 0xff]), // fill before DHT's marker
      JPEG_DHT,
    ]);
    expect(inspectImage(jpeg(321, 123, { before }), 'images[0]')).toMatchObject({ width: 321, height: 123 });
  });

  it('walks past large APPn segments (EXIF, ICC) to the frame header', () => {
    const exif = jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), Buffer.alloc(65000, 0xab)]));
    const icc = jpegSegment(0xe2, Buffer.concat([Buffer.from('ICC_PROFILE\0'), Buffer.alloc(60000, 0xff)]));
    const before = Buffer.concat([exif, icc, exif, JPEG_DQT, JPEG_DHT]);
    expect(inspectImage(jpeg(4000, 3000, { before }), 'images[0]')).toMatchObject({ width: 4000, height: 3000 });
  });

  it('rejects scan data (SOS) before the frame header', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xd8]), JPEG_APP0_JFIF, JPEG_SCAN_AND_EOI]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), { ...invalid(), message: ['images[0]', /SOS/] });
  });

  it('rejects EOI before the frame header', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xd8]), JPEG_APP0_JFIF, Buffer.from([0xff, 0xd9])]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), { ...invalid(), message: ['images[0]', /EOI/] });
  });

  it('rejects garbage where a marker is expected', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xd8]), JPEG_APP0_JFIF, Buffer.from([0x00, 0x11]), jpegSof(0xc0, 5, 5)]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), invalid());
  });

  it('rejects a segment length below 2 and a stuffed FF00 marker', () => {
    const len0 = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x00]), jpegSof(0xc0, 5, 5)]);
    expectApiError(() => inspectImage(len0, 'images[0]'), invalid());
    const len1 = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01]), jpegSof(0xc0, 5, 5)]);
    expectApiError(() => inspectImage(len1, 'images[0]'), invalid());
    const stuffed = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0x00]), jpegSof(0xc0, 5, 5)]);
    expectApiError(() => inspectImage(stuffed, 'images[0]'), invalid());
  });

  it('rejects a frame header whose length does not match its component count', () => {
    const sof = jpegSof(0xc0, 5, 5);
    const bad = Buffer.concat([Buffer.from([0xff, 0xd8]), replace(sof, 9, [2]), JPEG_SCAN_AND_EOI]); // says 2 components, has 3
    expectApiError(() => inspectImage(bad, 'images[0]'), invalid());
    const short = Buffer.concat([Buffer.from([0xff, 0xd8]), jpegSegment(0xc0, Buffer.from([8, 0, 5, 0, 5]))]);
    expectApiError(() => inspectImage(short, 'images[0]'), invalid());
  });

  it('rejects height 0 (DNL-defined) and width 0 as invalid_image', () => {
    expectApiError(() => inspectImage(jpeg(100, 0), 'images[0]'), invalid());
    expectApiError(() => inspectImage(jpeg(0, 100), 'images[0]'), invalid());
  });

  it('a file of only FF bytes after SOI ends safely as invalid_image', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(100_000, 0xff)]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), invalid());
  });
});

describe('WebP', () => {
  it('reads a simple lossy WebP (VP8)', () => {
    const bytes = webpLossy(300, 200);
    expect(inspectImage(bytes, 'images[0]')).toEqual<InspectedImage>({
      format: 'webp',
      contentType: 'image/webp',
      width: 300,
      height: 200,
      bytes: bytes.length,
    });
  });

  it('reads a simple lossless WebP (VP8L)', () => {
    expect(inspectImage(webpLossless(1, 16384), 'images[0]')).toMatchObject({ format: 'webp', width: 1, height: 16384 });
    expect(inspectImage(webpLossless(257, 3), 'images[0]')).toMatchObject({ width: 257, height: 3 });
  });

  it('reads an extended static WebP (VP8X) with VP8 or VP8L data and metadata chunks', () => {
    expect(inspectImage(webpExtended(1920, 1080), 'images[0]')).toMatchObject({ format: 'webp', width: 1920, height: 1080 });
    expect(inspectImage(webpExtended(50, 70, { lossless: true }), 'images[0]')).toMatchObject({ width: 50, height: 70 });
    const withMeta = webpExtended(64, 48, {
      flags: VP8X_FLAGS.icc | VP8X_FLAGS.alpha | VP8X_FLAGS.exif | VP8X_FLAGS.xmp,
      extra: [riffChunk('ICCP', Buffer.alloc(33, 1)), riffChunk('ALPH', Buffer.alloc(5, 0))],
    });
    expect(inspectImage(withMeta, 'images[0]')).toMatchObject({ width: 64, height: 48, bytes: withMeta.length });
  });

  it('rejects animated WebP (VP8X animation flag) as unsupported_image', () => {
    expectApiError(() => inspectImage(webpAnimated(100, 100), 'images[1]'), {
      status: 400,
      code: 'unsupported_image',
      message: ['images[1]', /animated WebP is not supported/],
    });
  });

  it('rejects a VP8X file with the animation flag even without ANIM/ANMF chunks', () => {
    const flagOnly = webpExtended(20, 20, { flags: VP8X_FLAGS.animation });
    expectApiError(() => inspectImage(flagOnly, 'images[0]'), { ...unsupported(), message: [/animation flag/] });
  });

  it('rejects ANIM/ANMF chunks even when the animation flag is not set', () => {
    expectApiError(() => inspectImage(webpAnimated(100, 100, { flag: false }), 'images[0]'), {
      ...unsupported(),
      message: ['images[0]', /animated/, /ANIM/],
    });
    const anmfOnly = webpContainer([
      riffChunk('VP8X', vp8xData(10, 10)),
      riffChunk('ANMF', Buffer.concat([Buffer.alloc(16), riffChunk('VP8 ', vp8Data(10, 10))])),
    ]);
    expectApiError(() => inspectImage(anmfOnly, 'images[0]'), { ...unsupported(), message: [/ANMF/] });
    // A simple VP8 file followed by an ANIM chunk is not accepted either.
    const trailingAnim = webpContainer([riffChunk('VP8 ', vp8Data(10, 10)), riffChunk('ANIM', Buffer.alloc(6))]);
    expectApiError(() => inspectImage(trailingAnim, 'images[0]'), unsupported());
  });

  it('rejects a VP8X file without image data', () => {
    const bytes = webpContainer([riffChunk('VP8X', vp8xData(10, 10)), riffChunk('EXIF', Buffer.alloc(4))]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), invalid());
  });

  it('rejects a VP8X canvas that does not match the image data', () => {
    const bytes = webpExtended(100, 100, { bitstream: { width: 16000, height: 16000 } });
    expectApiError(() => inspectImage(bytes, 'images[0]'), { ...invalid(), message: [/100x100/, /16000x16000/] });
  });

  it('rejects an unknown first chunk and a RIFF without chunks', () => {
    const bytes = webpContainer([riffChunk('EXIF', Buffer.alloc(4)), riffChunk('VP8 ', vp8Data(10, 10))]);
    expectApiError(() => inspectImage(bytes, 'images[0]'), invalid());
    expectApiError(() => inspectImage(webpContainer([]), 'images[0]'), invalid());
  });

  it('rejects corrupt VP8 frame headers (not a key frame, invisible, bad start code, bad partition size)', () => {
    const data = vp8Data(10, 10);
    const variants = [
      replace(data, 0, [(data[0] as number) | 1]), // inter frame
      replace(data, 0, [(data[0] as number) & ~0x10]), // show_frame = 0
      replace(data, 0, [(data[0] as number) | (7 << 1)]), // profile 7
      replace(data, 3, [0x9d, 0x01, 0x2b]), // start code
      replace(data, 0, [0x10, 0xff, 0xff]), // partition size far beyond the chunk
    ];
    for (const v of variants) {
      expectApiError(() => inspectImage(webpContainer([riffChunk('VP8 ', v)]), 'images[0]'), invalid());
    }
  });

  it('rejects corrupt VP8L headers (signature, version)', () => {
    const data = vp8lData(10, 10);
    expectApiError(() => inspectImage(webpContainer([riffChunk('VP8L', replace(data, 0, [0x2e]))]), 'images[0]'), invalid());
    const v1 = replace(data, 4, [(data[4] as number) | 0x20]);
    expectApiError(() => inspectImage(webpContainer([riffChunk('VP8L', v1)]), 'images[0]'), invalid());
  });

  it('rejects VP8 with a zero side', () => {
    expectApiError(() => inspectImage(webpLossy(0, 10), 'images[0]'), invalid());
    expectApiError(() => inspectImage(webpLossy(10, 0), 'images[0]'), invalid());
  });
});

describe('the header readers at their edges (images.ts reads PNG, VP8, VP8L and VP8X itself)', () => {
  it('1x1 in every format', () => {
    for (const bytes of [png(1, 1), jpeg(1, 1), webpLossy(1, 1), webpLossless(1, 1), webpExtended(1, 1), webpExtended(1, 1, { lossless: true })]) {
      expect(inspectImage(bytes, 'images[0]')).toMatchObject({ width: 1, height: 1, bytes: bytes.length });
    }
  });

  it('PNG: 16384 on a side accepted, 16385 image_too_large_dimensions (32-bit big-endian fields)', () => {
    expect(inspectImage(png(16384, 2441), 'images[0]')).toMatchObject({ width: 16384, height: 2441 });
    expect(inspectImage(png(2441, 16384), 'images[0]')).toMatchObject({ width: 2441, height: 16384 });
    expectApiError(() => inspectImage(png(16385, 16385), 'images[0]'), { ...tooBig, message: [...tooBig.message, '16385x16385'] });
    expectApiError(() => inspectImage(png(0x01000001, 1), 'images[0]'), { ...tooBig, message: [...tooBig.message, '16777217x1'] });
  });

  it('VP8: 14-bit sides (16383 at most), the 2 scale bits ignored', () => {
    expect(inspectImage(webpLossy(16383, 2441), 'images[0]')).toMatchObject({ width: 16383, height: 2441 });
    const data = vp8Data(300, 200);
    data[7] = (data[7] as number) | 0xc0; // horizontal scale 3
    data[9] = (data[9] as number) | 0x40; // vertical scale 1
    expect(inspectImage(webpContainer([riffChunk('VP8 ', data)]), 'images[0]')).toMatchObject({ width: 300, height: 200 });
  });

  it('VP8L: 16384 on a side accepted (14 bits of width-1), over 40 megapixels refused', () => {
    expect(inspectImage(webpLossless(16384, 2441), 'images[0]')).toMatchObject({ width: 16384, height: 2441 });
    expectApiError(() => inspectImage(webpLossless(16384, 2442), 'images[0]'), { ...tooBig, message: [...tooBig.message, '16384x2442'] });
  });

  it('VP8X: the canvas is width-1 and height-1 in 24 bits little-endian', () => {
    expect(inspectImage(webpExtended(16384, 2, { lossless: true }), 'images[0]')).toMatchObject({ width: 16384, height: 2 });
    // Canvases no bitstream can match: the message names the canvas as read (all 24 bits).
    for (const [w, h] of [
      [16385, 1],
      [65537, 1],
      [1, 0x1000000],
    ] as const) {
      const bytes = webpContainer([riffChunk('VP8X', vp8xData(w, h)), riffChunk('VP8L', vp8lData(1, 1))]);
      expectApiError(() => inspectImage(bytes, 'images[0]'), { ...invalid(), message: [`the canvas is ${w}x${h}`] });
    }
  });

  it('VP8X: a reserved flag bit set is invalid_image', () => {
    for (const reserved of [0x01, 0x40, 0x80]) {
      expectApiError(() => inspectImage(webpExtended(10, 10, { flags: reserved, lossless: true }), 'images[0]'), invalid());
    }
  });

  it('animated WebP is unsupported_image at any size, 1x1 included', () => {
    for (const [w, h] of [
      [1, 1],
      [16384, 16384],
      [16385, 16385],
    ] as const) {
      expectApiError(() => inspectImage(webpAnimated(w, h), 'images[0]'), { ...unsupported(), message: [/animated WebP/] });
    }
  });
});

describe('unsupported formats (magic bytes only)', () => {
  const cases: Array<[string, Buffer, RegExp | null]> = [
    ['empty', Buffer.alloc(0), /empty/],
    ['GIF89a', Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0, 0, 0]), Buffer.alloc(20)]), /GIF/],
    ['GIF87a', Buffer.concat([Buffer.from('GIF87a'), Buffer.alloc(20)]), /GIF/],
    ['BMP', Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]), /BMP/],
    ['TIFF', Buffer.concat([Buffer.from('II*\0'), Buffer.alloc(20)]), /TIFF/],
    ['AVIF', Buffer.concat([Buffer.from([0, 0, 0, 0x1c]), Buffer.from('ftypavif'), Buffer.alloc(20)]), /AVIF/],
    ['random bytes', Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 73 + 19) & 0xff)), null],
    ['text', Buffer.from('hello, this is not an image'), null],
    ['RIFF WAVE', Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(28)]), null],
    ['PNG signature with one wrong byte', replace(png(1, 1), 4, [0x0a]), null],
    ['JPEG SOI without a marker after it', Buffer.from([0xff, 0xd8, 0x00, 0x10, 0x4a]), null],
  ];

  it.each(cases)('%s -> 400 unsupported_image', (_name, bytes, detail) => {
    const err = expectApiError(() => inspectImage(bytes, 'images[2]'), {
      ...unsupported('images[2]'),
      message: ['images[2]', /PNG, JPEG and static/],
    });
    if (detail !== null) expect(err.message).toMatch(detail);
  });
});

describe('truncated files', () => {
  function expectCutsRejected(full: Buffer, from: number, to: number): void {
    for (let cut = from; cut < to; cut++) {
      const err = expectApiError(() => inspectImage(full.subarray(0, cut), 'images[0]'), invalid());
      expect(err.message).toMatch(/PNG|JPEG|WebP/);
    }
  }

  it('PNG cut anywhere inside the signature is unsupported, inside the IHDR chunk invalid', () => {
    const full = png(100, 50);
    for (let cut = 1; cut < 8; cut++) {
      expectApiError(() => inspectImage(full.subarray(0, cut), 'images[0]'), unsupported());
    }
    expectCutsRejected(full, 8, 33); // 8 signature + 25 IHDR chunk bytes
    expect(inspectImage(full.subarray(0, 33), 'images[0]')).toMatchObject({ width: 100, height: 50 });
  });

  it('JPEG cut anywhere before the end of the frame header is invalid', () => {
    const full = jpeg(100, 50);
    const sofEnd = 2 + JPEG_APP0_JFIF.length + JPEG_DQT.length + JPEG_DHT.length + jpegSof(0xc0, 1, 1).length;
    expectCutsRejected(full, 3, sofEnd);
    expect(inspectImage(full.subarray(0, sofEnd), 'images[0]')).toMatchObject({ width: 100, height: 50 });
  });

  it.each([
    ['lossy', webpLossy(100, 50)],
    ['lossless', webpLossless(100, 50)],
    ['extended', webpExtended(100, 50)],
  ])('WebP (%s) cut anywhere after the RIFF header is invalid', (_name, full) => {
    expectCutsRejected(full, 12, full.length);
    expect(inspectImage(full, 'images[0]')).toMatchObject({ width: 100, height: 50 });
  });

  it('WebP whose RIFF size was fixed up but whose chunk is cut short is invalid', () => {
    // VP8 chunk claims 18 bytes but only 6 follow; RIFF size matches the file.
    const chunk = riffChunk('VP8 ', vp8Data(10, 10)).subarray(0, 8 + 6);
    expectApiError(() => inspectImage(webpContainer([chunk]), 'images[0]'), invalid());
    // VP8 chunk that is honestly only 6 bytes long (too short for a frame header)
    expectApiError(() => inspectImage(webpContainer([riffChunk('VP8 ', vp8Data(10, 10).subarray(0, 6))]), 'images[0]'), invalid());
    expectApiError(() => inspectImage(webpContainer([riffChunk('VP8L', vp8lData(10, 10).subarray(0, 4))]), 'images[0]'), invalid());
    expectApiError(() => inspectImage(webpContainer([riffChunk('VP8X', vp8xData(10, 10).subarray(0, 8))]), 'images[0]'), invalid());
  });
});

describe('declared content type is not trusted', () => {
  // inspectImage takes no declared type at all: whatever the client said (file name, part
  // content type), the result comes from the bytes.
  it.each([
    ['a PNG declared as image/jpeg ("photo.jpg")', png(12, 34), 'png', 'image/png'],
    ['a JPEG declared as image/png', jpeg(12, 34), 'jpeg', 'image/jpeg'],
    ['a WebP declared as image/gif', webpLossy(12, 34), 'webp', 'image/webp'],
  ])('%s is detected from its magic bytes', (_name, bytes, format, contentType) => {
    expect(inspectImage(bytes, 'images[0]')).toMatchObject({ format, contentType, width: 12, height: 34 });
  });

  it('a GIF declared as image/png is still rejected', () => {
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(30)]);
    expectApiError(() => inspectImage(gif, 'images[0]'), unsupported());
  });
});

describe('dimension limits (headers only, never decoded)', () => {
  it('rejects a decompression-bomb PNG header (huge dimensions, tiny file) quickly', () => {
    const bomb = png(100_000, 100_000);
    expect(bomb.length).toBeLessThan(100);
    const started = process.hrtime.bigint();
    expectApiError(() => inspectImage(bomb, 'images[0]'), { ...tooBig, message: [...tooBig.message, '100000x100000'] });
    expectApiError(() => inspectImage(png(0x7fffffff, 0x7fffffff), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(png(16384, 16384), 'images[0]'), tooBig);
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(elapsedMs).toBeLessThan(50);
  });

  it('rejects huge JPEG and WebP headers too', () => {
    expectApiError(() => inspectImage(jpeg(65535, 65535), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(webpExtended(16384, 16384, { lossless: true }), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(webpLossless(16384, 16384), 'images[0]'), tooBig);
  });

  it('a side of 16384 is accepted, 16385 rejected (each format)', () => {
    expect(inspectImage(png(16384, 1), 'images[0]')).toMatchObject({ width: 16384, height: 1 });
    expect(inspectImage(png(1, 16384), 'images[0]')).toMatchObject({ width: 1, height: 16384 });
    expectApiError(() => inspectImage(png(16385, 1), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(png(1, 16385), 'images[0]'), tooBig);

    expect(inspectImage(jpeg(16384, 2), 'images[0]')).toMatchObject({ width: 16384, height: 2 });
    expectApiError(() => inspectImage(jpeg(16385, 2), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(jpeg(2, 16385), 'images[0]'), tooBig);

    expect(inspectImage(webpLossless(16384, 2), 'images[0]')).toMatchObject({ width: 16384, height: 2 });
    expect(inspectImage(webpExtended(2, 16384, { lossless: true }), 'images[0]')).toMatchObject({ height: 16384 });
    // A VP8X canvas can say 16385 (24-bit field) but no VP8/VP8L bitstream can (14 bits), so such
    // a file is inconsistent: invalid_image.
    const canvas16385 = webpContainer([riffChunk('VP8X', vp8xData(16385, 2)), riffChunk('VP8L', vp8lData(16384, 2))]);
    expectApiError(() => inspectImage(canvas16385, 'images[0]'), { ...invalid(), message: [/16385x2/] });
  });

  it('exactly 40,000,000 pixels is accepted; the next possible size over it is rejected', () => {
    expect(inspectImage(png(5000, 8000), 'images[0]')).toMatchObject({ width: 5000, height: 8000 });
    expect(inspectImage(png(6400, 6250), 'images[0]')).toMatchObject({ width: 6400, height: 6250 });
    expect(inspectImage(jpeg(8000, 5000), 'images[0]')).toMatchObject({ width: 8000, height: 5000 });
    expect(inspectImage(webpExtended(5000, 8000, { lossless: true }), 'images[0]')).toMatchObject({ width: 5000 });
    // 40,000,001 = 53 x 754,717 (a side far over 16384); within the side limit the smallest
    // pixel count above 40,000,000 is 3015 x 13267 = 40,000,005.
    expect(3015 * 13267).toBe(40_000_005);
    expectApiError(() => inspectImage(png(3015, 13267), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(png(53, 754_717), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(png(5000, 8001), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(jpeg(3015, 13267), 'images[0]'), tooBig);
    expectApiError(() => inspectImage(webpLossless(3015, 13267), 'images[0]'), tooBig);
  });

  it('does not inspect data after the PNG header (no decoding)', () => {
    // Data after IHDR is not inspected (no decoding), so junk there is accepted.
    const bytes = Buffer.concat([png(20, 20).subarray(0, 33), Buffer.from('junk')]);
    expect(inspectImage(bytes, 'images[0]')).toMatchObject({ width: 20, height: 20, bytes: 37 });
  });
});

describe('byte limits', () => {
  it('exactly 10 MB is accepted, one byte more is 413 image_too_large', () => {
    const exact = png(100, 100, { totalBytes: 10 * MB });
    expect(exact.length).toBe(10 * MB);
    expect(inspectImage(exact, 'images[0]')).toMatchObject({ format: 'png', bytes: 10 * MB });

    const over = png(100, 100, { totalBytes: 10 * MB + 1 });
    expectApiError(() => inspectImage(over, 'images[1]'), {
      status: 413,
      code: 'image_too_large',
      message: ['images[1]', String(10 * MB + 1), String(10 * MB)],
    });
  });

  it('applies to every format, and is checked before the format', () => {
    expect(inspectImage(jpeg(10, 10, { totalBytes: 10 * MB }), 'images[0]')).toMatchObject({ bytes: 10 * MB });
    expectApiError(() => inspectImage(jpeg(10, 10, { totalBytes: 10 * MB + 1 }), 'images[0]'), {
      status: 413,
      code: 'image_too_large',
    });
    expectApiError(() => inspectImage(Buffer.alloc(10 * MB + 1, 0x41), 'images[0]'), { status: 413, code: 'image_too_large' });
  });

  it('hashes a 10 MB image correctly', () => {
    const exact = png(1, 1, { totalBytes: 10 * MB });
    expect(withSha256(inspectImage(exact, 'images[0]'), exact).sha256).toBe(createHash('sha256').update(exact).digest('hex'));
  });
});

describe('assertImageSet / assertImageCount', () => {
  const img = (bytes: number): InspectedImage => ({
    format: 'png',
    contentType: 'image/png',
    width: 1,
    height: 1,
    bytes,
  });

  it('accepts 0 to 3 images', () => {
    expect(() => assertImageSet([])).not.toThrow();
    expect(() => assertImageSet([img(1), img(2), img(3)])).not.toThrow();
    expect(() => assertImageCount(3)).not.toThrow();
  });

  it('rejects a 4th image with 400 too_many_images naming the field', () => {
    expectApiError(() => assertImageSet([img(1), img(1), img(1), img(1)]), {
      status: 400,
      code: 'too_many_images',
      message: ['images', /\b3\b/],
    });
    expectApiError(() => assertImageCount(4, 'payload.images'), { status: 400, code: 'too_many_images', message: ['payload.images'] });
  });

  it('accepts exactly 20 MB in total and rejects one byte more with 413 images_too_large', () => {
    expect(() => assertImageSet([img(10 * MB), img(10 * MB)])).not.toThrow();
    expect(() => assertImageSet([img(10 * MB), img(5 * MB), img(5 * MB)])).not.toThrow();
    expectApiError(() => assertImageSet([img(10 * MB), img(5 * MB), img(5 * MB + 1)]), {
      status: 413,
      code: 'images_too_large',
      message: ['images', String(20 * MB + 1), String(20 * MB)],
    });
  });

  it('works on real inspection results', () => {
    const set = [png(2, 2), jpeg(3, 3), webpLossy(4, 4)].map((b, i) => inspectImage(b, `images[${i}]`));
    expect(set.map((s) => [s.format, s.width])).toEqual([
      ['png', 2],
      ['jpeg', 3],
      ['webp', 4],
    ]);
    expect(() => assertImageSet(set)).not.toThrow();
    expectApiError(() => assertImageSet([...set, set[0] as InspectedImage]), { status: 400, code: 'too_many_images' });
  });
});

describe('what image-size 2.1 got wrong, and images.ts does not (rules/images.ts header)', () => {
  it('a lossless WebP 1653-1656 px high whose bitstream continues with 0x2A is accepted (image-size would call it a broken lossy header)', () => {
    for (const height of [1653, 1654, 1655, 1656]) {
      const data = vp8lData(100, height);
      data[5] = 0x2a; // bytes 3-5 now read 9D 01 2A: the lossy start code
      const bytes = webpContainer([riffChunk('VP8L', data)]);
      expect(inspectImage(bytes, 'images[0]')).toMatchObject({ format: 'webp', width: 100, height });
      const extended = webpContainer([riffChunk('VP8X', vp8xData(100, height)), riffChunk('VP8L', data)]);
      expect(inspectImage(extended, 'images[0]')).toMatchObject({ format: 'webp', width: 100, height });
    }
  });

  it.each([
    ['Photoshop', Buffer.concat([Buffer.from('8BPS'), Buffer.alloc(30)])],
    ['ICNS', Buffer.concat([Buffer.from('icns'), Buffer.alloc(30)])],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>')],
    ['HEIF', Buffer.concat([Buffer.from([0, 0, 0, 0x1c]), Buffer.from('ftypheic'), Buffer.alloc(20)])],
  ])('names a refused %s file (as image-size recognises it)', (name, bytes) => {
    const err = expectApiError(() => inspectImage(bytes, 'images[0]'), unsupported());
    expect(err.message).toContain(`a ${name} image`);
  });

  it('never reads past the end of a view of a larger buffer (images are views of the request body)', () => {
    const body = Buffer.concat([png(100, 50), Buffer.alloc(64, 0xff)]);
    const truncated = body.subarray(0, 20); // the IHDR is cut; the bytes after the view are not the image
    expectApiError(() => inspectImage(truncated, 'images[0]'), invalid());
    const lossy = Buffer.concat([webpLossy(30, 40), Buffer.alloc(64, 0x7f)]);
    expect(inspectImage(lossy.subarray(0, webpLossy(30, 40).length), 'images[0]')).toMatchObject({ width: 30, height: 40 });
  });
});
