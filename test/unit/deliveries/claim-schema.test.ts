/**
 * The claim's answer on the wire (functions/src/deliveries/schemas.ts) and in the OpenAPI document
 * (functions/src/openapi/json-schema.ts): a plain reply's `ready` keeps its v1 shape; an edit's and
 * an unsend's carry `kind` and `target`; the document discriminates on `status` and lists the
 * three `ready` answers kinds first (readers that take the first match and drop unknown
 * properties, like the SDK's, would otherwise read an edit as a reply to send).
 */
import { DELIVERY_OPERATION_SCHEMAS } from '../../../functions/src/deliveries/schemas';
import { buildOpenApiDocument } from '../../../functions/src/openapi/document';

const claim = DELIVERY_OPERATION_SCHEMAS.claimDelivery.response;
const recipient = { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' };
const target = { deliveryId: 'd_1', providerMessageIds: ['p-1'] };
const lease = { leaseId: 'l_1', leaseExpiresAt: 1 };

test('the zod schema: each answer parses as itself, nothing mixes', () => {
  const plain = { status: 'ready', ...lease, message: { text: 'Hi', recipient } };
  const edit = { status: 'ready', kind: 'edit', ...lease, message: { text: 'Fixed', recipient }, target: { ...target, parts: [{ part: 'text', providerMessageIds: ['p-1'] }] } };
  const unsend = { status: 'ready', kind: 'unsend', ...lease, message: { recipient }, target };
  for (const answer of [plain, edit, unsend, { status: 'skip', reason: 'waiting_for_previous' }]) expect(claim.parse(answer)).toEqual(answer);
  const refused = [
    { ...plain, target }, // a reply has no target
    { ...plain, kind: 'send' },
    { ...edit, target: undefined }, // an edit needs its target
    { ...edit, message: { recipient } }, // and its text
    { ...unsend, message: { text: '', recipient } }, // an unsend has no text
    { ...unsend, kind: 'react' },
  ];
  for (const answer of refused) expect(claim.safeParse(answer).success).toBe(false);
});

test('the document: ClaimResponse discriminated on status; ClaimReady the four ready answers, kinds first', () => {
  const schemas = (buildOpenApiDocument() as { components: { schemas: Record<string, Record<string, unknown>> } }).components.schemas;
  expect(schemas.ClaimResponse).toEqual({
    oneOf: [{ $ref: '#/components/schemas/ClaimSkip' }, { $ref: '#/components/schemas/ClaimReady' }],
    discriminator: { propertyName: 'status', mapping: { skip: '#/components/schemas/ClaimSkip', ready: '#/components/schemas/ClaimReady' } },
  });
  expect(schemas.ClaimReady).toEqual({
    type: 'object',
    properties: { status: { type: 'string', const: 'ready' } },
    required: ['status'],
    oneOf: [{ $ref: '#/components/schemas/ClaimReadyEdit' }, { $ref: '#/components/schemas/ClaimReadyStart' }, { $ref: '#/components/schemas/ClaimReadyUnsend' }, { $ref: '#/components/schemas/ClaimReadySend' }],
  });
  expect(schemas.ClaimReadySend?.required).toEqual(['status', 'leaseId', 'leaseExpiresAt', 'message']);
  // No `kind`; `conversation` (the connector metadata) is optional: a connector that never sends metadata never sees it.
  expect(Object.keys(schemas.ClaimReadySend?.properties as object)).toEqual(['status', 'leaseId', 'leaseExpiresAt', 'message', 'conversation']);
  for (const name of ['ClaimReadyEdit', 'ClaimReadyStart', 'ClaimReadyUnsend', 'ClaimReadySend']) {
    expect(schemas[name]?.properties).toMatchObject({ conversation: { properties: { metadata: { type: 'object', additionalProperties: { type: 'string' } } }, required: ['metadata'] } });
    expect(schemas[name]?.required).not.toContain('conversation');
  }
  expect(schemas.ClaimReadyEdit?.required).toEqual(['status', 'kind', 'leaseId', 'leaseExpiresAt', 'message', 'target']);
  expect(schemas.ClaimReadyUnsend?.properties).toMatchObject({ kind: { const: 'unsend' }, message: { required: ['recipient'] } });
  // A start goes to an address (docs/contract.md#conversations-the-desk-starts): no thread, no target.
  expect(schemas.ClaimReadyStart?.required).toEqual(['status', 'kind', 'leaseId', 'leaseExpiresAt', 'message']);
  expect(schemas.ClaimReadyStart?.properties).toMatchObject({ kind: { const: 'start' }, message: { required: ['text', 'recipient'], properties: { recipient: { required: ['address'] } } } });
  // The title only names the component; it is not kept in it.
  for (const name of ['ClaimReadyEdit', 'ClaimReadyUnsend', 'ClaimReadySend']) expect(schemas[name]).not.toHaveProperty('title');
});
