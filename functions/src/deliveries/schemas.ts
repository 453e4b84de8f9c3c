import * as z from 'zod';
import {
  ATTACHMENT_CONTENT_TYPES,
  ATTACHMENT_ID_PATTERN,
  ATTACHMENT_LIMITS,
  DELIVERY_LIMITS,
  FAIL_CODE_PATTERN,
  isTargetOnlyLifecycleKind,
  LIFECYCLE_KINDS,
  MESSAGE_LIMITS,
  SHA256_HEX_PATTERN,
  SKIP_REASONS,
  TEXT_PART,
  type TargetOnlyLifecycleKind,
} from '../contract';
import { text } from '../platform/schema';
import type { OperationSchemas, OperationsOf } from '../operations';
import type { ClaimResponse, ClaimTarget } from '../rules/answers';
import { receiptProblems } from '../rules/state-machine';
import { metadataProblems } from '../rules/metadata';
import { START_ADDRESS_KINDS } from '../rules/starts';

/** Delivery operation limits (the contract's, shared with the SDK and the console). */
export { DELIVERY_LIMITS };

const id = () => text(1, DELIVERY_LIMITS.id);
const providerMessageId = () => text(1, DELIVERY_LIMITS.providerMessageId);
/** The connector's own reason (docs/contract.md#fail): snake_case, at most 80 characters. */
const failCode = () =>
  z
    .string()
    .max(DELIVERY_LIMITS.failCode)
    .regex(FAIL_CODE_PATTERN, `must match ${FAIL_CODE_PATTERN.source}`);

export const ClaimRequestSchema = z.strictObject({
  deliveryId: id().describe('The delivery to claim (from the notification).'),
  requestId: id().describe('Chosen by the connector per claim attempt; a retried claim with the same requestId gets the same lease.'),
});

const leaseId = () => id().describe('The leaseId of a `ready` claim.');

const StartRequestSchema = z.strictObject({
  deliveryId: id(),
  leaseId: leaseId(),
});

/** docs/contract.md#extend: more time for a long provider call, under the live current lease. */
const ExtendRequestSchema = z.strictObject({
  deliveryId: id(),
  leaseId: leaseId(),
});

/**
 * Per-part outcomes (docs/contract.md#per-part-outcomes): what became of the reply's text and of
 * each file. A part the delivery does not have is 400 naming it (checked by the rule: the schema
 * cannot know the delivery).
 */
const partsSchema = () =>
  z
    .array(
      z.strictObject({
        part: text(1, ATTACHMENT_LIMITS.id).describe(`\`${TEXT_PART}\` or an \`attachmentId\` of the claim's \`message.attachments\`.`),
        status: z.enum(['sent', 'failed']),
        providerMessageIds: z.array(providerMessageId()).max(DELIVERY_LIMITS.providerMessageIds).optional(),
        code: failCode().optional().describe('Why the part failed.'),
      }),
    )
    .min(1)
    .max(ATTACHMENT_LIMITS.maxCount + 1)
    .optional()
    .describe('Optional: the outcome of each part of the reply (its text and each attachment), at most once each.');

const CompleteRequestSchema = z.strictObject({
  deliveryId: id(),
  leaseId: leaseId(),
  providerMessageIds: z
    .array(providerMessageId())
    .min(1)
    .max(DELIVERY_LIMITS.providerMessageIds)
    .describe("The provider's ids of the sent message (several when an adapter split the text)."),
  parts: partsSchema(),
  conversation: z
    .strictObject({
      externalConversationId: text(1, MESSAGE_LIMITS.externalConversationId).describe('The thread the channel made (or found) for the started conversation: what its incoming messages will carry.'),
      externalCustomerId: text(1, MESSAGE_LIMITS.senderExternalId).describe("The customer's id on the channel: what their messages will carry as `sender.externalId`."),
      metadata: z
        .object({})
        .catchall(z.union([z.string(), z.null()]))
        .optional()
        .describe('Connector metadata of the conversation, merged as the `metadata` of an incoming message (`null` removes a key).'),
    })
    .superRefine((c, ctx) => {
      if (c.metadata === undefined) return;
      for (const problem of metadataProblems(c.metadata)) ctx.addIssue({ code: 'custom', path: ['metadata', ...problem.path], message: problem.message });
    })
    .optional()
    .describe('Required for a start (a claim with `kind: "start"`), 400 `conversation_required` without it (the lease stays): the thread the customer\'s answers will come from. Ignored for any other delivery.'),
});

const FailRequestSchema = z.strictObject({
  deliveryId: id(),
  leaseId: leaseId(),
  outcome: z
    .enum(['retry', 'failed', 'unknown'])
    .describe('`retry` only after a definite temporary rejection; `failed` for a permanent failure; `unknown` for an ambiguous or partial send (never repeated automatically).'),
  code: failCode()
    .describe("The connector's own reason, e.g. `provider_timeout`."),
  retryAfterMs: z
    .number()
    .int()
    .min(0)
    .max(DELIVERY_LIMITS.retryAfterMs)
    .optional()
    .describe('For `retry`: not claimable again before this many milliseconds (default: exponential backoff from 30 s to 1 h).'),
  providerMessageIds: z
    .array(providerMessageId())
    .max(DELIVERY_LIMITS.providerMessageIds)
    .optional()
    .describe('For `unknown` or `failed`: ids of the parts the provider did accept (partial sends).'),
  parts: partsSchema(),
});

/** docs/contract.md#fetch-an-attachment: one file of the claimed reply, under the live lease. */
const AttachmentRequestSchema = z.strictObject({
  deliveryId: id(),
  leaseId: leaseId(),
  attachmentId: text(1, ATTACHMENT_LIMITS.id).describe("An `attachmentId` of the claim's `message.attachments`."),
});

/** docs/contract.md#receipts: what the channel reported after `sent`. */
const ReceiptRequestSchema = z
  .strictObject({
    deliveryId: id(),
    status: z.enum(['delivered', 'read', 'failed']).describe('`delivered` to the recipient, `read` by them, or `failed` after the provider had accepted it.'),
    code: failCode().optional().describe('Required when `status` is `failed`: why, e.g. `recipient_unreachable`.'),
    at: z.number().int().min(0).optional().describe("When it happened by the channel's clock, Unix epoch milliseconds (default: when the service receives the receipt)."),
    providerMessageId: providerMessageId().optional().describe('Which provider message it is about, when the reply was sent in several parts.'),
  })
  .superRefine((r, ctx) => {
    for (const problem of receiptProblems(r)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });

/** docs/contract.md#catch-up: the catch-up list of claimable deliveries. */
const PendingRequestSchema = z.strictObject({
  limit: z.number().int().min(1).max(DELIVERY_LIMITS.pendingPage).default(DELIVERY_LIMITS.pendingDefault).describe(`Page size (default ${DELIVERY_LIMITS.pendingDefault}).`),
  cursor: text(1, DELIVERY_LIMITS.pendingCursor).optional().describe('`nextCursor` of the previous page; omit for the first page.'),
});

const recipient = z.strictObject({ externalConversationId: z.string(), externalCustomerId: z.string() });
/** docs/contract.md#claim: the conversation's connector metadata, only when it has some. */
const conversation = z
  .strictObject({
    metadata: z.object({}).catchall(z.string()).describe('The merge of the `metadata` of the conversation\'s incoming messages (the latest message wins per key).'),
  })
  .optional()
  .describe('Only when the conversation has connector metadata (sent with its incoming messages): absent otherwise.');
const AttachmentRefSchema = z.strictObject({
  attachmentId: z.string().regex(ATTACHMENT_ID_PATTERN),
  name: z.string().describe('The file name the operator uploaded (send it sanitised).'),
  contentType: z.enum(ATTACHMENT_CONTENT_TYPES),
  size: z.number().int().min(1).max(ATTACHMENT_LIMITS.maxBytesPerFile).describe('Bytes.'),
  sha256: z.string().regex(SHA256_HEX_PATTERN).describe('SHA-256 of the bytes, lowercase hex.'),
});
/** The provider ids of one part of the reply a lifecycle delivery acts on (its `parts` report). */
const TargetPartSchema = z.strictObject({
  part: z.string().describe(`\`${TEXT_PART}\` or an \`attachmentId\` of the reply.`),
  providerMessageIds: z.array(z.string()),
});
/** What an edit or unsend acts on: the reply's `sent` delivery and the provider ids its connector reported. */
const ClaimTargetSchema = z.strictObject({
  deliveryId: z.string().describe('The delivery that sent the reply.'),
  providerMessageIds: z.array(z.string()).describe("The provider's ids of the sent reply, as its `complete` reported them: the message(s) to edit or delete."),
  parts: z
    .array(TargetPartSchema)
    .min(1)
    .optional()
    .describe('Only when the reply\'s delivery reported per-part outcomes: the ids of each part (its text and each file).'),
});
const ClaimSkipSchema = z.strictObject({
  status: z.literal('skip'),
  // The contract's reasons, and any other string: a later version may add one (docs/contract.md#claim),
  // and a reader generated from this schema (the SDK's) must still accept it.
  reason: z.union([z.enum(SKIP_REASONS), z.string()]).describe('One of the listed reasons; later versions may add others: treat an unknown one like any skip (acknowledge).'),
});
/** A template reply's template, as the claim carries it (docs/contract.md#windows). */
const ReplyTemplateSchema = z
  .strictObject({
    name: z.string().describe("The template's name, as declared."),
    language: z.string().describe("The template's language, as declared."),
    params: z.object({}).catchall(z.string()).describe("Each of the template's params to its value (1 to 1024 characters)."),
  });
/** A plain reply's `ready` claim: exactly the v1 shape (no `kind`, no `target`). */
const ClaimReadySendSchema = z
  .strictObject({
    status: z.literal('ready'),
    leaseId: z.string(),
    leaseExpiresAt: z.number().int().describe('Unix epoch milliseconds.'),
    message: z.strictObject({
      text: z.string().describe('May be empty when the reply has attachments.'),
      recipient,
      attachments: z
        .array(AttachmentRefSchema)
        .min(1)
        .optional()
        .describe('Only for an integration with the `replies.attachments` capability, and only when the reply has files: fetch each with POST /v1/deliveries/attachment.'),
      template: ReplyTemplateSchema.optional().describe(
        'Only when the reply is a template reply (only for an integration that declared templates with PUT /v1/channel): send this template with these params; `text` is its preview filled in, for a channel that has no real templates.',
      ),
    }),
    conversation,
  })
  .describe('Send the reply.')
  .meta({ title: 'Send' });
/** docs/contract.md#edits-and-unsends: replace the text of a sent reply on the channel. */
const ClaimReadyEditSchema = z
  .strictObject({
    status: z.literal('ready'),
    kind: z.literal('edit'),
    leaseId: z.string(),
    leaseExpiresAt: z.number().int().describe('Unix epoch milliseconds.'),
    message: z.strictObject({
      text: z.string().describe("The reply's new text (1 to 10000 code points): it replaces the text of the target's messages."),
      recipient,
    }),
    target: ClaimTargetSchema,
    conversation,
  })
  .describe('Edit a sent reply (only for an integration with `replies.lifecycle.edit`): replace the text of the messages in `target`.')
  .meta({ title: 'Edit' });
/**
 * docs/contract.md#edits-and-unsends: the `ready` claim of each kind that carries no text, as the
 * OpenAPI document names (`title`: the component `ClaimReady<Title>`) and describes it. A new kind
 * is one entry here (the compiler asks for it); its schema is the same for every such kind.
 */
const TARGET_ONLY_CLAIMS = {
  unsend: { title: 'Unsend', description: 'Unsend a sent reply (only for an integration with `replies.lifecycle.unsend`): delete the messages in `target` for the recipient.' },
} as const satisfies Record<TargetOnlyLifecycleKind, { title: string; description: string }>;
const claimReadyTargetOnlySchema = (kind: TargetOnlyLifecycleKind) =>
  z
    .strictObject({
      status: z.literal('ready'),
      kind: z.literal(kind),
      leaseId: z.string(),
      leaseExpiresAt: z.number().int().describe('Unix epoch milliseconds.'),
      message: z.strictObject({ recipient }),
      target: ClaimTargetSchema,
      conversation,
    })
    .describe(TARGET_ONLY_CLAIMS[kind].description)
    .meta({ title: TARGET_ONLY_CLAIMS[kind].title });
/**
 * The claim's answer. The `ready` claims (a reply, an edit, one per kind in TARGET_ONLY_CLAIMS)
 * share `status: "ready"`, so this is a plain union (told apart by `kind`, absent for a plain
 * reply), not a zod discriminated union; the OpenAPI document still discriminates on `status`
 * (`ClaimReady` is the `oneOf` of them, ../openapi/json-schema.ts).
 * Order matters: a reader that takes the first matching option and ignores unknown properties
 * (the SDK's) must try the kinds before the plain reply, or an edit would read as a reply to send.
 */
/** docs/contract.md#conversations-the-desk-starts: the first message of a conversation the desk starts, to an address. */
const ClaimReadyStartSchema = z
  .strictObject({
    status: z.literal('ready'),
    kind: z.literal('start'),
    leaseId: z.string(),
    leaseExpiresAt: z.number().int().describe('Unix epoch milliseconds.'),
    message: z.strictObject({
      text: z.string().describe("The message's text (for a template: its preview with the params filled in)."),
      template: z
        .strictObject({ name: z.string(), language: z.string(), params: z.object({}).catchall(z.string()) })
        .optional()
        .describe('Only when the member started with one of the templates the channel declared.'),
      recipient: z.strictObject({
        address: z.strictObject({ kind: z.enum(START_ADDRESS_KINDS), value: z.string() }).describe('Who to start the conversation with: there is no thread yet.'),
      }),
    }),
    conversation,
  })
  .describe('Start a conversation (only for an integration with `conversations.start`): send the first message to the address, then complete with the thread the channel made (`conversation`).')
  .meta({ title: 'Start' });
const ClaimResponseSchema = z.union([ClaimSkipSchema, ClaimReadyEditSchema, ClaimReadyStartSchema, ...LIFECYCLE_KINDS.filter(isTargetOnlyLifecycleKind).map(claimReadyTargetOnlySchema), ClaimReadySendSchema]);
const StartResponseSchema = z.strictObject({
  status: z.enum(['sending', 'sent']).describe('`sending`: call the provider now, once. `sent`: already sent, do not send again.'),
});
const ExtendResponseSchema = z.strictObject({
  leaseExpiresAt: z.number().int().describe('The new expiry of the lease, Unix epoch milliseconds (like `leaseExpiresAt` of claim).'),
});
const notification = z.strictObject({ deliveryId: z.string(), workspaceId: z.string(), integrationId: z.string(), conversationId: z.string(), messageId: z.string() });
const next = notification.describe(
  "The conversation's next delivery, present when this call ended the delivery and made the next one claimable now: exactly its notification (which is published too). Claim it at once instead of waiting for the notification; a second claim from the notification is harmless.",
);
const CompleteResponseSchema = z.strictObject({ status: z.literal('sent'), next: next.optional() });
const FailResponseSchema = z.strictObject({ status: z.enum(['queued', 'failed', 'unknown', 'sent']), next: next.optional() });
const PendingResponseSchema = z.strictObject({
  deliveries: z.array(notification).describe("Claimable now, oldest first; each item is exactly the delivery notification published to the integration's topic."),
  nextCursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.'),
});
/** The bytes of the file (documented as a binary body by the OpenAPI document, not as JSON). */
const AttachmentResponseSchema = z.string().describe('The bytes of the file.');
const ReceiptResponseSchema = z.strictObject({ status: z.literal('sent').describe('Receipts never change the delivery: it stays `sent`.') });

/**
 * What the rules answer (../rules/answers.ts, plain types) is exactly what these response schemas
 * describe, checked both ways: every transition's answer in ./http.ts (`AnswersMatch`, from the
 * rules' table), and here the claim's parts, whose types the rules name.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameAsRules = <T extends true>(): T | undefined => undefined;
sameAsRules<Same<z.output<typeof ClaimResponseSchema>, ClaimResponse>>();
sameAsRules<Same<z.output<typeof ClaimTargetSchema>, ClaimTarget>>();
export type PendingResponse = z.output<typeof PendingResponseSchema>;

/**
 * The schemas of each delivery operation of the catalogue (../operations.ts): the body deliveries/http.ts
 * validates, and what the OpenAPI document says it answers. A catalogue entry without its schemas
 * here does not compile.
 */
export const DELIVERY_OPERATION_SCHEMAS = {
  claimDelivery: { request: ClaimRequestSchema, response: ClaimResponseSchema },
  startDelivery: { request: StartRequestSchema, response: StartResponseSchema },
  extendDeliveryLease: { request: ExtendRequestSchema, response: ExtendResponseSchema },
  completeDelivery: { request: CompleteRequestSchema, response: CompleteResponseSchema },
  failDelivery: { request: FailRequestSchema, response: FailResponseSchema },
  listPendingDeliveries: { request: PendingRequestSchema, response: PendingResponseSchema },
  reportDeliveryReceipt: { request: ReceiptRequestSchema, response: ReceiptResponseSchema },
  getDeliveryAttachment: { request: AttachmentRequestSchema, response: AttachmentResponseSchema },
} as const satisfies { [Id in OperationsOf<'deliveries/http'>]: OperationSchemas };
