import * as z from 'zod';
import { MESSAGE_LIMITS } from '../contract';
import { text } from '../platform/schema';
import type { OperationSchemas, OperationsOf } from '../operations';

/** Incoming message limits (the contract's, shared with the SDK and the console). */
export { MESSAGE_LIMITS };

/** Wire shape of `POST /v1/messages` (JSON body, or the `payload` field of a multipart body). */
export const IncomingMessageSchema = z
  .strictObject({
    eventId: text(1, MESSAGE_LIMITS.eventId).describe('Identifies the source event; stable across retries. The idempotency key.'),
    externalConversationId: text(1, MESSAGE_LIMITS.externalConversationId).describe('Stable identifier of the external chat.'),
    sender: z
      .strictObject({
        externalId: text(1, MESSAGE_LIMITS.senderExternalId).describe('Stable identifier of the sender.'),
        displayName: text(0, MESSAGE_LIMITS.displayName).optional(),
        kind: z.enum(['customer', 'service']).default('customer').describe('`service` for alerts.'),
      })
      .describe('Who sent the message.'),
    message: z
      .strictObject({
        text: text(0, MESSAGE_LIMITS.text).optional().describe('At most 10000 characters (code points).'),
      })
      .optional(),
  })
  .describe('An incoming customer message or service alert.');


/** Success body of `POST /v1/messages` (201 new, 200 duplicate). */
const IncomingMessageResponseSchema = z.strictObject({
  conversationId: z.string(),
  messageId: z.string(),
  duplicate: z.boolean(),
});
export type IncomingMessageResponse = z.output<typeof IncomingMessageResponseSchema>;

/**
 * The schemas of each messages operation of the catalogue (../operations.ts). The OpenAPI document
 * describes `sendMessage` by hand around them (multipart, 201/200, rate-limit headers).
 */
export const MESSAGE_OPERATION_SCHEMAS = {
  sendMessage: { request: IncomingMessageSchema, response: IncomingMessageResponseSchema },
} as const satisfies { [Id in OperationsOf<'messages/http'>]: OperationSchemas };
