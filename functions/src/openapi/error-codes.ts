/**
 * Every `error.code` the service emits, with its HTTP status. Which operation can answer with which
 * code is in the operation catalogue (../operations.ts `errorCodes`, typed with `ErrorCode`); the
 * OpenAPI document lists them per operation and status (./document.ts). This module does not import
 * the catalogue: the catalogue names these codes (by type), so the import goes one way.
 *
 * Collected from the code: `new <Status>Error('<code>'` anywhere in functions/src but cli/.
 * test/unit/openapi/document.test.ts scans the sources and fails when a code is thrown that is not
 * listed here (or listed here but no longer thrown), and when the status differs.
 */
import { IMAGE_ERROR_CODES, IMAGE_LIMITS } from '../rules/images';
import { MAX_JSON_BYTES, MAX_MULTIPART_BYTES } from '../platform/http/pipeline';

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 503;

export interface ErrorCodeInfo {
  status: ErrorStatus;
  /** When the service answers with this code. */
  description: string;
  /** A representative `error.message` (messages are for humans and may change). */
  example: string;
}

export const ERROR_CODES = {
  invalid_json: {
    status: 400,
    description: 'The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).',
    example: 'body: is not valid UTF-8.',
  },
  invalid_request: {
    status: 400,
    description: 'The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).',
    example: "body: unknown property 'extra'",
  },
  invalid_multipart: {
    status: 400,
    description:
      "The multipart body cannot be read: no boundary, a field other than `payload`, a file field other than `images`, more parts than allowed, or no `payload` field.",
    example: "multipart body: the text field 'payload' (the message JSON) is missing.",
  },
  empty_message: {
    status: 400,
    description: 'Neither non-empty `message.text` nor any image was sent.',
    example: 'message.text: required (non-empty) unless at least one image is attached.',
  },
  [IMAGE_ERROR_CODES.unsupported]: {
    status: 400,
    description: 'An image is empty, not PNG, JPEG or WebP (judged by its bytes, not its declared type), or an animated WebP.',
    example: 'images[0]: file is a GIF image; only PNG, JPEG and static (non-animated) WebP images are accepted',
  },
  [IMAGE_ERROR_CODES.invalid]: {
    status: 400,
    description: 'An image header is truncated or corrupt, or has a zero width or height.',
    example: 'images[1]: invalid PNG image: the IHDR chunk has a bad CRC',
  },
  [IMAGE_ERROR_CODES.tooLargeDimensions]: {
    status: 400,
    description: `An image has a side over ${IMAGE_LIMITS.maxSide} pixels or more than ${IMAGE_LIMITS.maxPixels} pixels in total.`,
    example: 'images[0]: image is 16385x10 pixels; the limits are 16384 pixels per side and 40000000 pixels (40 megapixels) in total',
  },
  [IMAGE_ERROR_CODES.tooMany]: {
    status: 400,
    description: `More than ${IMAGE_LIMITS.maxImages} images in one message.`,
    example: 'images: 4 images; at most 3 images per message',
  },
  invalid_key: {
    status: 401,
    description: 'Missing or malformed `Authorization` header, or an unknown or revoked integration key (one body for all cases).',
    example: 'Missing, malformed, unknown or revoked integration key.',
  },
  integration_inactive: {
    status: 403,
    description: 'The integration of the key is inactive.',
    example: 'This integration is inactive.',
  },
  source_disabled: {
    status: 403,
    description: 'The workspace disabled this source.',
    example: 'This source is disabled for the workspace.',
  },
  delivery_not_found: {
    status: 404,
    description: 'No such delivery, or it belongs to another integration (reported identically).',
    example: 'delivery not found',
  },
  target_not_found: {
    status: 404,
    description:
      "A message event's target is someone else's: a message of another conversation of your integration, or (`edited`, `deleted`) a message of another sender or an alert, or a message that is no longer stored (erased or past retention). Nothing is written. A target that was never received is not this error: the event waits for it (202).",
    example: "target.eventId: 'evt_1001' is not a message of this sender in this conversation",
  },
  method_not_allowed: {
    status: 405,
    description: 'A method other than POST.',
    example: 'POST /v1/messages accepts POST only.',
  },
  event_conflict: {
    status: 409,
    description: 'The `eventId` was already used with different content (fields after defaults, image bytes and order), or by a message for an event (or an event for a message): messages and message events share one space of eventIds.',
    example: "eventId 'evt_1001' was already used with different content.",
  },
  provider_message_id_conflict: {
    status: 409,
    description:
      'Another message of your integration (another `eventId`) came with this `providerMessageId`: the channel\'s id names one message. Nothing is written. A retry of the same message (same `eventId` and content) is a duplicate, never this.',
    example: "providerMessageId 'wamid.HBgM1234' was already used by another message of this integration.",
  },
  ambiguous_target: {
    status: 409,
    description:
      "A message event's `target.providerMessageId` names both a customer message (its `providerMessageId`) and an operator reply (an id reported for it): the service cannot tell which. Nothing is written; name the customer message by `target.eventId`.",
    example: "target.providerMessageId: 'wamid.HBgM1234' names both a customer message and an operator reply; name the customer message by target.eventId.",
  },
  lease_lost: {
    status: 409,
    description: 'The lease does not hold the delivery (expired, replaced by a newer lease, or never held it).',
    example: 'the lease does not hold this delivery',
  },
  invalid_cursor: {
    status: 400,
    description: 'The `cursor` is not a `nextCursor` of this integration\'s list (malformed, or from another integration): start again without one.',
    example: 'cursor: not a cursor of this list; start again without one.',
  },
  erasure_not_found: {
    status: 404,
    description: 'No finished erasure of your integration has this `erasureId` (unknown, another integration\'s, or not finished yet).',
    example: 'erasureId: no finished erasure of this integration has this id.',
  },
  delivery_not_sent: {
    status: 409,
    description: 'A receipt for a delivery that is not `sent` (still queued or being sent, failed, or outcome unknown): receipts are taken for sent deliveries only.',
    example: 'the delivery is queued: receipts are taken for sent deliveries only',
  },
  delivery_finished: {
    status: 409,
    description: 'start or extend on a delivery that already finished (start: as `failed` or `unknown`; extend: in any terminal status): do not send.',
    example: 'the delivery already finished as failed',
  },
  attachment_not_found: {
    status: 404,
    description: "The `attachmentId` is not one of the delivery's files (`message.attachments` of its claim).",
    example: 'attachmentId: "a_x" is not an attachment of this delivery',
  },
  unknown_part: {
    status: 400,
    description: 'A `parts` entry of complete or fail names a part the delivery does not have (its text, when it has one, and its attachment ids are its parts). Nothing is written.',
    example: 'parts[0].part: "a_x" is not a part of this delivery (expected one of: text, a_y)',
  },
  conversation_required: {
    status: 400,
    description: 'complete of a start (a claim with `kind: "start"`) without `conversation`: the thread the channel made is what lets the customer\'s answer join the started conversation. Nothing is written and the lease stays: complete again with it.',
    example: 'conversation: a start is completed with the thread the channel made ({ externalConversationId, externalCustomerId })',
  },
  lease_limit_reached: {
    status: 409,
    description: 'extend on a lease whose expiry already is 15 minutes after its claim, the most a lease may live: no time can be added. Finish the provider call and report the outcome (complete is accepted even after the lease expired).',
    example: 'a lease lives at most 15 minutes after its claim: finish, or report the outcome',
  },
  conflicting_completion: {
    status: 409,
    description:
      'complete contradicts what is recorded: the delivery was completed under another lease or with other provider ids, or this lease already reported a definite failure.',
    example: 'the delivery was already completed differently',
  },
  payload_too_large: {
    status: 413,
    description: `A JSON body (or the multipart \`payload\` field) over ${MAX_JSON_BYTES} bytes, or a multipart body over ${MAX_MULTIPART_BYTES} bytes.`,
    example: 'Request body is 70000 bytes; the limit for application/json is 65536 bytes.',
  },
  [IMAGE_ERROR_CODES.tooLarge]: {
    status: 413,
    description: `One image over ${IMAGE_LIMITS.maxBytesEach} bytes (10 MB).`,
    example: 'images[2]: exceeds 10485760 bytes.',
  },
  [IMAGE_ERROR_CODES.setTooLarge]: {
    status: 413,
    description: `All images of a message together over ${IMAGE_LIMITS.maxBytesTotal} bytes (20 MB).`,
    example: 'images: images total 23068672 bytes; the limit is 20971520 bytes (20 MB) per message',
  },
  unsupported_media_type: {
    status: 415,
    description: 'Missing, unsupported or malformed `Content-Type` (e.g. a parameter without a value: `application/json; charset`), a charset other than utf-8, or a `Content-Encoding` other than identity, gzip or deflate.',
    example: "Content-Type 'text/plain' is not supported: use application/json.",
  },
  rate_limited: {
    status: 429,
    description: "The integration's incoming message rate limit is exhausted (messages and message events each have that budget). Retry the same event (same `eventId`) after `Retry-After` seconds.",
    example: 'Incoming message rate limit of 1200 per minute exceeded; retry with the same eventId after Retry-After.',
  },
  lease_busy: {
    status: 503,
    description: 'Another claim (another `requestId`) holds a live lease on the delivery; `Retry-After` is the time left on that lease.',
    example: 'the delivery is leased by another request',
  },
  retry_delayed: {
    status: 503,
    description: 'The delivery was failed with outcome `retry` and may not be claimed yet; `Retry-After` is the time to wait.',
    example: 'the delivery is waiting before its next attempt',
  },
  deadline_exceeded: {
    status: 503,
    description: 'The request could not be completed within its time budget (50 s from arrival, below the front end\'s 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).',
    example: 'The request could not be completed in time; retry after the indicated delay with the same eventId, requestId or lease (retries are idempotent).',
  },
  image_store_unavailable: {
    status: 503,
    description: 'A message with images cannot be stored because the image store is not available (e.g. not configured). Messages without images are not affected. Retry with the same `eventId` and files after `Retry-After`.',
    example: 'Images cannot be stored at the moment; retry later with the same eventId and files. Messages without images are not affected.',
  },
  temporarily_unavailable: {
    status: 503,
    description: 'Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.',
    example: 'The backend is busy; retry after the indicated delay.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;
