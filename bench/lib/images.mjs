/** Image fixtures: structurally valid PNGs of any claimed size, and the multipart request of a message. */
import { randomBytes, randomUUID } from 'node:crypto';
import { pngWithData } from '../../scripts/lib/png.mjs';
import { messageParts, multipartBody } from '../../test/integration/helpers/multipart.ts';

/**
 * A PNG whose IHDR claims `width` x `height` (8-bit RGB), followed by one IDAT chunk of
 * `idatBytes` random bytes and IEND. Pixels are never decoded by the service, so the claimed size
 * and the file size are independent.
 */
export function png(width, height, idatBytes = 16) {
  return pngWithData(width, height, randomBytes(idatBytes));
}

/** A multipart POST /v1/messages body: payload + the given images (fresh eventId). */
export function multipartMessage(externalConversationId, images) {
  const payload = {
    eventId: `evt-${randomUUID()}`,
    externalConversationId,
    sender: { externalId: `cust-${externalConversationId}`, kind: 'customer' },
    message: { text: 'Three photos of the damaged parcel.' },
  };
  return multipartBody(messageParts(payload, images.map((data, i) => ({ data, contentType: 'image/png', filename: `photo-${i}.png` }))));
}

/** A baseline JPEG's headers up to the frame (SOI, JFIF APP0, SOF0 with 3 components) and EOI: all that inspection reads. */
export function jpeg(width, height) {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  const sof0 = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof0, Buffer.from([0xff, 0xd9])]);
}

/** A lossy WebP: RIFF container with one `VP8 ` chunk (key frame tag, start code, dimensions, filler). */
export function webpLossy(width, height) {
  const vp8 = Buffer.alloc(18);
  const tag = (1 << 4) | (4 << 5); // key frame, version 0, shown, first partition 4 bytes
  vp8.writeUIntLE(tag, 0, 3);
  vp8.set([0x9d, 0x01, 0x2a], 3);
  vp8.writeUInt16LE(width & 0x3fff, 6);
  vp8.writeUInt16LE(height & 0x3fff, 8);
  const chunk = Buffer.concat([Buffer.from('VP8 '), Buffer.from([vp8.length, 0, 0, 0]), vp8]);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0);
  riff.writeUInt32LE(4 + chunk.length, 4);
  riff.write('WEBP', 8);
  return Buffer.concat([riff, chunk]);
}
