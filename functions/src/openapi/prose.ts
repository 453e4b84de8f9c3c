/**
 * The prose of the OpenAPI document: the API's description and limits table, what each error
 * status means, the tags' descriptions and the response headers. Pure text built from the limits
 * the code enforces; knows no operation (those describe themselves in the catalogue, ../operations.ts).
 */
import { ACCEPTED_IMAGE_CONTENT_TYPES, IMAGE_LIMITS } from '../rules/images';
import { LEASE_MAX_MS, LEASE_MS } from '../rules/record';
import { DELIVERY_LIMITS } from '../deliveries/schemas';
import { MESSAGE_LIMITS } from '../messages/schemas';
import { MAX_JSON_BYTES, MAX_MULTIPART_BYTES } from '../platform/http/pipeline';
import type { ErrorStatus } from './error-codes';
import type { JsonObject } from './json-schema';

/** The document's tags with a description (an operation's tag comes from its catalogue entry). */
export const TAGS = [
  { name: 'messages', description: 'Incoming customer messages and service alerts.' },
  { name: 'deliveries', description: 'Delivery of operator replies through the connector (claim, start, extend, complete, fail) and the channel receipts that follow.' },
  { name: 'channel', description: "What the connector declares of its channel: the reply window and the message templates (`PUT /v1/channel`), shown read-only in the console." },
];

/** The response headers (components). */
export const HEADERS: Record<string, JsonObject> = {
  XRequestId: {
    description: 'Opaque id of this request, also in the service logs: quote it when asking for support. Sent on every response the service produces.',
    required: true,
    schema: { type: 'string', minLength: 1 },
    example: 'req_q2FTe0m1ZxJ6f1k2vA8c',
  },
  RetryAfter: {
    description: 'Whole seconds (at least 1) to wait before retrying the same request (same `eventId` / `requestId` / lease).',
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 5,
  },
  Allow: {
    description: 'The only method the path accepts: POST, or PUT for `/v1/channel`.',
    required: true,
    schema: { type: 'string', enum: ['POST', 'PUT'] },
    example: 'POST',
  },
  RateLimitLimit: {
    description: "The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance.",
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 1200,
  },
  RateLimitRemaining: {
    description: 'Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
    example: 1187,
  },
  RateLimitReset: {
    description: 'Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`).',
    required: true,
    schema: { type: 'integer', minimum: 0 },
    example: 1,
  },
};

/** What each error status means, above the list of its codes. */
export const STATUS_TEXT: Record<ErrorStatus, string> = {
  400: 'Invalid input. Do not retry without correcting the request.',
  401: 'Invalid or revoked key.',
  403: 'Inactive integration or disabled source.',
  404: 'Not found, or not yours (each code says what). Do not retry without correcting the request.',
  405: 'Method not allowed: every path accepts one method, POST (PUT for `/v1/channel`), named in `Allow`. (Answered for any other method on this path; its own method never gets it.)',
  409: 'Conflict.',
  413: 'Payload too large. Do not retry without correcting the request.',
  415: 'Unsupported media type. Do not retry without correcting the request.',
  429: 'Rate limited: retry the same request after `Retry-After` seconds.',
  503: 'Temporarily unavailable: retry the same request after `Retry-After` seconds.',
};

const LIMITS_TABLE = [
  '| Item | Limit |',
  '|---|---|',
  `| JSON request body (and the multipart \`payload\` field) | ${MAX_JSON_BYTES} bytes |`,
  `| Multipart request | ${MAX_MULTIPART_BYTES} bytes (21 MB) |`,
  `| Incoming text (\`message.text\`) | ${MESSAGE_LIMITS.text} characters |`,
  `| Images per message | ${IMAGE_LIMITS.maxImages}; ${ACCEPTED_IMAGE_CONTENT_TYPES.join(', ')} (static WebP only) |`,
  `| Image size | ${IMAGE_LIMITS.maxBytesEach} bytes (10 MB) each, ${IMAGE_LIMITS.maxBytesTotal} bytes (20 MB) together |`,
  `| Image dimensions | ${IMAGE_LIMITS.maxSide} pixels per side, ${IMAGE_LIMITS.maxPixels} pixels in total |`,
  `| Lease | ${LEASE_MS / 1000} seconds from claim or extension; at most ${LEASE_MAX_MS / 60_000} minutes after the claim in total |`,
  `| deliveryId, requestId, leaseId | 1 to ${DELIVERY_LIMITS.id} characters |`,
  `| providerMessageIds | complete: 1 to ${DELIVERY_LIMITS.providerMessageIds} items; fail: 0 to ${DELIVERY_LIMITS.providerMessageIds}; each 1 to ${DELIVERY_LIMITS.providerMessageId} characters |`,
].join('\n');

/** The API's description (`info.description`). */
export const DESCRIPTION = `Server-to-server API of the support desk for connector backends: incoming customer messages and service alerts (\`POST /v1/messages\`), and delivery of operator replies through the connector's own channel adapter (claim, start, complete, fail).

**Authentication.** Every call sends \`Authorization: Bearer <integration key>\`. The key determines the workspace and the source; no project or workspace id is sent. Keep it server-side.

**Delivery flow.** A notification \`{deliveryId, workspaceId, integrationId, conversationId, messageId}\` is published to the integration's Pub/Sub topic per reply. The connector claims the delivery; if \`ready\`, it calls start, sends through the provider once when start says \`sending\`, then completes (or fails). A provider call that runs longer than half the lease extends it (\`POST /v1/deliveries/extend\`, up to ${LEASE_MAX_MS / 60_000} minutes after the claim). Replies are ordered per conversation: \`skip\` with reason \`waiting_for_previous\` means acknowledge the notification; a new one comes when the previous reply finishes.

**Errors.** Every error the service produces is \`{"error": {"code": "snake_case", "message": "..."}}\` (component \`Error\`); each response lists the codes it can carry. New codes may be added in a minor version: handle an unknown code by its HTTP status. On 429 and 503 wait \`Retry-After\` seconds and retry with the same \`eventId\` / \`requestId\` / lease; do not retry 400, 413 or 415 without correcting the request. This holds for bodies the functions runtime cannot parse too (malformed JSON, a bare JSON value, an unknown \`charset\` or \`Content-Encoding\`, a body over the runtime's size limit): they get the envelope with the right status and \`X-Request-Id\`. A request that cannot finish in time is answered 503 \`deadline_exceeded\` within 50 seconds of its arrival, before the front end's 60-second timeout. The HTTP infrastructure in front of the service may also answer statuses not listed here without the envelope, e.g. 431 for oversized request headers.

**Rate limit.** Every \`/v1/messages\` response after the key was accepted carries \`RateLimit-Limit\` (the integration's budget per minute), \`RateLimit-Remaining\` (messages this service instance still accepts now) and \`RateLimit-Reset\` (seconds until the budget is full again, or, at 0 remaining, until the next message is accepted; on a 429 it equals \`Retry-After\`). The budget is kept per service instance, so the headers describe the instance that answered: treat them as a pacing hint, and \`Retry-After\` on a 429 as the rule.

**X-Request-Id.** Every response the service produces (every \`application/json\` response) carries an \`X-Request-Id\` header.

**Characters.** Every text limit counts Unicode code points, not UTF-16 units or bytes. JSON Schema \`minLength\` / \`maxLength\` count code points too, so the bounds below are exact; strings must also be well-formed Unicode (no lone surrogates), which JSON Schema cannot express. Unknown properties are rejected (400 \`invalid_request\`).

**Limits.**

${LIMITS_TABLE}`;
