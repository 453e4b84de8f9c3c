/**
 * The pure modules of decision 17's console: the reply window (console/src/window-format.ts), template
 * replies (console/src/template-format.ts) and conversations the desk starts
 * (console/src/start-format.ts).
 */
import { fillPreview, findTemplate, templateReplyText, paramMaxLength, paramProblem, templateChoice, templateKey, templateLabel, templateProblem } from '../../../console/src/template-format';
import { failureText, formatTimeLeft, windowState, windowText } from '../../../console/src/window-format';
import { addressProblem, readStartKinds, startErrorText, startKindsProblem, startKindsText } from '../../../console/src/start-format';
import type { ChannelTemplateView } from '../../../console/src/integration-channel-format';

const ORDER: ChannelTemplateView = { name: 'order_update', language: 'en-US', params: [{ name: 'order', maxLength: 20 }, { name: 'day' }], preview: 'Your order {{order}} ships {{ day }}.' };

describe('window', () => {
  const stored = (closesAtMs: number | undefined) => ({ closesAtMs, lastCustomerSentAtMs: undefined });
  test('none without a declared window (a stored one then means nothing); closed when declared and no customer wrote', () => {
    expect(windowState(null, stored(undefined), 1000)).toEqual({ kind: 'none' });
    expect(windowState(null, stored(5000), 1000)).toEqual({ kind: 'none' });
    expect(windowState(86_400, stored(undefined), 1000)).toEqual({ kind: 'closed', closesAtMs: undefined });
  });
  test('open until closesAt, closed at closesAt exactly (closesAt <= now)', () => {
    expect(windowState(86_400, stored(5000), 1000)).toEqual({ kind: 'open', closesAtMs: 5000, leftMs: 4000 });
    expect(windowState(86_400, stored(5000), 5000)).toEqual({ kind: 'closed', closesAtMs: 5000 });
    expect(windowState(86_400, stored(5000), 5001)).toEqual({ kind: 'closed', closesAtMs: 5000 });
  });
  test("without a stored closesAt, from the customer's latest sentAt + the window - the minute of margin", () => {
    expect(windowState(3600, { closesAtMs: undefined, lastCustomerSentAtMs: 0 }, 1000)).toEqual({ kind: 'open', closesAtMs: 3_540_000, leftMs: 3_539_000 });
    expect(windowState(3600, { closesAtMs: undefined, lastCustomerSentAtMs: 0 }, 3_540_000).kind).toBe('closed');
    // A stored closesAt (the connector closed it) wins.
    expect(windowState(3600, { closesAtMs: 10, lastCustomerSentAtMs: 0 }, 1000)).toEqual({ kind: 'closed', closesAtMs: 10 });
  });
  test('time left, rounded down, two units at most', () => {
    expect(formatTimeLeft(90_061_000)).toBe('1 d 1 h');
    expect(formatTimeLeft(86_400_000)).toBe('1 d');
    expect(formatTimeLeft(4_320_000)).toBe('1 h 12 min');
    expect(formatTimeLeft(3_600_999)).toBe('1 h');
    expect(formatTimeLeft(725_900)).toBe('12 min 5 s');
    expect(formatTimeLeft(120_000)).toBe('2 min');
    expect(formatTimeLeft(45_999)).toBe('45 s');
    expect(formatTimeLeft(-5)).toBe('0 s');
  });
  test('the line in words', () => {
    expect(windowText({ kind: 'none' })).toBe('');
    expect(windowText({ kind: 'open', closesAtMs: 1, leftMs: 4_320_000 })).toBe('Reply window: 1 h 12 min left for free text.');
    expect(windowText({ kind: 'closed', closesAtMs: 1 })).toBe('Window closed: the channel takes only a template until the customer writes again.');
    expect(windowText({ kind: 'closed', closesAtMs: undefined })).toMatch(/^Window closed: the customer has not written yet/);
  });
  test('failures in words for the codes the service refuses before publishing', () => {
    expect(failureText('window_closed')).toMatch(/reply window had closed/);
    expect(failureText('template_invalid')).toMatch(/does not declare this template/);
    expect(failureText('recipient_blocked')).toBeUndefined();
    expect(failureText(undefined)).toBeUndefined();
  });
});

describe('templates', () => {
  test('key and lookup ignore the language case', () => {
    expect(templateKey(ORDER)).toBe('order_update:en-us');
    expect(findTemplate([ORDER], { name: 'order_update', language: 'EN-us' })).toBe(ORDER);
    expect(findTemplate([ORDER], { name: 'order_update', language: 'fr' })).toBeUndefined();
    expect(templateLabel(ORDER)).toBe('order_update (en-US)');
  });
  test('param limits: its own maxLength under 1024, else 1024', () => {
    expect(paramMaxLength({ name: 'a', maxLength: 20 })).toBe(20);
    expect(paramMaxLength({ name: 'a', maxLength: 5000 })).toBe(1024);
    expect(paramMaxLength({ name: 'a' })).toBe(1024);
  });
  test('param checks count code points as the rules do', () => {
    expect(paramProblem({ name: 'order' }, '')).toBe('Fill in order.');
    expect(paramProblem({ name: 'order' }, '   ')).toBeUndefined(); // the rules count code points only
    expect(paramProblem({ name: 'order', maxLength: 2 }, '😀😀')).toBeUndefined();
    expect(paramProblem({ name: 'order', maxLength: 2 }, '😀😀😀')).toBe('order is too long by 1 characters (at most 2).');
    expect(paramProblem({ name: 'x' }, 'a'.repeat(1025))).toBe('x is too long by 1 characters (at most 1024).');
    expect(templateProblem(ORDER, { order: '#1234' })).toBe('Fill in day.');
    expect(templateProblem(ORDER, { order: '#1234', day: 'today' })).toBeUndefined();
  });
  test('the preview filled in; a missing value keeps its placeholder', () => {
    expect(fillPreview(ORDER.preview, { order: '#1234', day: 'today' })).toBe('Your order #1234 ships today.');
    expect(fillPreview(ORDER.preview, { order: '#1234' })).toBe('Your order #1234 ships {{ day }}.');
    expect(fillPreview('{{a}}{{a}}', { a: '$&' })).toBe('$&$&');
  });
  test('a template reply reads as its filled preview, or its label and params once the channel dropped it', () => {
    expect(templateReplyText({ name: 'order_update', language: 'en-us', params: { order: '#1', day: 'today' } }, [ORDER])).toBe('Your order #1 ships today.');
    expect(templateReplyText({ name: 'gone', language: 'en', params: { a: 'x', b: 'y' } }, [ORDER])).toBe('gone (en) · a: x · b: y');
    expect(templateReplyText({ name: 'gone', language: 'en', params: {} }, [])).toBe('gone (en)');
  });
  test('the written choice carries exactly the template params', () => {
    expect(templateChoice(ORDER, { order: '#1', day: 'today', stray: 'x' })).toEqual({ name: 'order_update', language: 'en-US', params: { order: '#1', day: 'today' } });
  });
});

describe('starts', () => {
  test('the integration field: 1..3 distinct known kinds, else absent', () => {
    expect(readStartKinds({ start: { addressKinds: ['email', 'phone'] } })).toEqual(['phone', 'email']);
    expect(readStartKinds(undefined)).toBeUndefined();
    expect(readStartKinds({ start: { addressKinds: [] } })).toBeUndefined();
    expect(readStartKinds({ start: { addressKinds: ['phone', 'phone'] } })).toBeUndefined();
    expect(readStartKinds({ start: { addressKinds: ['fax'] } })).toBeUndefined();
    expect(startKindsProblem([])).toMatch(/at least one/);
    expect(startKindsProblem(['handle'])).toBeUndefined();
  });
  test('the card in words', () => {
    expect(startKindsText(undefined)).toBe('Members cannot start conversations on this integration.');
    expect(startKindsText(['phone'])).toBe('Members may start conversations by phone number.');
    expect(startKindsText(['phone', 'email', 'handle'])).toBe('Members may start conversations by phone number, email address or handle.');
  });
  test('addresses as the rules check them', () => {
    expect(addressProblem('phone', '+447700900123')).toBeUndefined();
    expect(addressProblem('phone', '+1234567')).toBeUndefined();
    for (const bad of ['447700900123', '+0447700900', '+44 7700 900123', '+123456', '+1234567890123456']) expect(addressProblem('phone', bad)).toMatch(/^A phone number/);
    expect(addressProblem('email', 'grace@example.com')).toBeUndefined();
    expect(addressProblem('email', 'grace@@example.com')).toMatch(/one @/);
    expect(addressProblem('email', 'grace.example.com')).toMatch(/one @/);
    expect(addressProblem('email', 'grace hopper@example.com')).toMatch(/no spaces/);
    expect(addressProblem('email', `${'a'.repeat(250)}@b.co`)).toMatch(/at most 254/);
    expect(addressProblem('handle', '@grace_h')).toBeUndefined();
    expect(addressProblem('handle', 'a\u0007b')).toMatch(/control/);
    expect(addressProblem('handle', '😀'.repeat(256))).toBeUndefined();
    expect(addressProblem('handle', '😀'.repeat(257))).toMatch(/at most 256/);
    expect(addressProblem('email', '')).toBe("Enter the customer's email address.");
  });
  test('refusals in words, with the code', () => {
    expect(startErrorText('template_required', undefined)).toBe('This channel has a reply window: a conversation the desk starts must begin with a template. (template_required)');
    expect(startErrorText('something_new', 'details')).toBe('The service refused to start the conversation. (something_new: details)');
  });
});
