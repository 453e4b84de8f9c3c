/**
 * Structurally valid PNGs of any claimed size, without encoding pixels: the signature, IHDR
 * (8-bit RGB), one IDAT chunk of the given bytes, IEND, each with its CRC. The service never
 * decodes pixels, so the claimed dimensions and the file size are independent. Used by the smoke
 * test (deterministic bytes) and the bench (random bytes). Node built-ins only.
 */
import { crc32 } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG chunk: length, type, data, CRC of type + data. */
function pngChunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** Bytes of a PNG besides its IDAT data: signature, IHDR chunk, IDAT framing, IEND chunk. */
export const PNG_OVERHEAD_BYTES = SIGNATURE.length + (12 + 13) + 12 + 12;

/** A PNG claiming `width` x `height` whose IDAT chunk holds `idat`. */
export function pngWithData(width, height, idat) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  return Buffer.concat([SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
}
