import * as z from 'zod';
import { EVENT_LIMITS, MESSAGE_EVENT_TYPES, MESSAGE_LIMITS, METADATA_LIMITS, SENT_AT_MAX_FUTURE_MS, emojiProblem } from '../contract';
import { text } from '../platform/schema';
import type { OperationSchemas, OperationsOf } from '../operations';
import { messageEventProblems } from '../rules/message-events';
import { metadataProblems } from '../rules/metadata';
import { ChannelSchema, ChannelUpdateSchema } from '../integrations/channel-schemas';

/** Incoming message limits (the contract's, shared with the SDK and the console). */
export { MESSAGE_LIMITS };

/** `sender` of an incoming message or event. */
const SenderSchema = z
  .strictObject({
    externalId: text(1, MESSAGE_LIMITS.senderExternalId).describe('Stable identifier of the sender.'),
    displayName: text(0, MESSAGE_LIMITS.displayName).optional(),
    kind: z.enum(['customer', 'service']).default('customer').describe('`service` for alerts.'),
  })
  .describe('Who sent the message.');

/** Wire shape of `POST /v1/messages` (JSON body, or the `payload` field of a multipart body). */
export const IncomingMessageSchema = z
  .strictObject({
    eventId: text(1, MESSAGE_LIMITS.eventId).describe('Identifies the source event; stable across retries. The idempotency key.'),
    providerMessageId: text(1, MESSAGE_LIMITS.providerMessageId)
      .optional()
      .describe("The channel's own id of this message, so that edits, deletions and reactions may name it as `target.providerMessageId`. Unique per integration: another message with it is 409 `provider_message_id_conflict`."),
    externalConversationId: text(1, MESSAGE_LIMITS.externalConversationId).describe('Stable identifier of the external chat.'),
    sender: SenderSchema,
    message: z
      .strictObject({
        text: text(0, MESSAGE_LIMITS.text).optional().describe('At most 10000 characters (code points).'),
      })
      .optional(),
    sentAt: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(`The channel's own time of the message, Unix epoch milliseconds; at most ${SENT_AT_MAX_FUTURE_MS / 60_000} minutes after the time it is received (400 otherwise). Default: the time it is received. Part of the content compared for idempotency when given.`),
    // The key pattern, the counts and the size are the rules' (rules/metadata.ts), checked in the
    // refinement below so that the test service applies the very same code; the JSON Schema says
    // only what a generated client can check itself (a flat map of strings or nulls).
    metadata: z
      .object({})
      .catchall(z.union([z.string(), z.null()]))
      .optional()
      .describe(
        `Connector metadata of the conversation: a flat map of at most ${METADATA_LIMITS.keys} keys (1 to 64 of \`A-Z a-z 0-9 _ . -\`) to strings of at most ${METADATA_LIMITS.value} characters (code points), at most ${METADATA_LIMITS.bytes} bytes in all (the UTF-8 of the map's JSON). The conversation keeps the merge (the latest message wins per key; \`null\` removes a key) within the same limits, and every \`ready\` claim of the conversation carries it as \`conversation.metadata\`. Part of the content compared for idempotency when not empty.`,
      ),
  })
  .superRefine((message, ctx) => {
    if (message.metadata === undefined) return;
    for (const problem of metadataProblems(message.metadata)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .describe('An incoming customer message or service alert.');

/** Wire shape of `POST /v1/messages/events` (JSON only). */
export const MessageEventSchema = z
  .strictObject({
    eventId: text(1, MESSAGE_LIMITS.eventId).describe('Identifies this event; stable across retries. The idempotency key, in the same space as the eventIds of messages.'),
    externalConversationId: text(1, MESSAGE_LIMITS.externalConversationId).describe('Stable identifier of the external chat.'),
    sender: SenderSchema.describe('Who edited, deleted, reacted or is typing.'),
    type: z.enum(MESSAGE_EVENT_TYPES).describe('`edited`, `deleted`, `reaction` or `typing`; each takes its own fields (see the fields).'),
    target: z
      .strictObject({
        eventId: text(1, MESSAGE_LIMITS.eventId).optional().describe('The `eventId` of the customer message (or alert, for a reaction) the event is about.'),
        providerMessageId: text(1, EVENT_LIMITS.providerMessageId)
          .optional()
          .describe(
            "The channel's id of the message: the `providerMessageId` a customer message came with, or an id your connector reported for an operator reply (or one of its parts) in `POST /v1/deliveries/complete`. An id naming both is 409 `ambiguous_target`.",
          ),
      })
      .optional()
      .describe('`edited`, `deleted`, `reaction`: the message the event is about, exactly one of `eventId` and `providerMessageId`.'),
    text: text(1, MESSAGE_LIMITS.text).optional().describe('`edited` only (required): the new text, 1 to 10000 characters (code points).'),
    emoji: text(1, EVENT_LIMITS.emojiBytes)
      .superRefine((value, ctx) => {
        const problem = emojiProblem(value);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .describe(`\`reaction\` only (required): one emoji, exactly one extended grapheme cluster of at most ${EVENT_LIMITS.emojiBytes} bytes of UTF-8.`),
    removed: z.literal(true).optional().describe('`reaction` only: `true` takes the sender\'s reaction with this emoji back.'),
  })
  .superRefine((event, ctx) => {
    for (const problem of messageEventProblems(event)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .describe('An event about an earlier message of a conversation: an edit, a deletion, a reaction, or typing.');

/** Success body of `POST /v1/messages/events` (201 applied, 202 pending, 200 ignored or duplicate). */
const MessageEventResponseSchema = z.strictObject({
  conversationId: z
    .string()
    .optional()
    .describe('The conversation, as `POST /v1/messages` names it. Absent only for `typing` in a chat the desk does not know (200, not applied: nothing was stored).'),
  applied: z.boolean().describe('True when the event changed what the desk shows (201, or a duplicate of a 201); false when it waits for its target (202) or was ignored (200: it changes nothing, its target was deleted, or typing in a chat the desk does not know).'),
  duplicate: z.boolean().describe('True for an identical retry of an earlier event: nothing new was written.'),
});
export type MessageEvent = z.output<typeof MessageEventSchema>;
export type MessageEventResponse = z.output<typeof MessageEventResponseSchema>;

/** Success body of `POST /v1/messages` (201 new, 200 duplicate). */
const IncomingMessageResponseSchema = z.strictObject({
  conversationId: z.string(),
  messageId: z.string(),
  duplicate: z.boolean(),
});
export type IncomingMessageResponse = z.output<typeof IncomingMessageResponseSchema>;

/**
 * The schemas of each messages operation of the catalogue (../operations.ts). The OpenAPI document
 * describes `sendMessage` by hand around them (multipart, 201/200, rate-limit headers). `updateChannel`
 * is here because it shares the messages' function bundle: its key, rate limit and envelope are theirs.
 */
export const MESSAGE_OPERATION_SCHEMAS = {
  sendMessage: { request: IncomingMessageSchema, response: IncomingMessageResponseSchema },
  sendMessageEvent: { request: MessageEventSchema, response: MessageEventResponseSchema },
  updateChannel: { request: ChannelUpdateSchema, response: ChannelSchema },
} as const satisfies { [Id in OperationsOf<'messages/http'>]: OperationSchemas };
