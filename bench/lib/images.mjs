/** Image fixtures: structurally valid PNGs of any claimed size, and the multipart request of a message. */
import { randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { messageParts, multipartBody } from '../../test/integration/helpers/multipart.ts';

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A PNG whose IHDR claims `width` x `height` (8-bit RGB), followed by one IDAT chunk of
 * `idatBytes` random bytes and IEND. Pixels are never decoded by the service, so the claimed size
 * and the file size are independent.
 */
export function png(width, height, idatBytes = 16) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', randomBytes(idatBytes)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
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
