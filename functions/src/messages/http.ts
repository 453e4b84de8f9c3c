import { config } from '../platform/config';
import * as logger from '../platform/log';
import { db } from '../platform/firebase';
import { endpoint, parseJsonBody, type ParsedRequest, type RequestContext } from '../platform/http/pipeline';
import type { HttpResult } from '../platform/http/types';
import { conversationIdFor, customerIdFor, eventDocIdFor, messageIdFor } from '../platform/ids';
import { parseOrThrow } from '../platform/schema';
import { authenticate, rememberIntegrationChannel } from '../integrations/auth';
import type { OperationsOf } from '../operations';
import { eventFingerprint, fingerprint } from '../rules/fingerprint';
import { acceptEvent, type EventInput } from './event-store';
import { createImageStore, imagePath, isSharedImagePath, withSha256, type HashedImage, type ImageStore } from './image-store';
import { assertImageCount, assertImageSet, inspectImage } from '../rules/images';
import { parseMultipart } from './multipart';
import type { AuthContext } from '../integrations/auth';
import { RateLimiter } from './rate-limit';
import { rateLimited, rateLimitHeaders } from '../rules/rate-limit';
import { ambiguousTarget, eventConflict, messageTextOf, providerMessageIdConflict, targetNotFound } from '../rules/intake';
import { TYPING_WITHOUT_CONVERSATION } from '../rules/message-events';
import { sentAtOf } from '../rules/metadata';
import { IncomingMessageSchema, MessageEventSchema, type IncomingMessageResponse, type MessageEvent, type MessageEventResponse } from './schemas';
import { acceptMessage, findExistingEvent, type StoredImage } from './store';
import { ChannelUpdateSchema } from '../integrations/channel-schemas';
import { storeChannelUpdate } from '../integrations/channel';
import { integrationRef } from '../integrations/store';

/** Per-instance: created on first request, they live as long as the instance. */
let imageStore: ImageStore | undefined;
const images = (): ImageStore => (imageStore ??= createImageStore(config().imageStore));
const rateLimiter = new RateLimiter();

const perMinuteOf = (auth: AuthContext): number => auth.messagesPerMinute ?? config().messagesPerMinuteDefault;

/** As soon as the key is known: the bucket as it is, so an answer refused before the limiter runs (415, 413, 400) carries the headers too. */
function announceRateLimit(auth: AuthContext, setHeaders: RequestContext['setHeaders']): void {
  setHeaders(rateLimitHeaders(rateLimiter.peek(auth.integrationId, perMinuteOf(auth), Date.now())));
}

function enforceRateLimit(context: RequestContext<AuthContext>): void {
  const perMinute = perMinuteOf(context.auth);
  const { decision, state } = rateLimiter.consume(context.auth.integrationId, perMinute, Date.now());
  context.setHeaders(rateLimitHeaders(state));
  if (!decision.allowed) throw rateLimited(state);
}

async function readBody(request: ParsedRequest): Promise<{ payload: unknown; imageBytes: Buffer[] }> {
  if (request.mediaType === 'application/json') return { payload: request.json, imageBytes: [] };
  const multipart = await parseMultipart(request.contentType, request.rawBody);
  return { payload: parseJsonBody(multipart.payload, 'payload'), imageBytes: multipart.images };
}

/**
 * POST /v1/messages: validate everything first (nothing is written for a bad request), upload
 * images to their message's own paths, then record the message in one transaction.
 */
async function handleIncomingMessage(request: ParsedRequest, context: RequestContext<AuthContext>): Promise<HttpResult> {
  enforceRateLimit(context);
  const { payload, imageBytes } = await readBody(request);
  const message = parseOrThrow(IncomingMessageSchema, payload);
  assertImageCount(imageBytes.length);
  const inspected: HashedImage[] = imageBytes.map((bytes, i) => withSha256(inspectImage(bytes, `images[${i}]`), bytes));
  assertImageSet(inspected);
  const text = messageTextOf(message.message?.text, inspected.length);
  // One clock for the request: the receipt time `sentAt` defaults to and is bounded by, and the records' times.
  const now = Date.now();
  const sentAt = sentAtOf(message.sentAt, now);

  const { workspaceId, integrationId } = context.auth;
  const sender = { externalId: message.sender.externalId, displayName: message.sender.displayName ?? null, kind: message.sender.kind };
  const providerMessageId = message.providerMessageId ?? null;
  const print = fingerprint({ externalConversationId: message.externalConversationId, sender, text, images: inspected, providerMessageId: message.providerMessageId, metadata: message.metadata, sentAt: message.sentAt });
  const conversationId = conversationIdFor(integrationId, message.externalConversationId);
  const messageId = messageIdFor(integrationId, message.eventId, print);
  context.logFields.conversationId = conversationId;
  context.logFields.messageId = messageId;

  const stored: StoredImage[] = inspected.map((img) => ({
    path: imagePath(workspaceId, conversationId, messageId, img.sha256, img.format),
    sha256: img.sha256,
    contentType: img.contentType,
    width: img.width,
    height: img.height,
    bytes: img.bytes,
  }));
  const eventDocId = eventDocIdFor(integrationId, message.eventId);
  const record = () =>
    db().runTransaction(async (tx) => {
      const outcome = await acceptMessage(tx, db(), {
        workspaceId,
        integrationId,
        eventId: message.eventId,
        eventDocId,
        providerMessageId,
        fingerprint: print,
        conversationId,
        messageId,
        customerId: sender.kind === 'customer' ? customerIdFor(integrationId, sender.externalId) : null,
        externalConversationId: message.externalConversationId,
        sender,
        text,
        images: stored,
        metadata: message.metadata ?? null,
        sentAt,
        windowSeconds: context.auth.channel?.window?.seconds ?? null,
        now,
        retentionMs: config().eventRetentionMs,
        customerIdOf: (externalId) => customerIdFor(integrationId, externalId),
      });
      // Past the budget the client already has its 503: give up here, so nothing is committed.
      context.deadline.assertTimeLeft();
      return outcome;
    });

  // A retry, a conflicting reuse of the eventId or a providerMessageId taken is answered before
  // anything is uploaded, so a rejected request (409) stores no image and a duplicate does not upload again.
  const known = stored.length > 0 ? await findExistingEvent(db(), { workspaceId, integrationId, eventDocId, fingerprint: print, providerMessageId }) : null;
  if (known === null) {
    // Uploaded before the transaction: if it fails, nothing was recorded and a retry re-uploads to
    // the same paths (the message id, and so the path, follows from the eventId and the content).
    // An orphaned image (upload done, then the transaction failed and was never retried, refused
    // the conversation's metadata merge past its limits, or a concurrent request with other content
    // won the eventId) is named by no message.
    await Promise.all(stored.map((img, i) => images().put(img.path, imageBytes[i] ?? Buffer.alloc(0), img.contentType)));
  }
  const outcome = known ?? (await record());
  if (outcome.kind === 'conflict') throw eventConflict(message.eventId);
  // The images uploaded for it are named by no message, as for a lost race on the eventId (above).
  if (outcome.kind === 'provider_id_conflict') throw providerMessageIdConflict(providerMessageId ?? '');
  // A deletion that was waiting for this message released its images: the objects go too.
  if (outcome.kind === 'created' && outcome.removedImages.length > 0) await removeReleasedImages(outcome.removedImages, { conversationId, messageId });
  const body: IncomingMessageResponse = {
    conversationId: outcome.conversationId,
    messageId: outcome.messageId,
    duplicate: outcome.kind === 'duplicate',
  };
  context.logFields.duplicate = body.duplicate;
  return { status: outcome.kind === 'created' ? 201 : 200, body };
}

export const incomingMessages = endpoint(
  { name: 'POST /v1/messages', accepts: ['application/json', 'multipart/form-data'], authenticate, afterAuthenticate: announceRateLimit },
  handleIncomingMessage,
);

/** The event's change, as the rules and the pending entries see it (the schema's refinements guarantee each type's fields). */
function changeOf(event: MessageEvent): EventInput['change'] {
  const senderExternalId = event.sender.externalId;
  switch (event.type) {
    case 'edited':
      return { type: 'edited', senderExternalId, text: event.text ?? '' };
    case 'deleted':
      return { type: 'deleted', senderExternalId };
    case 'reaction':
      return { type: 'reaction', senderExternalId, emoji: event.emoji ?? '', removed: event.removed === true };
    case 'typing':
      return { type: 'typing' };
  }
}

/**
 * Deletes the stored images a deletion released, after its transaction committed (a failure leaves
 * an object no message names: logged). An image stored before images had one object per message
 * (content-addressed per integration, possibly named by other messages too) is left in place: only
 * the message's own objects are its to delete (docs/privacy.md#stored-objects).
 */
async function removeReleasedImages(paths: readonly string[], fields: Record<string, unknown>): Promise<void> {
  const own = paths.filter((path) => !isSharedImagePath(path));
  if (own.length < paths.length) logger.info('deleted message: shared images left in place', { ...fields, code: 'shared_image_kept', count: paths.length - own.length });
  await Promise.all(
    own.map(async (path) => {
      try {
        await images().remove(path);
      } catch (err) {
        logger.warn('deleted message: image not removed', { ...fields, code: 'image_remove_failed', path, error: err instanceof Error ? err.message : String(err) });
      }
    }),
  );
}

/**
 * POST /v1/messages/events (docs/contract.md#message-events): validate (nothing is written for a
 * bad request), then one transaction records the event and applies it, keeps it pending for its
 * target, or finds it a duplicate or a conflict.
 */
async function handleMessageEvent(request: ParsedRequest, context: RequestContext<AuthContext>): Promise<HttpResult> {
  enforceRateLimit(context);
  const event = parseOrThrow(MessageEventSchema, request.json);
  const { workspaceId, integrationId } = context.auth;
  const sender = { externalId: event.sender.externalId, displayName: event.sender.displayName ?? null, kind: event.sender.kind };
  const target = event.target === undefined ? null : event.target.eventId !== undefined ? { eventId: event.target.eventId } : { providerMessageId: event.target.providerMessageId ?? '' };
  const print = eventFingerprint({
    externalConversationId: event.externalConversationId,
    sender,
    type: event.type,
    target,
    text: event.text ?? null,
    emoji: event.emoji ?? null,
    removed: event.removed === true,
  });
  const conversationId = conversationIdFor(integrationId, event.externalConversationId);
  context.logFields.conversationId = conversationId;
  context.logFields.eventType = event.type;
  const input: EventInput = {
    workspaceId,
    integrationId,
    eventDocId: eventDocIdFor(integrationId, event.eventId),
    fingerprint: print,
    conversationId,
    sender,
    customerId: sender.kind === 'customer' ? customerIdFor(integrationId, sender.externalId) : null,
    change: changeOf(event),
    target,
    now: Date.now(),
    retentionMs: config().eventRetentionMs,
  };
  const outcome = await db().runTransaction(async (tx) => {
    const result = await acceptEvent(
      tx,
      db(),
      input,
      (eventId) => eventDocIdFor(integrationId, eventId),
      (externalId) => customerIdFor(integrationId, externalId),
    );
    // Past the budget the client already has its 503: give up here, so nothing is committed.
    context.deadline.assertTimeLeft();
    return result;
  });
  context.logFields.eventOutcome = outcome.kind;
  switch (outcome.kind) {
    case 'conflict':
      throw eventConflict(event.eventId);
    case 'ambiguous':
      throw ambiguousTarget(event.target?.providerMessageId ?? '');
    case 'no_conversation':
      // Typing in a chat the desk does not know: nothing written, no conversation to name.
      context.logFields.code = 'no_conversation';
      return TYPING_WITHOUT_CONVERSATION;
    case 'not_found': {
      context.logFields.code = outcome.code;
      throw targetNotFound(event);
    }
    case 'applied':
      if (outcome.removedImages.length > 0) await removeReleasedImages(outcome.removedImages, { conversationId, eventType: event.type });
      return { status: 201, body: { conversationId, applied: true, duplicate: false } satisfies MessageEventResponse };
    case 'pending':
      return { status: 202, body: { conversationId, applied: false, duplicate: false } satisfies MessageEventResponse };
    case 'ignored':
      // An edit (or reaction) of a deleted message: answered, recorded, not applied.
      context.logFields.code = outcome.code;
      logger.info('message event ignored', { code: outcome.code, conversationId, eventType: event.type });
      return { status: 200, body: { conversationId, applied: false, duplicate: false } satisfies MessageEventResponse };
    case 'duplicate':
      return { status: 200, body: { conversationId: outcome.conversationId, applied: outcome.applied, duplicate: true } satisfies MessageEventResponse };
  }
}

export const messageEvents = endpoint(
  { name: 'POST /v1/messages/events', accepts: ['application/json'], authenticate, afterAuthenticate: announceRateLimit },
  handleMessageEvent,
);

/**
 * PUT /v1/channel (docs/contract.md#channel): validate (nothing is written for a bad request), then
 * one transaction replaces what the body names of the integration's channel. Under the messages'
 * rate limit: a connector declares its channel at start-up and when it changes, not per message.
 */
async function handleUpdateChannel(request: ParsedRequest, context: RequestContext<AuthContext>): Promise<HttpResult> {
  enforceRateLimit(context);
  const update = parseOrThrow(ChannelUpdateSchema, request.json);
  const { workspaceId, integrationId } = context.auth;
  const channel = await db().runTransaction(async (tx) => {
    const stored = await storeChannelUpdate(tx, integrationRef(db(), workspaceId, integrationId), update, Date.now());
    // Past the budget the client already has its 503: give up here, so nothing is committed.
    context.deadline.assertTimeLeft();
    return stored;
  });
  // This instance's next message of the connector keeps the window just declared (the key's cached
  // resolution carries the channel); another instance's cache may keep the older one up to its TTL.
  rememberIntegrationChannel(context.auth, channel);
  context.logFields.templateCount = channel.templates.length;
  return { status: 200, body: channel };
}

export const channelUpdates = endpoint(
  { name: 'PUT /v1/channel', method: 'PUT', accepts: ['application/json'], authenticate, afterAuthenticate: announceRateLimit },
  handleUpdateChannel,
);

/**
 * The handler of each messages operation of the catalogue (../operations.ts `MESSAGE_OPERATIONS`), by
 * operationId (index.ts serves `endpoints[operationId]`); `satisfies` makes an entry without its handler a compile error.
 */
export const endpoints = { sendMessage: incomingMessages, sendMessageEvent: messageEvents, updateChannel: channelUpdates } satisfies Record<OperationsOf<'messages/http'>, typeof incomingMessages>;
