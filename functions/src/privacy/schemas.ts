import * as z from 'zod';
import { DELIVERY_LIMITS } from '../contract';
import { text } from '../platform/schema';
import type { OperationSchemas, OperationsOf } from '../operations';

/** docs/contract.md#erasures: the erasures the connector has not acknowledged, paged like the catch-up list. */
const ErasuresPendingRequestSchema = z.strictObject({
  limit: z.number().int().min(1).max(DELIVERY_LIMITS.pendingPage).default(DELIVERY_LIMITS.pendingDefault).describe(`Page size (default ${DELIVERY_LIMITS.pendingDefault}).`),
  cursor: text(1, DELIVERY_LIMITS.pendingCursor).optional().describe('`nextCursor` of the previous page; omit for the first page.'),
});

const erasure = z.strictObject({
  erasureId: z.string().describe('Acknowledge it with this id once your own copies are purged.'),
  externalCustomerId: z.string().describe("The erased customer, in your system's words (`sender.externalId`)."),
  externalConversationIds: z.array(z.string()).describe('The conversations in which the customer wrote (their messages are gone; a conversation with no other customer is gone entirely).'),
  requestedAt: z.number().int().describe('When the admin asked for the erasure, Unix epoch milliseconds.'),
});

const ErasuresPendingResponseSchema = z.strictObject({
  erasures: z.array(erasure).describe('Finished erasures of your integration not acknowledged yet, in `erasureId` order.'),
  nextCursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.'),
});

/** docs/contract.md#erasures: the connector purged its copies of an erased customer. */
const ErasureAckRequestSchema = z.strictObject({
  erasureId: text(1, DELIVERY_LIMITS.id).describe('An `erasureId` from `POST /v1/erasures/pending`.'),
});
const ErasureAckResponseSchema = z.strictObject({ acknowledged: z.literal(true) });

export type ErasuresPendingResponse = z.output<typeof ErasuresPendingResponseSchema>;

/** The schemas of the privacy operations of the catalogue (../operations.ts). */
export const PRIVACY_OPERATION_SCHEMAS = {
  listPendingErasures: { request: ErasuresPendingRequestSchema, response: ErasuresPendingResponseSchema },
  acknowledgeErasure: { request: ErasureAckRequestSchema, response: ErasureAckResponseSchema },
} as const satisfies { [Id in OperationsOf<'privacy/http'>]: OperationSchemas };
