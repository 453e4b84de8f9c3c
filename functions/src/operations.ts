/**
 * The operation catalogue: every HTTP operation of the API, declared once, in one table per
 * feature (`MESSAGE_OPERATIONS`, `DELIVERY_OPERATIONS`, `PRIVACY_OPERATIONS`, and the console's
 * `CONSOLE_API`), composed into `HTTP_OPERATIONS`. Everything else that names an operation is
 * derived from these tables:
 *
 * - the deployed HTTP functions (functions/src/index.ts exports one per entry, under `functionName`,
 *   with `options`, requiring `bundle` on the first invocation and serving its `endpoints[operationId]`);
 * - the Hosting rewrites in firebase.json (`npm run rewrites`, checked by test/unit/operations.test.ts);
 * - the OpenAPI paths (functions/src/openapi/document.ts: summary, description, `openapi` tag,
 *   component names and examples from the entry; the request and response schemas from the
 *   feature's `*_OPERATION_SCHEMAS` table) and each operation's error codes;
 * - the handler bundles (scripts/bundle-functions.mjs).
 *
 * Who serves an entry is the feature's handler module (its `bundle`): its exported `endpoints` hold
 * one handler per operation of the feature, each referencing its rule or handler function
 * directly (deliveries/http.ts: `claimDelivery: transition('claimDelivery', rules.decideClaim)`),
 * and are typed `satisfies Record<OperationsOf<bundle>, ...>`, so an entry here without its
 * handler, or a handler without its entry, does not compile.
 *
 * WHY the rule is not named here (decision, docs/architecture.md#operations): index.js loads this
 * module at every cold start to declare the functions, so it must stay metadata only at run time
 * (no zod, no handler, no rule; the bench's "each function loads only its own code" lists it as
 * the one catalogue module index.js may load). Naming the rule here, even by type, made this module
 * import every handler module while those import it back (a 21-file import cycle), and the
 * by-name dispatch needed an `as unknown as` cast. So the data lives here, the typed reference to
 * the code lives with the code, and the import goes one way: features -> operations.ts. For the same
 * reason the per-feature tables are sections of this module rather than modules of the feature
 * folders: a module of the messages folder loaded by index.js would be messages code in every instance.
 * test/unit/completeness.test.ts fails when an operation has no SDK method, no contract section or
 * no suite.
 */
import type { HttpsOptions } from 'firebase-functions/v2/https';
import type * as z from 'zod';
import type { ErrorCode } from './openapi/error-codes';
import { REGION } from './platform/region';

/** The handler modules of the HTTP functions, by path under functions/src (index.ts requires lib/bundles/<path>.js). */
export type HttpBundle = 'messages/http' | 'deliveries/http' | 'privacy/http' | 'console-api/http';

/** The bundles of the triggers (declared by hand in index.ts: they are not HTTP operations). */
export const TRIGGER_BUNDLES = ['deliveries/triggers', 'integrations/triggers', 'messages/triggers', 'privacy/triggers', 'console-api/cleanup'] as const;

/** Every module index.ts requires lazily (each an esbuild bundle, lib/bundles/<path>.js); index.ts types each (`HandlerModules`). */
export type HandlerBundle = HttpBundle | (typeof TRIGGER_BUNDLES)[number];

/**
 * The console's HTTP function (docs/console.md#attachments-and-media): members of a workspace, with
 * their Firebase Auth ID token, upload a reply's files (`POST /console/v1/attachments`) and read
 * stored media (`GET /console/v1/media`). One function for every path under `path`, served on the
 * Hosting site (its rewrite is generated with the operations': `npm run rewrites`). Not an
 * operation of the connectors' API (no integration key, not in the OpenAPI document).
 */
export const CONSOLE_API = {
  functionName: 'consoleApi',
  path: '/console/v1/**',
  bundle: 'console-api/http',
  /*
   * Memory and concurrency (docs/operations.md#the-console-function): an upload is at most 10 MB
   * plus its multipart framing; the runtime buffers the body (1x), body-parser's transient chunks
   * add about 1x, the file is a view of the body (no copy) and the Cloud Storage client's upload
   * buffer at most one more: ~3 x 10.1 MB per request in flight. 16 x 3 x 10.1 MB ≈ 485 MB over an
   * idle ~170 MiB ≈ 0.63 of 1 GiB, below 0.8. A media read holds the object and the response (2x).
   */
  options: { memory: '1GiB', cpu: 1, concurrency: 16 },
  /** Its HTTP suites (each calls a `/console/v1/` path; test/unit/operations.test.ts). */
  suites: ['test/integration/console-api/uploads.test.ts', 'test/integration/console-api/media.test.ts'],
} as const satisfies { functionName: string; path: `/console/v1/${string}`; bundle: HttpBundle; options: HttpOperation['options']; suites: readonly string[] };

/**
 * HTTP functions that are not operations of the connectors' API: they serve the console and
 * authenticate a Firebase ID token, not an integration key (declared in index.ts outside the
 * catalogue's loop).
 */
export const CONSOLE_HTTP_FUNCTIONS = ['downloadExport', CONSOLE_API.functionName] as const;

/** The limits an operation's description may quote (supplied by openapi/document.ts). */
export interface DocumentedLimits {
  leaseSeconds: number;
  leaseMaxMinutes: number;
}

/** A JSON value (an example body). */
type Json = string | number | boolean | null | readonly Json[] | { readonly [key: string]: Json };
/** Named examples of a body, as the OpenAPI document lists them. */
export type Examples = Readonly<Record<string, { summary: string; value: Json }>>;

/** The success statuses an operation may answer with. */
export type SuccessStatus = '200' | '201' | '202';

/** How the OpenAPI document describes an operation (openapi/document.ts). */
interface OperationDocument {
  /** The OpenAPI tag: the feature the operation belongs to. */
  tag: string;
  /**
   * The shape of the operation: `json` (a JSON request, a JSON 200 described by the schemas'
   * `<components>Request` and `<components>Response`), `file` (a JSON request, the 200 is a
   * file's bytes), `message` (`POST /v1/messages`: JSON or multipart, 201/200, rate-limit headers).
   */
  shape: 'json' | 'file' | 'message';
  /** The prefix of its component names (`Claim` -> `ClaimRequest`, `ClaimResponse`); `json` and `file` shapes. */
  components?: string;
  /** The 200 response's description (default "OK."). */
  responseDescription?: string;
  /**
   * A `json` operation answering with more than one success status (`sendMessageEvent`: 201, 202,
   * 200): each status and its description, in the order listed. Absent: one 200 (`responseDescription`).
   */
  successes?: Readonly<Partial<Record<SuccessStatus, string>>>;
  /** True when its answers carry the `/v1/messages` rate-limit headers (the same per-integration budget). */
  rateLimited?: true;
  examples?: {
    /** Of the `application/json` request body. */
    request?: Examples;
    /** Of the `multipart/form-data` request body (the `message` shape). */
    multipart?: Examples;
    /** Of the success responses, by status. */
    responses?: { readonly [Status in SuccessStatus]?: Examples };
  };
}

export interface HttpOperation {
  /** `<method> <path>` under the base host (the Hosting rewrite's source). */
  path: `/v1/${string}`;
  /** The one method it accepts; absent: POST (every operation but `PUT /v1/channel`, which replaces a resource). */
  method?: 'PUT';
  /** The deployed function's name (an export of index.ts; renaming one redeploys it). */
  functionName: string;
  /** The handler module whose `endpoints[operationId]` serves it (the feature's http.ts). */
  bundle: Exclude<HttpBundle, 'console-api/http'>;
  /** Function options beyond the shared ones of index.ts (memory, CPU, concurrency, instances). */
  options: Pick<HttpsOptions, 'memory' | 'cpu' | 'concurrency' | 'maxInstances'>;
  /** Every `error.code` the operation can answer with (the OpenAPI document lists them per status). */
  errorCodes: readonly ErrorCode[];
  /**
   * The HTTP suites that exercise the operation, at least one; each names the operation's path
   * (test/unit/completeness.test.ts). The first is the suite of its request and answer as they
   * cross the runtime (body parsing, limits, the envelope, a binary answer). Every suite calls the
   * service on the production runtime (scripts/test-stack.mjs), where a full run fails when an
   * operation's path got no request.
   */
  suites: readonly [string, ...string[]];
  /** For the OpenAPI document: one line, and the rules a connector must know. */
  summary: string;
  description: string | ((limits: DocumentedLimits) => string);
  openapi: OperationDocument;
}

/** An operation's wire shapes: the body it validates, the success body it answers (features' `*_OPERATION_SCHEMAS`). */
export interface OperationSchemas {
  request: z.ZodType;
  response: z.ZodType;
}

/** The region of every HTTP function, and of their Hosting rewrites. */
export const HTTP_REGION = REGION;

/** Codes every endpoint can answer with (the shared pipeline: method, key, content type, size, JSON, schema, backend). */
const COMMON_ERRORS = [
  'invalid_json',
  'invalid_request',
  'invalid_key',
  'integration_inactive',
  'source_disabled',
  'method_not_allowed',
  'payload_too_large',
  'unsupported_media_type',
  'deadline_exceeded',
  'temporarily_unavailable',
] as const satisfies readonly ErrorCode[];

/** A delivery endpoint: small JSON bodies, one Firestore transaction. */
const DELIVERY_FUNCTION = { memory: '256MiB' } as const;

// ------------------------------------------------------------------------------------ examples

const DELIVERY_ID = 'd_Qm9vZ2xlIGJhY2tlbmQgZGVsaXZlcnkx';
const LEASE_ID = 'l_7sJc0m2vQh9xw3ZkYbTq1pLr';
const TEXT_MESSAGE = {
  eventId: 'evt_1001',
  externalConversationId: 'chat-42',
  sender: { externalId: 'cust-7', displayName: 'Ada Lovelace', kind: 'customer' },
  message: { text: 'Hello, my order has not arrived.' },
} as const;

/** Examples of a `{ status }` answer, one per status, by their summaries. */
const statusExamples = (summaries: Readonly<Record<string, string>>): Examples =>
  Object.fromEntries(Object.entries(summaries).map(([status, summary]) => [status, { summary, value: { status } }]));

// ------------------------------------------------------------------------------------ messages

const MESSAGES = { bundle: 'messages/http' } as const;

/** The messages feature (functions/src/messages/http.ts `endpoints`). */
const MESSAGE_OPERATIONS = {
  sendMessage: {
    path: '/v1/messages',
    functionName: 'messages',
    ...MESSAGES,
    /*
     * Memory and concurrency from the bench's "Multipart memory on the functions framework"
     * (bench/results/latest.md): the runtime buffers each body (up to 21 MB) before our handler, and
     * each maximum-size upload in flight adds about 1.2x its size to the process (the buffered body
     * plus body-parser's transient chunks; our parser hands the images on as views of the body).
     * Measured: idle ~170 MiB, 32 concurrent maximum uploads peak at ~950 MiB = 0.46 of 2 GiB; the
     * margin up to 0.8 covers the Cloud Storage client's upload buffers, which the local image store
     * of the bench does not have (at most one more copy: 32 x 2.2 x 21 MB + 170 MiB ≈ 0.8).
     * Beyond 32 requests an instance gets no more: Cloud Run routes them to other instances, and
     * 32 x 50 instances keeps the 1,600 concurrent requests of the other functions' 80 x 20.
     * `cpu: 1` because concurrency above 1 needs a whole vCPU.
     */
    options: { memory: '2GiB', cpu: 1, concurrency: 32, maxInstances: 50 },
    errorCodes: [
      ...COMMON_ERRORS,
      'invalid_multipart',
      'empty_message',
      'unsupported_image',
      'invalid_image',
      'image_too_large_dimensions',
      'too_many_images',
      'event_conflict',
      'provider_message_id_conflict',
      'image_too_large',
      'images_too_large',
      'rate_limited',
      'image_store_unavailable',
    ],
    suites: [
      'test/integration/messages/errors.test.ts',
      'test/integration/messages/rate-limit.test.ts',
      'test/integration/messages/idempotency.test.ts',
      'test/integration/messages/concurrent-retries.test.ts',
      'test/integration/messages/images.test.ts',
    ],
    summary: 'Send an incoming customer message or service alert',
    description:
      'Idempotent on `eventId`: the first request creates the message (201); an identical retry answers 200 with the same ids and `duplicate: true`; the same `eventId` with different content is 409 `event_conflict`. The content compared covers every field after defaults (`providerMessageId` included), and the bytes and order of the images. A `providerMessageId` (the channel\'s id of the message, so that events may name it) is unique per integration: another message with it is 409 `provider_message_id_conflict`. Nothing is written for a rejected request.',
    openapi: {
      tag: 'messages',
      shape: 'message',
      examples: {
        request: {
          customer: { summary: 'A customer message', value: TEXT_MESSAGE },
          withChannelId: { summary: "A customer message with the channel's id of it (events may name it by that id)", value: { ...TEXT_MESSAGE, eventId: 'evt_1008', providerMessageId: 'wamid.HBgLMTU1NTAxMjM0NTY3FQIAEhgUM0VCMDRBQjNFRTg4' } },
          alert: {
            summary: 'A service alert (no customer is created)',
            value: { eventId: 'alert-5531', externalConversationId: 'chat-42', sender: { externalId: 'monitoring', kind: 'service' }, message: { text: 'Payment provider degraded.' } },
          },
        },
        multipart: {
          withImage: {
            summary: 'A message with one image (the file bytes go in an `images` part)',
            value: { payload: JSON.stringify({ ...TEXT_MESSAGE, eventId: 'evt_1002', message: { text: 'Photo of the parcel label.' } }) },
          },
        },
        responses: {
          '201': { created: { summary: 'Created', value: { conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', messageId: 'm_Hk4tN8qWb2ZyLc6RfPx0VmJa7sEdU3iO', duplicate: false } } },
          '200': { duplicate: { summary: 'Duplicate', value: { conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', messageId: 'm_Hk4tN8qWb2ZyLc6RfPx0VmJa7sEdU3iO', duplicate: true } } },
        },
      },
    },
  },
  sendMessageEvent: {
    path: '/v1/messages/events',
    functionName: 'messageEvents',
    ...MESSAGES,
    // Small JSON bodies and one Firestore transaction, like the delivery endpoints (no images are
    // received; a deletion deletes stored images, one small request each).
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'target_not_found', 'event_conflict', 'ambiguous_target', 'rate_limited'],
    suites: ['test/integration/platform/runtime-envelope.test.ts', 'test/integration/messages/events.test.ts'],
    summary: 'Report an edit, a deletion, a reaction or typing in a conversation',
    description:
      "What happened to an earlier message on the channel: `edited` (the customer changed the text of their message), `deleted` (they took it back: its text and images are removed, a tombstone stays), `reaction` (anyone in the chat reacted to a customer message or an operator reply; `removed: true` takes it back), `typing` (shown for a few seconds, never stored as a message; in a chat the desk does not know, 200 not applied without a `conversationId`, nothing stored). The target is `{ eventId }` (a message's eventId) or `{ providerMessageId }` (the channel's id: a customer message's `providerMessageId`, or an id you reported for an operator reply; an id naming both is 409 `ambiguous_target`). Idempotent on `eventId`, in the same space as the eventIds of messages: an identical retry answers 200 with `duplicate: true` and the first answer's `applied`; the same `eventId` with other content (or the eventId of a message) is 409 `event_conflict`. A target not received yet is kept 24 hours and applied when it arrives (202). A target in another conversation, or (edits and deletions) a message of another sender or an alert, is 404 `target_not_found` and nothing is written. The rate limit, the key and the body limits are those of `POST /v1/messages`.",
    openapi: {
      tag: 'messages',
      shape: 'json',
      components: 'MessageEvent',
      successes: {
        '201': 'Applied: the desk shows the edit, deletion, reaction or typing now.',
        '202': 'Accepted, waiting for its target: kept 24 hours and applied when the target message arrives (an operator reply: when its delivery is completed with that provider id).',
        '200': 'Not applied (`applied: false`): an event on a deleted message, a reaction or an edit that changes nothing, or typing in a chat the desk does not know (no `conversationId`); or an identical retry of an earlier event (`duplicate: true`, the first answer\'s `applied`). Nothing new was written.',
      },
      rateLimited: true,
      examples: {
        request: {
          edited: { summary: 'The customer edited their message', value: { eventId: 'evt_1003', externalConversationId: 'chat-42', sender: { externalId: 'cust-7' }, type: 'edited', target: { eventId: 'evt_1001' }, text: 'Hello, my order #5531 has not arrived.' } },
          editedByChannelId: { summary: "The customer edited their message, named by the channel's id", value: { eventId: 'evt_1009', externalConversationId: 'chat-42', sender: { externalId: 'cust-7' }, type: 'edited', target: { providerMessageId: 'wamid.HBgLMTU1NTAxMjM0NTY3FQIAEhgUM0VCMDRBQjNFRTg4' }, text: 'Hello, my order #5531 is late.' } },
          deleted: { summary: 'The customer deleted their message', value: { eventId: 'evt_1004', externalConversationId: 'chat-42', sender: { externalId: 'cust-7' }, type: 'deleted', target: { eventId: 'evt_1002' } } },
          reaction: { summary: 'The customer reacted to an operator reply', value: { eventId: 'evt_1005', externalConversationId: 'chat-42', sender: { externalId: 'cust-7' }, type: 'reaction', target: { providerMessageId: 'wamid.HBgLMTU1NTAxMjM0NTY3FQIAERgSQzVGMjQ0' }, emoji: '👍' } },
          unreact: { summary: 'The customer took the reaction back', value: { eventId: 'evt_1006', externalConversationId: 'chat-42', sender: { externalId: 'cust-7' }, type: 'reaction', target: { providerMessageId: 'wamid.HBgLMTU1NTAxMjM0NTY3FQIAERgSQzVGMjQ0' }, emoji: '👍', removed: true } },
          typing: { summary: 'The customer is typing', value: { eventId: 'evt_1007', externalConversationId: 'chat-42', sender: { externalId: 'cust-7' }, type: 'typing' } },
        },
        responses: {
          '201': { applied: { summary: 'Applied', value: { conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', applied: true, duplicate: false } } },
          '202': { pending: { summary: 'Waiting for its target', value: { conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', applied: false, duplicate: false } } },
          '200': {
            ignored: { summary: 'Ignored (the message was deleted)', value: { conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', applied: false, duplicate: false } },
            duplicate: { summary: 'Duplicate of an applied event', value: { conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', applied: true, duplicate: true } },
            typingUnknownChat: { summary: 'Typing in a chat the desk does not know: nothing stored', value: { applied: false, duplicate: false } },
          },
        },
      },
    },
  },
  updateChannel: {
    path: '/v1/channel',
    method: 'PUT',
    functionName: 'updateChannel',
    ...MESSAGES,
    // A small JSON body and one Firestore transaction on the integration document.
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'rate_limited'],
    suites: ['test/integration/integrations/channel.test.ts'],
    summary: "Declare the channel: its reply window and its message templates",
    description:
      "Replaces what the body names of your integration's channel facts: `window` (how long after the customer's latest message a free-text reply may go out; null: none) and `templates` (every template the channel accepts, with its params and a preview). A field the body does not name stays as stored; a body names at least one. Each template's preview uses each of its params as `{{name}}` and no other placeholder; (`name`, `language`) is unique. The answer is the channel as stored; the same body again changes nothing (`updatedAt` stays). A refused body writes nothing. The console shows the channel, read-only, on the integration. The rate limit, the key and the body limits are those of `POST /v1/messages`.",
    openapi: {
      tag: 'channel',
      shape: 'json',
      components: 'Channel',
      responseDescription: 'The channel as stored.',
      rateLimited: true,
      examples: {
        request: {
          whatsapp: {
            summary: 'A WhatsApp channel: a 24-hour window and one template',
            value: { window: { seconds: 86400 }, templates: [{ name: 'order_update', language: 'en-US', params: [{ name: 'order', maxLength: 32 }], preview: 'Your order {{order}} has shipped.' }] },
          },
          windowOnly: { summary: 'Only the window (the templates stay)', value: { window: null } },
        },
        responses: {
          '200': {
            stored: {
              summary: 'Stored',
              value: { window: { seconds: 86400 }, templates: [{ name: 'order_update', language: 'en-US', params: [{ name: 'order', maxLength: 32 }], preview: 'Your order {{order}} has shipped.' }], updatedAt: 1767268920000 },
            },
          },
        },
      },
    },
  },
} as const satisfies Record<string, HttpOperation>;

// ------------------------------------------------------------------------------------ deliveries

const DELIVERIES = { bundle: 'deliveries/http' } as const;
const DELIVERY_SUITES = ['test/integration/deliveries/operations.test.ts', 'test/integration/deliveries/validation.test.ts'] as const;

/**
 * The deliveries feature (functions/src/deliveries/http.ts `endpoints`: most are transitions, each
 * naming its `decide*` rule of rules/state-machine.ts there).
 */
export const DELIVERY_OPERATIONS = {
  claimDelivery: {
    path: '/v1/deliveries/claim',
    functionName: 'claimDelivery',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'lease_busy', 'retry_delayed'],
    suites: [...DELIVERY_SUITES, 'test/integration/deliveries/edits.test.ts'],
    summary: 'Claim a delivery: read the reply and recipient under a lease',
    description: ({ leaseSeconds }) =>
      `\`ready\`: a ${leaseSeconds}-second lease, the text and the recipient. A retried claim with the same \`requestId\` gets the same lease back; another \`requestId\` gets 503 \`lease_busy\` while the lease is live. \`skip\`: nothing to do now; \`reason\` is \`waiting_for_previous\` (an earlier reply of the conversation is unfinished: acknowledge the notification, a new one comes), \`already_sent\`, \`already_failed\` or \`outcome_unknown\`. For an integration with the \`replies.lifecycle\` capability a \`ready\` claim may carry \`kind\` (\`edit\`: change the sent message to \`message.text\`; \`unsend\`: take it back) and \`target\` (the reply's sent delivery and the provider ids reported for it); a claim without \`kind\` is a reply to send, exactly as in v1. A connector that cannot carry a kind fails the delivery \`failed\` with code \`unsupported_kind\`. Every \`ready\` claim of a conversation with connector metadata (the merge of the \`metadata\` of its incoming messages) carries it as \`conversation.metadata\`; without any there is no \`conversation\`.`,
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Claim',
      responseDescription: 'The claim result.',
      examples: {
        request: { claim: { summary: 'Claim', value: { deliveryId: DELIVERY_ID, requestId: 'claim-2b7f0c1e' } } },
        responses: {
          '200': {
            ready: {
              summary: 'Ready: send it',
              value: {
                status: 'ready',
                leaseId: LEASE_ID,
                leaseExpiresAt: 1767268920000,
                message: { text: 'Your parcel left the warehouse today.', recipient: { externalConversationId: 'chat-42', externalCustomerId: 'cust-7' } },
              },
            },
            edit: {
              summary: 'Ready: edit the sent reply (replies.lifecycle)',
              value: {
                status: 'ready',
                kind: 'edit',
                leaseId: LEASE_ID,
                leaseExpiresAt: 1767268920000,
                message: { text: 'Your parcel left the warehouse this morning.', recipient: { externalConversationId: 'chat-42', externalCustomerId: 'cust-7' } },
                target: { deliveryId: DELIVERY_ID, providerMessageIds: ['wamid.HBgM1234'] },
              },
            },
            unsend: {
              summary: 'Ready: take the sent reply back (replies.lifecycle)',
              value: {
                status: 'ready',
                kind: 'unsend',
                leaseId: LEASE_ID,
                leaseExpiresAt: 1767268920000,
                message: { recipient: { externalConversationId: 'chat-42', externalCustomerId: 'cust-7' } },
                target: { deliveryId: DELIVERY_ID, providerMessageIds: ['wamid.HBgM1234'] },
              },
            },
            waiting: { summary: 'Skip: an earlier reply is unfinished', value: { status: 'skip', reason: 'waiting_for_previous' } },
            alreadySent: { summary: 'Skip: already sent', value: { status: 'skip', reason: 'already_sent' } },
          },
        },
      },
    },
  },
  startDelivery: {
    path: '/v1/deliveries/start',
    functionName: 'startDelivery',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'lease_lost', 'delivery_finished'],
    suites: DELIVERY_SUITES,
    summary: 'Record the intent to send, before contacting the provider',
    description:
      'Send through the provider only when the answer is `sending`. A retried start under the same lease answers `sending` again; `sent` means the delivery was already sent: do not send.',
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Start',
      responseDescription: 'The delivery status.',
      examples: {
        request: { start: { summary: 'Start', value: { deliveryId: DELIVERY_ID, leaseId: LEASE_ID } } },
        responses: { '200': statusExamples({ sending: 'Send now', sent: 'Already sent: do not send' }) },
      },
    },
  },
  extendDeliveryLease: {
    path: '/v1/deliveries/extend',
    functionName: 'extendDeliveryLease',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'lease_lost', 'delivery_finished', 'lease_limit_reached'],
    suites: ['test/integration/platform/runtime-envelope.test.ts', 'test/integration/deliveries/extend.test.ts', 'test/integration/deliveries/validation.test.ts'],
    summary: 'Extend the lease while the provider call is still running',
    description: ({ leaseSeconds, leaseMaxMinutes }) =>
      `Under the live current lease of a delivery that is \`leased\` or \`sending\`: the lease now ends ${leaseSeconds} seconds from now (\`leaseExpiresAt\`, epoch ms), but never later than ${leaseMaxMinutes} minutes after its claim: the granted expiry is clamped to that cap, and once the lease already ends there, the answer is 409 \`lease_limit_reached\`. Extend when half of the remaining lease has passed and the provider call is still running (the SDK's \`processDelivery\` does). An expired lease, or one that a newer lease replaced, is 409 \`lease_lost\` (an expired lease is never revived); a finished delivery is 409 \`delivery_finished\`. After any refusal, let a running provider call finish and report its outcome as usual: complete is accepted from the last lease even after it expired. Safe to repeat: an extend never shortens the lease.`,
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Extend',
      responseDescription: 'The lease is extended.',
      examples: {
        request: { extend: { summary: 'Extend', value: { deliveryId: DELIVERY_ID, leaseId: LEASE_ID } } },
        responses: { '200': { extended: { summary: 'Extended', value: { leaseExpiresAt: 1767268980000 } } } },
      },
    },
  },
  completeDelivery: {
    path: '/v1/deliveries/complete',
    functionName: 'completeDelivery',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'lease_lost', 'conflicting_completion', 'unknown_part', 'conversation_required'],
    suites: DELIVERY_SUITES,
    summary: 'Report that the provider accepted the message',
    description:
      'Only after the provider actually accepted the message. Accepted from the lease that holds or last held the delivery, even after the lease expired. Idempotent for the same lease and the same ids; anything else after `sent` is 409 `conflicting_completion`.',
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Complete',
      responseDescription: 'Sent.',
      examples: {
        request: { complete: { summary: 'Complete', value: { deliveryId: DELIVERY_ID, leaseId: LEASE_ID, providerMessageIds: ['wamid.HBgLMTU1NTAxMjM0NTY3FQIAERgSQzVGMjQ0'] } } },
        responses: { '200': statusExamples({ sent: 'Sent' }) },
      },
    },
  },
  failDelivery: {
    path: '/v1/deliveries/fail',
    functionName: 'failDelivery',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'lease_lost', 'unknown_part'],
    suites: DELIVERY_SUITES,
    summary: 'Report a failed, rejected or ambiguous send',
    description:
      '`retry` (definite temporary rejection) queues the delivery again (`queued`), or `failed` once the retry budget is spent (10 attempts or 24 hours). `failed` answers `failed`; `unknown` answers `unknown` and the provider call is never repeated automatically. On an already sent delivery the answer is `sent` and nothing changes. The same call repeated under the same lease gets the same answer.',
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Fail',
      responseDescription: 'The delivery status after the report.',
      examples: {
        request: {
          retry: { summary: 'Temporary rejection', value: { deliveryId: DELIVERY_ID, leaseId: LEASE_ID, outcome: 'retry', code: 'provider_throttled', retryAfterMs: 60000 } },
          unknown: { summary: 'Timeout: the provider may have accepted it', value: { deliveryId: DELIVERY_ID, leaseId: LEASE_ID, outcome: 'unknown', code: 'provider_timeout' } },
          failed: { summary: 'Permanent failure', value: { deliveryId: DELIVERY_ID, leaseId: LEASE_ID, outcome: 'failed', code: 'recipient_blocked' } },
        },
        responses: { '200': statusExamples({ queued: 'Queued for another attempt', failed: 'Failed for good', unknown: 'Outcome unknown', sent: 'It was already sent' }) },
      },
    },
  },
  listPendingDeliveries: {
    path: '/v1/deliveries/pending',
    functionName: 'listPendingDeliveries',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'invalid_cursor'],
    suites: ['test/integration/platform/runtime-envelope.test.ts', 'test/integration/deliveries/pending.test.ts'],
    summary: 'List the deliveries you can claim now (catch-up)',
    description:
      "Your integration's deliveries that are claimable now (queued, due, first unfinished reply of their conversation), oldest first, each exactly the notification published to your topic for it: claim them as if notified. Call it at start-up and every few minutes, so a lost notification (a subscription created late, deleted or expired) never blocks a conversation. Page with `nextCursor` until it is null; deliveries that arrive meanwhile come after the current position (no duplicates, no gaps). A claimed delivery leaves the list; one that becomes claimable again comes back. The cost does not grow with finished deliveries.",
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Pending',
      responseDescription: 'One page of the list.',
      examples: {
        request: { first: { summary: 'First page', value: { limit: 50 } }, next: { summary: 'Next page', value: { limit: 50, cursor: 'eyJ2IjoxLCJvIjoiLi4uIn0' } } },
        responses: {
          '200': {
            page: {
              summary: 'A page, more to come',
              value: { deliveries: [{ deliveryId: DELIVERY_ID, workspaceId: 'ws_acme', integrationId: 'int_telegram', conversationId: 'c_3vXq9KpL0aTn2mBw8YrEhJ5sUdCz1fGo', messageId: 'r_7Jq2' }], nextCursor: 'eyJ2IjoxLCJvIjoiLi4uIn0' },
            },
            empty: { summary: 'Nothing to catch up', value: { deliveries: [], nextCursor: null } },
          },
        },
      },
    },
  },
  reportDeliveryReceipt: {
    path: '/v1/deliveries/receipt',
    functionName: 'reportDeliveryReceipt',
    ...DELIVERIES,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'delivery_not_sent'],
    suites: ['test/integration/platform/runtime-envelope.test.ts', 'test/integration/deliveries/receipts.test.ts'],
    summary: "Report the channel's receipt for a sent reply",
    description:
      'What the channel said after the provider accepted the message: `delivered`, `read`, or `failed` (with a `code`). Only for a `sent` delivery (409 `delivery_not_sent` otherwise); no lease is needed. Receipts never change the delivery, which stays `sent`, and only move forward: `read` is final and a later `delivered` changes nothing; `failed` after `delivered` is recorded; the same receipt again changes nothing. The console shows the latest as `delivery.receipt` on the reply.',
    openapi: {
      tag: 'deliveries',
      shape: 'json',
      components: 'Receipt',
      responseDescription: 'Recorded (or already known).',
      examples: {
        request: {
          delivered: { summary: 'Delivered', value: { deliveryId: DELIVERY_ID, status: 'delivered', at: 1767268925000 } },
          read: { summary: 'Read', value: { deliveryId: DELIVERY_ID, status: 'read', at: 1767268990000 } },
          failed: { summary: 'Failed after acceptance', value: { deliveryId: DELIVERY_ID, status: 'failed', code: 'recipient_unreachable' } },
        },
        responses: { '200': statusExamples({ sent: 'The delivery stays sent' }) },
      },
    },
  },
  getDeliveryAttachment: {
    path: '/v1/deliveries/attachment',
    functionName: 'getDeliveryAttachment',
    ...DELIVERIES,
    /*
     * Answers up to 10 MB per request (the file is read whole: the platform's non-streamed response
     * limit is 32 MB). 16 concurrent maximum-size fetches hold ~2 copies each (the object and the
     * response) = 320 MB over an idle ~170 MiB: about 0.5 of 1 GiB.
     */
    options: { memory: '1GiB', cpu: 1, concurrency: 16 },
    errorCodes: [...COMMON_ERRORS, 'delivery_not_found', 'lease_lost', 'delivery_finished', 'attachment_not_found'],
    suites: ['test/integration/deliveries/attachments.test.ts'],
    summary: 'Download one attachment of the claimed reply',
    description:
      "Under the live lease of a delivery that is `leased` or `sending`: the bytes of one file of the claim's `message.attachments`, with `Content-Type`, `Content-Length`, `Content-Disposition` (the sanitised file name), `ETag: \"<sha256 hex>\"` and `Repr-Digest: sha-256=:<base64>:`. Check the hash before sending the file on. A wrong or expired lease is 409 `lease_lost`; a finished delivery is 409 `delivery_finished`; an id that is not one of the delivery's files is 404 `attachment_not_found`.",
    // The 200 is the file's bytes (docs/contract.md#fetch-an-attachment): no response component.
    openapi: { tag: 'deliveries', shape: 'file', components: 'Attachment' },
  },
} as const satisfies Record<string, HttpOperation>;

// ------------------------------------------------------------------------------------ privacy

const PRIVACY = { bundle: 'privacy/http' } as const;

/**
 * The privacy feature (functions/src/privacy/http.ts `endpoints`). Its components are named with
 * its tag (`ErasuresPending`), so a verb it shares with the deliveries (`pending`) keeps one
 * component each.
 */
const PRIVACY_OPERATIONS = {
  listPendingErasures: {
    path: '/v1/erasures/pending',
    functionName: 'listPendingErasures',
    ...PRIVACY,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'invalid_cursor'],
    suites: ['test/integration/platform/runtime-envelope.test.ts', 'test/integration/privacy/erasure-ack.test.ts'],
    summary: 'List the erasures you have not acknowledged yet',
    description:
      "Your integration's finished customer erasures that you have not acknowledged, in `erasureId` order. The service has deleted the customer's messages (and every conversation in which they were the only customer); delete your own copies of the customer and of those conversations, then acknowledge each with `POST /v1/erasures/ack`. Page with `nextCursor` until it is null. Call it at start-up and every few minutes.",
    openapi: { tag: 'erasures', shape: 'json', components: 'ErasuresPending' },
  },
  acknowledgeErasure: {
    path: '/v1/erasures/ack',
    functionName: 'acknowledgeErasure',
    ...PRIVACY,
    options: DELIVERY_FUNCTION,
    errorCodes: [...COMMON_ERRORS, 'erasure_not_found'],
    suites: ['test/integration/platform/runtime-envelope.test.ts', 'test/integration/privacy/erasure-ack.test.ts'],
    summary: 'Acknowledge that you purged an erased customer',
    description:
      'Records that your connector deleted its own copies of the erased customer; the erasure leaves your pending list and the console shows it as confirmed. Repeatable (the first acknowledgement is kept). An unknown id, another integration\'s erasure, or one not finished yet is 404 `erasure_not_found`.',
    openapi: { tag: 'erasures', shape: 'json', components: 'ErasuresAck' },
  },
} as const satisfies Record<string, HttpOperation>;

// ------------------------------------------------------------------------------------ the catalogue

/** Every operation of the API, feature by feature (the order of the OpenAPI paths and the rewrites). */
export const HTTP_OPERATIONS = { ...MESSAGE_OPERATIONS, ...DELIVERY_OPERATIONS, ...PRIVACY_OPERATIONS } as const satisfies Record<string, HttpOperation>;

type HttpOperations = typeof HTTP_OPERATIONS;
export type OperationId = keyof HttpOperations;

/** The operations one bundle serves: the keys its `endpoints` must have (the feature's http.ts checks it with `satisfies`). */
export type OperationsOf<B extends HttpBundle> = { [Id in OperationId]: HttpOperations[Id]['bundle'] extends B ? Id : never }[OperationId];

/** The catalogue as a list, in its order (the order of the OpenAPI paths and the rewrites). */
export const httpOperations = (): Array<HttpOperation & { operationId: OperationId }> =>
  (Object.keys(HTTP_OPERATIONS) as OperationId[]).map((operationId) => ({ operationId, ...HTTP_OPERATIONS[operationId] }));

/** The handler bundles index.ts requires: those of the HTTP operations, then the triggers'. */
export const handlerBundles = (): HandlerBundle[] => [...new Set<HandlerBundle>([...httpOperations().map((op) => op.bundle), CONSOLE_API.bundle, ...TRIGGER_BUNDLES])];

/** The Hosting rewrites the catalogue derives (firebase.json, `npm run rewrites`): every operation's path, then the console function's. */
export const hostingRewriteTargets = (): Array<{ path: string; functionName: string }> => [
  ...httpOperations().map(({ path, functionName }) => ({ path, functionName })),
  { path: CONSOLE_API.path, functionName: CONSOLE_API.functionName },
];
