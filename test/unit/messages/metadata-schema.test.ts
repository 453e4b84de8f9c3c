/**
 * The `metadata` and `sentAt` of POST /v1/messages as its schema reads them (functions/src/messages/schemas.ts):
 * the rules of rules/metadata.ts as the schema's refinement, 400 `invalid_request` naming the field.
 */
import { BadRequestError } from '../../../functions/src/rules/errors';
import { parseOrThrow } from '../../../functions/src/platform/schema';
import { IncomingMessageSchema } from '../../../functions/src/messages/schemas';

const message = { eventId: 'e1', externalConversationId: 'chat-1', sender: { externalId: 'cust-1' }, message: { text: 'hi' } };

/** What parsing `body` throws, as a BadRequestError. */
function refusal(body: unknown): BadRequestError {
  try {
    parseOrThrow(IncomingMessageSchema, body);
  } catch (err) {
    if (err instanceof BadRequestError) return err;
    throw err;
  }
  throw new Error('expected a BadRequestError');
}

test('metadata: a nested value, a bad key, a non-object are 400 invalid_request naming the field; strings and nulls pass', () => {
  expect(refusal({ ...message, metadata: { a: { b: 'c' } } }).message).toContain('metadata.a');
  expect(refusal({ ...message, metadata: { 'bad key': 'x' } })).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('metadata.bad key') });
  expect(refusal({ ...message, metadata: ['x'] }).code).toBe('invalid_request');
  expect(refusal({ ...message, metadata: { a: 'x'.repeat(513) } }).message).toContain('at most 512 characters');
  expect(parseOrThrow(IncomingMessageSchema, { ...message, metadata: { a: 'x', b: null } }).metadata).toEqual({ a: 'x', b: null });
});

test('sentAt: a non-integer, a negative number, a string are 400 naming it; an integer passes', () => {
  for (const sentAt of [1.5, -1, '1767225600000', null]) expect(refusal({ ...message, sentAt }).message).toContain('sentAt');
  expect(parseOrThrow(IncomingMessageSchema, { ...message, sentAt: 1_767_225_600_000 }).sentAt).toBe(1_767_225_600_000);
});
