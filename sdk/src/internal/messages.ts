import { randomUUID } from 'node:crypto';
import type { ImageInput, SendMessageInput, SendMessageResult } from '../types.js';
import { sendMessage, type IncomingMessage } from './api.generated.js';
import { isObject, readOperation } from './response.js';
import type { CallOptions, Transport } from './transport.js';

const EXTENSIONS: Readonly<Record<string, string>> = { 'image/png': '.png', 'image/jpeg': '.jpg', 'image/webp': '.webp' };

function toBlob(image: ImageInput): Blob {
  const declared = image.contentType ?? (image.data instanceof Blob ? image.data.type : '');
  const finalType = declared === '' ? 'application/octet-stream' : declared;
  if (image.data instanceof Blob) {
    return image.data.type === finalType ? image.data : new Blob([image.data], { type: finalType });
  }
  if (!(image.data instanceof Uint8Array)) throw new TypeError('images[].data must be a Uint8Array (or Buffer) or a Blob');
  // Copy into a plain ArrayBuffer-backed view (the input may sit on a SharedArrayBuffer or a pooled Buffer).
  return new Blob([new Uint8Array(image.data)], { type: finalType });
}

/** Builds the wire body of `POST /v1/messages`: `text` becomes `message.text`. */
function toWireMessage(input: SendMessageInput, eventId: string): IncomingMessage {
  const sender: IncomingMessage['sender'] = { externalId: input.sender.externalId };
  if (input.sender.displayName !== undefined) sender.displayName = input.sender.displayName;
  if (input.sender.kind !== undefined) sender.kind = input.sender.kind;
  const wire: IncomingMessage = { eventId, externalConversationId: input.externalConversationId, sender };
  if (input.text !== undefined) wire.message = { text: input.text };
  return wire;
}

/** `client.messages`: incoming messages (customer requests and service alerts). */
export class MessagesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Sends one incoming message. JSON without images; `multipart/form-data` (field `payload` with
   * the JSON, repeated file fields `images`) with images. Retries reuse the same `eventId` and
   * files, so a retry of an accepted message answers `duplicate: true` instead of creating another.
   */
  async send(input: SendMessageInput, options: CallOptions = {}): Promise<SendMessageResult> {
    if (typeof input !== 'object' || input === null) throw new TypeError('messages.send needs an input object');
    if (typeof input.sender !== 'object' || input.sender === null) throw new TypeError('messages.send: sender is required');
    const eventId = input.eventId ?? randomUUID();
    const wire = toWireMessage(input, eventId);
    const images = input.images ?? [];

    let payload: { json: unknown } | { form: FormData } = { json: wire };
    if (images.length > 0) {
      const form = new FormData();
      form.append('payload', JSON.stringify(wire));
      images.forEach((image, i) => {
        const blob = toBlob(image);
        // `||`, not `??`: a part sent with `filename=""` is read as a text field by busboy (the
        // service's parser), so an empty name must get the default too or the image is refused.
        form.append('images', blob, image.filename || `image-${i + 1}${EXTENSIONS[blob.type] ?? ''}`);
      });
      payload = { form };
    }
    const answer = await this.#transport.post(sendMessage.path, payload, options);
    // An answer without `duplicate` is read from its status: 201 new, 200 duplicate.
    const body = isObject(answer.body) && answer.body.duplicate === undefined ? { ...answer.body, duplicate: answer.status === 200 } : answer.body;
    const { conversationId, messageId, duplicate } = readOperation(answer, sendMessage, { body });
    return { conversationId, messageId, duplicate, eventId };
  }
}
