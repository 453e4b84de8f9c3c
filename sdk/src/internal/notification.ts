/**
 * Delivery notifications arrive through Pub/Sub, either pushed to your HTTPS endpoint or pulled
 * by a subscriber. Both carry the JSON of docs/contract.md#notifications in the message data.
 */
import { InvalidNotificationError } from '../errors.js';
import type { DeliveryNotification } from '../types.js';
import { codePointLength, DELIVERY_LIMITS } from './contract.generated.js';
import { isObject } from './response.js';

const FIELDS = ['deliveryId', 'workspaceId', 'integrationId', 'conversationId', 'messageId'] as const;
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });


/** A W3C traceparent (version 00 form); anything else is not forwarded. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * A notification as received from Pub/Sub: the message data, and the `traceparent` attribute the
 * service sets (docs/contract.md#notifications), which `processDelivery` sends back on every call.
 */
export type ReceivedNotification = DeliveryNotification & { traceparent?: string };

/** `notification` with the message's `traceparent` attribute, when it has a well-formed one. */
function withTraceparent(notification: DeliveryNotification, attributes: unknown): ReceivedNotification {
  const value = isObject(attributes) ? attributes.traceparent : undefined;
  return typeof value === 'string' && TRACEPARENT.test(value) ? { ...notification, traceparent: value } : notification;
}

/** The trace id of a traceparent (its second field), or undefined. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent !== undefined && TRACEPARENT.test(traceparent) ? traceparent.slice(3, 35) : undefined;
}

function decodeBase64(text: string, where: string): Uint8Array {
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw new InvalidNotificationError(`${where} is not base64`);
  return Buffer.from(compact, 'base64');
}

/**
 * Validates decoded notification JSON: the five identifiers must be non-empty strings
 * (`deliveryId` at most the contract's `DELIVERY_LIMITS.id` characters). Unknown extra fields are ignored.
 */
export function parseNotificationJson(value: unknown): DeliveryNotification {
  if (!isObject(value)) throw new InvalidNotificationError('notification data must be a JSON object');
  for (const field of FIELDS) {
    const v = value[field];
    if (typeof v !== 'string' || v === '') throw new InvalidNotificationError(`notification field ${field} must be a non-empty string`);
  }
  const n = value as Record<(typeof FIELDS)[number], string>;
  if (codePointLength(n.deliveryId) > DELIVERY_LIMITS.id) throw new InvalidNotificationError(`notification field deliveryId must be at most ${DELIVERY_LIMITS.id} characters`);
  return { deliveryId: n.deliveryId, workspaceId: n.workspaceId, integrationId: n.integrationId, conversationId: n.conversationId, messageId: n.messageId };
}

/** The notification `value` is, or undefined when it is not one (for answers that carry notifications). */
export function readNotification(value: unknown): DeliveryNotification | undefined {
  try {
    return parseNotificationJson(value);
  } catch (err) {
    if (err instanceof InvalidNotificationError) return undefined;
    throw err;
  }
}

function parseDataBytes(bytes: Uint8Array): DeliveryNotification {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new InvalidNotificationError('message data is not UTF-8');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidNotificationError('message data is not JSON');
  }
  return parseNotificationJson(json);
}

/**
 * Parses the data of a pulled Pub/Sub message: `message.data` as a Buffer / Uint8Array (client
 * library), a base64 string (REST `pull`), or a JSON string. Accepts the message object or its data.
 */
export function parsePulledNotification(message: { data?: unknown; attributes?: unknown } | Uint8Array | string): ReceivedNotification {
  const data: unknown = typeof message === 'string' || message instanceof Uint8Array ? message : isObject(message) ? message.data : undefined;
  const attributes: unknown = typeof message === 'string' || message instanceof Uint8Array ? undefined : isObject(message) ? message.attributes : undefined;
  if (data instanceof Uint8Array) {
    if (data.length === 0) throw new InvalidNotificationError('message data is empty');
    return withTraceparent(parseDataBytes(data), attributes);
  }
  if (typeof data === 'string') {
    const trimmed = data.trim();
    if (trimmed === '') throw new InvalidNotificationError('message data is empty');
    // Base64 never contains "{", so a leading brace means the data is the JSON itself.
    if (trimmed.startsWith('{')) return withTraceparent(parseDataBytes(new TextEncoder().encode(trimmed)), attributes);
    return withTraceparent(parseDataBytes(decodeBase64(trimmed, 'message data')), attributes);
  }
  throw new InvalidNotificationError('message data must be a Buffer, Uint8Array or base64 string');
}

/**
 * Parses the body of a Pub/Sub push request, `{ message: { data: <base64 JSON>, attributes?,
 * messageId }, subscription }`. Accepts the parsed JSON body, or the raw body as a string or Buffer.
 */
export function parsePushNotification(body: unknown): ReceivedNotification {
  let value = body;
  if (typeof value === 'string' || value instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof value === 'string' ? value : utf8.decode(value));
    } catch {
      throw new InvalidNotificationError('push body is not JSON');
    }
  }
  if (!isObject(value) || !isObject(value.message)) throw new InvalidNotificationError('push body must be { message: { data, messageId }, subscription }');
  const data = value.message.data;
  if (typeof data !== 'string' || data.trim() === '') throw new InvalidNotificationError('push body message.data must be a non-empty base64 string');
  return withTraceparent(parseDataBytes(decodeBase64(data.trim(), 'push body message.data')), value.message.attributes);
}
