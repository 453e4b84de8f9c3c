import { randomUUID } from 'node:crypto';
import type {
  DeleteMessageInput,
  EditMessageInput,
  ImageInput,
  MessageEventOutcome,
  MessageEventResult,
  ReactInput,
  SendMessageInput,
  SendMessageResult,
  TypingInput,
  TypingResult,
} from '../types.js';
import { sendMessage, sendMessageEvent, type IncomingMessage, type MessageEventRequest } from './api.generated.js';
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
  if (input.providerMessageId !== undefined) wire.providerMessageId = input.providerMessageId;
  if (input.text !== undefined) wire.message = { text: input.text };
  if (input.sentAt !== undefined) wire.sentAt = input.sentAt;
  if (input.metadata !== undefined) wire.metadata = { ...input.metadata };
  return wire;
}

/** The wire sender of an input (only the fields given). */
function wireSender(sender: IncomingMessage['sender']): IncomingMessage['sender'] {
  if (typeof sender !== 'object' || sender === null) throw new TypeError('sender is required');
  const out: IncomingMessage['sender'] = { externalId: sender.externalId };
  if (sender.displayName !== undefined) out.displayName = sender.displayName;
  if (sender.kind !== undefined) out.kind = sender.kind;
  return out;
}

/** The event's target as the wire takes it: exactly the one id given. */
function wireTarget(method: string, target: unknown): NonNullable<MessageEventRequest['target']> {
  if (typeof target !== 'object' || target === null) throw new TypeError(`messages.${method}: target is required`);
  const { eventId, providerMessageId } = target as { eventId?: unknown; providerMessageId?: unknown };
  if (typeof eventId === 'string' && providerMessageId === undefined) return { eventId };
  if (typeof providerMessageId === 'string' && eventId === undefined) return { providerMessageId };
  throw new TypeError(`messages.${method}: target is { eventId } or { providerMessageId } (a string id)`);
}

/** What an answer of `POST /v1/messages/events` means: 201 applied, 202 kept pending, 200 ignored or a duplicate. */
function outcomeOf(status: number, duplicate: boolean): MessageEventOutcome {
  if (duplicate) return 'duplicate';
  if (status === 201) return 'applied';
  if (status === 202) return 'pending';
  return 'ignored';
}

/** `client.messages`: incoming messages (customer requests and service alerts), and the events about them (edits, deletions, reactions, typing). */
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

  /**
   * The customer edited a message they sent: `target` names it (`{ eventId }` or the channel's
   * `{ providerMessageId }`), `text` is its new text (1 to 10000 code points). The desk shows the
   * edit and keeps the original. An edit of a deleted message, or to the text it already shows,
   * is ignored (`outcome: 'ignored'`); a target not there yet is kept 24 h and applied when it
   * arrives (`pending`).
   */
  async edit(input: EditMessageInput, options: CallOptions = {}): Promise<MessageEventResult> {
    const { eventId, wire } = this.#event('edit', 'edited', input);
    if (typeof input.text !== 'string') throw new TypeError('messages.edit: text is required');
    const answer = await this.#transport.post(sendMessageEvent.path, { json: { ...wire, target: wireTarget('edit', input.target), text: input.text } }, options);
    return this.#result(answer, eventId);
  }

  /**
   * The customer deleted a message they sent (`target`: `{ eventId }` or `{ providerMessageId }`):
   * the desk removes its text and images and keeps a tombstone.
   */
  async delete(input: DeleteMessageInput, options: CallOptions = {}): Promise<MessageEventResult> {
    const { eventId, wire } = this.#event('delete', 'deleted', input);
    const answer = await this.#transport.post(sendMessageEvent.path, { json: { ...wire, target: wireTarget('delete', input.target) } }, options);
    return this.#result(answer, eventId);
  }

  /**
   * The sender reacted with `emoji` (one emoji) to a message: `target.eventId` (a customer message
   * or alert), or `target.providerMessageId` (the channel's id: a customer message sent with it, or
   * an operator reply you reported it for when completing its delivery). `removed: true` takes
   * that reaction back. A reaction that changes nothing is `outcome: 'ignored'`.
   */
  async react(input: ReactInput, options: CallOptions = {}): Promise<MessageEventResult> {
    const { eventId, wire } = this.#event('react', 'reaction', input);
    if (typeof input.emoji !== 'string') throw new TypeError('messages.react: emoji is required');
    const json: MessageEventRequest = { ...wire, target: wireTarget('react', input.target), emoji: input.emoji };
    if (input.removed === true) json.removed = true;
    const answer = await this.#transport.post(sendMessageEvent.path, { json }, options);
    return this.#result(answer, eventId);
  }

  /**
   * The sender is typing in the conversation (the desk shows it for a few seconds; nothing is
   * stored for long). In a chat the desk does not know yet, nothing is stored and the result has
   * no `conversationId` (`outcome: 'ignored'`).
   */
  async typing(input: TypingInput, options: CallOptions = {}): Promise<TypingResult> {
    const { eventId, wire } = this.#event('typing', 'typing', input);
    const answer = await this.#transport.post(sendMessageEvent.path, { json: wire }, options);
    const { conversationId, applied, duplicate } = readOperation(answer, sendMessageEvent);
    const result: TypingResult = { applied, duplicate, outcome: outcomeOf(answer.status, duplicate), eventId };
    if (conversationId !== undefined) result.conversationId = conversationId;
    return result;
  }

  /** The fields every event has; the eventId generated once per call when omitted (and reused on its retries). */
  #event(method: string, type: MessageEventRequest['type'], input: TypingInput): { eventId: string; wire: MessageEventRequest } {
    if (typeof input !== 'object' || input === null) throw new TypeError(`messages.${method} needs an input object`);
    if (typeof input.sender !== 'object' || input.sender === null) throw new TypeError(`messages.${method}: sender is required`);
    const eventId = input.eventId ?? randomUUID();
    return { eventId, wire: { eventId, externalConversationId: input.externalConversationId, sender: wireSender(input.sender), type } };
  }

  #result(answer: Awaited<ReturnType<Transport['post']>>, eventId: string): MessageEventResult {
    // The service names the conversation of every edit, deletion and reaction it answers 2xx (only
    // typing may come without one): an answer without it is an unexpected one.
    let conversationId = '';
    const { applied, duplicate } = readOperation(answer, sendMessageEvent, {
      refine: (read) => {
        if (read.conversationId === undefined) return undefined;
        conversationId = read.conversationId;
        return read;
      },
    });
    return { conversationId, applied, duplicate, outcome: outcomeOf(answer.status, duplicate), eventId };
  }
}
