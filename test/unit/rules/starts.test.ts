/**
 * functions/src/rules/starts.ts and the `start` kind of the delivery rules: which addresses a start
 * may name, the verdict with each refusal code, the ids that make a start idempotent, the claim of
 * a start and its `complete` (400 `conversation_required` without the thread, nothing decided).
 */
import { BadRequestError } from '../../../functions/src/rules/errors';
import type { ChannelTemplate } from '../../../functions/src/rules/channel';
import { newDelivery, type DeliveryRecord } from '../../../functions/src/rules/record';
import { decideAppend, decideClaim, decideComplete } from '../../../functions/src/rules/state-machine';
import {
  addressProblem,
  allowedAddressKinds,
  startAddressId,
  startedConversationId,
  startMessageId,
  startVerdict,
  type StartChannelFacts,
} from '../../../functions/src/rules/starts';

const TEMPLATES: ChannelTemplate[] = [{ name: 'hello', language: 'en-US', params: [{ name: 'name', maxLength: 10 }], preview: 'Hi {{name}}, welcome back.' }];
const OPEN: StartChannelFacts = { repliesEnabled: true, addressKinds: ['phone', 'email', 'handle'], windowDeclared: false, templates: TEMPLATES };

describe('addressProblem', () => {
  test.each(['+4915112345678', '+1234567', '+123456789012345'])('phone %s is E.164', (value) => expect(addressProblem('phone', value)).toBeNull());
  test.each(['4915112345678', '+0123456789', '+123456', '+1234567890123456', '+49 151 1234', ''])('phone %j is not', (value) => expect(addressProblem('phone', value)).toMatch(/E\.164/));
  test('email: one @ with something on both sides, at most 254 characters, no spaces', () => {
    expect(addressProblem('email', 'ana@example.com')).toBeNull();
    expect(addressProblem('email', `${'a'.repeat(242)}@example.com`)).toBeNull();
    for (const bad of ['ana.example.com', 'a@b@c', '@example.com', 'ana@', `${'a'.repeat(243)}@example.com`, 'a na@example.com']) expect(addressProblem('email', bad)).toMatch(/one @/);
  });
  test('handle: 1..256 code points, no controls', () => {
    expect(addressProblem('handle', '@ana')).toBeNull();
    expect(addressProblem('handle', '😀'.repeat(256))).toBeNull();
    expect(addressProblem('handle', '😀'.repeat(257))).toMatch(/1 to 256/);
    expect(addressProblem('handle', '')).toMatch(/1 to 256/);
    expect(addressProblem('handle', 'ana\nbob')).toMatch(/control/);
    expect(addressProblem('handle', 'ana\u0085')).toMatch(/control/);
  });
  test('a value that is not a string', () => expect(addressProblem('handle', 42)).toBe('to.value: must be a string'));
});

describe('allowedAddressKinds', () => {
  test('1..3 distinct known kinds', () => {
    expect(allowedAddressKinds({ start: { addressKinds: ['email'] } })).toEqual(['email']);
    expect(allowedAddressKinds({ start: { addressKinds: ['phone', 'email', 'handle'] } })).toEqual(['phone', 'email', 'handle']);
  });
  test.each([undefined, null, {}, { start: {} }, { start: { addressKinds: [] } }, { start: { addressKinds: ['fax'] } }, { start: { addressKinds: ['email', 'email'] } }])('%j: starts are off', (value) =>
    expect(allowedAddressKinds(value)).toBeNull(),
  );
});

describe("a template start: the replies' template rule (functions/src/contract/templates.ts)", () => {
  const to = { kind: 'email', value: 'ana@example.com' };
  test('a language in another case is the declared template: it goes out as declared', () => {
    expect(startVerdict({ to, template: { name: 'hello', language: 'en-us', params: { name: 'Ana' } } }, OPEN)).toEqual({
      accepted: true,
      to,
      text: 'Hi Ana, welcome back.',
      template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } },
    });
  });
  test.each([
    ['an unknown template', { name: 'bye', language: 'en-US', params: { name: 'Ana' } }, /no template 'bye'/],
    ['another language', { name: 'hello', language: 'de', params: { name: 'Ana' } }, /no template 'hello' in language 'de'/],
    ['a missing param', { name: 'hello', language: 'en-US', params: {} }, /param 'name' is missing/],
    ['an extra param', { name: 'hello', language: 'en-US', params: { name: 'Ana', x: 'y' } }, /param 'x' is not a param/],
    ['an empty value', { name: 'hello', language: 'en-US', params: { name: '' } }, /param 'name' must be 1 to 10/],
    ['a value over the param maxLength', { name: 'hello', language: 'en-US', params: { name: 'Anastasia Maria' } }, /param 'name' must be 1 to 10/],
    ['not a map', 'hello', /name, language, params/],
  ])('%s: template_invalid, saying why', (_, template, why) => {
    const verdict = startVerdict({ to, template }, OPEN);
    expect(verdict).toMatchObject({ accepted: false, code: 'template_invalid' });
    expect(verdict.accepted ? '' : verdict.message).toMatch(why);
  });
});

describe('startVerdict', () => {
  const text = { integrationId: 'i1', to: { kind: 'email', value: 'ana@example.com' }, text: 'Hello' };
  test('a text start to an allowed address', () => {
    expect(startVerdict(text, OPEN)).toEqual({ accepted: true, to: { kind: 'email', value: 'ana@example.com' }, text: 'Hello' });
  });
  test('a template start carries the filled preview and the template', () => {
    const verdict = startVerdict({ ...text, text: undefined, template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } } }, { ...OPEN, windowDeclared: true });
    expect(verdict).toEqual({ accepted: true, to: text.to, text: 'Hi Ana, welcome back.', template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } } });
  });
  test.each<[string, Record<string, unknown>, Partial<StartChannelFacts>]>([
    ['starts_disabled', text, { addressKinds: null }],
    ['replies_disabled', text, { repliesEnabled: false }],
    ['invalid_start', { ...text, template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } } }, {}],
    ['invalid_start', { to: text.to }, {}],
    ['invalid_start', { ...text, text: '' }, {}],
    ['invalid_start', { ...text, text: 'x'.repeat(10_001) }, {}],
    ['invalid_start', { ...text, to: 'ana@example.com' }, {}],
    ['invalid_start', { ...text, to: { kind: 'fax', value: '1' } }, {}],
    ['address_kind_not_allowed', text, { addressKinds: ['phone'] }],
    ['invalid_address', { ...text, to: { kind: 'email', value: 'nobody' } }, {}],
    ['template_required', text, { windowDeclared: true }],
    ['template_invalid', { to: text.to, template: { name: 'nope', language: 'en-US', params: {} } }, {}],
  ])('%s', (code, doc, facts) => {
    const verdict = startVerdict(doc, { ...OPEN, ...facts });
    expect(verdict).toMatchObject({ accepted: false, code });
    expect(verdict.accepted === false && verdict.message.length > 0).toBe(true);
  });
});

describe('ids', () => {
  test('deterministic, and apart per integration, start and address', () => {
    expect(startedConversationId('i1', 's1')).toBe(startedConversationId('i1', 's1'));
    expect(startedConversationId('i1', 's1')).toMatch(/^c_[0-9a-f]{32}$/);
    expect(new Set([startedConversationId('i1', 's1'), startedConversationId('i2', 's1'), startedConversationId('i1', 's2')]).size).toBe(3);
    expect(startMessageId('i1', 's1')).toMatch(/^s_[0-9a-f]{32}$/);
    const a = startAddressId('i1', { kind: 'email', value: 'ana@example.com' });
    expect(a).toMatch(/^a_[0-9a-f]{32}$/);
    expect(startAddressId('i1', { kind: 'handle', value: 'ana@example.com' })).not.toBe(a);
    expect(startAddressId('i2', { kind: 'email', value: 'ana@example.com' })).not.toBe(a);
  });
});

describe('the start kind of a delivery', () => {
  const T0 = 1_700_000_000_000;
  const appended = (template?: boolean): DeliveryRecord =>
    decideAppend(
      { nextSeq: 1, unfinished: new Map() },
      {
        deliveryId: 'd1',
        workspaceId: 'w',
        integrationId: 'i1',
        conversationId: 'c1',
        messageId: 's1',
        text: 'Hi Ana, welcome back.',
        start: { to: { kind: 'email', value: 'ana@example.com' } },
        ...(template === true ? { template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } } } : {}),
        now: T0,
        reason: 'created',
      },
    ).decision.next;
  const claimed = (d: DeliveryRecord) => decideClaim(d, { now: T0, requestId: 'r', newLeaseId: 'L1', predecessorUnfinished: false, recipient: { externalConversationId: '', externalCustomerId: '' } });

  test('its claim names the address and the template, no thread', () => {
    expect(claimed(appended(true)).response).toEqual({
      status: 'ready',
      kind: 'start',
      leaseId: 'L1',
      leaseExpiresAt: T0 + 120_000,
      message: { text: 'Hi Ana, welcome back.', template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } }, recipient: { address: { kind: 'email', value: 'ana@example.com' } } },
    });
    expect(claimed(appended()).response).toMatchObject({ kind: 'start', message: { text: 'Hi Ana, welcome back.', recipient: { address: { kind: 'email' } } } });
    expect((claimed(appended()).response as { message: object }).message).not.toHaveProperty('template');
  });

  test('complete without the thread: 400 conversation_required, nothing decided', () => {
    const leased = claimed(appended()).next as DeliveryRecord;
    expect(() => decideComplete(leased, { now: T0 + 1, leaseId: 'L1', providerMessageIds: ['p1'] })).toThrow(expect.objectContaining({ code: 'conversation_required' }) as BadRequestError);
  });

  test('complete with the thread records it on the delivery', () => {
    const leased = claimed(appended()).next as DeliveryRecord;
    const conversation = { externalConversationId: 'thread-1', externalCustomerId: 'cust-1', metadata: { a: 'b' } };
    const decision = decideComplete(leased, { now: T0 + 1, leaseId: 'L1', providerMessageIds: ['p1'], conversation });
    expect(decision.response).toEqual({ status: 'sent' });
    expect(decision.next?.start).toEqual({ to: { kind: 'email', value: 'ana@example.com' }, thread: { externalConversationId: 'thread-1', externalCustomerId: 'cust-1' } });
  });

  test('a reply ignores `conversation` on complete', () => {
    const reply = newDelivery({ deliveryId: 'd2', workspaceId: 'w', integrationId: 'i1', conversationId: 'c1', messageId: 'm', seq: 1, text: 'x', now: T0 });
    const leased = claimed(reply).next as DeliveryRecord;
    expect(decideComplete(leased, { now: T0 + 1, leaseId: 'L1', providerMessageIds: ['p1'] }).next?.start).toBeUndefined();
  });
});
