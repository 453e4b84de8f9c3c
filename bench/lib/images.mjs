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
