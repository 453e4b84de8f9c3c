import { channelVerdict, type ChannelFacts } from '../../../functions/src/deliveries/reply';
import { DELIVERY_OPERATION_SCHEMAS } from '../../../functions/src/deliveries/schemas';
import { newDelivery } from '../../../functions/src/rules/record';
import { decideAppend, decideClaim, type ClaimInput } from '../../../functions/src/rules/state-machine';
import { failClosesWindow } from '../../../functions/src/rules/window';

const T0 = 1_767_225_600_000;
const ORDER = { name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Order {{order}} shipped.' };
const OPEN: ChannelFacts = { templates: [ORDER], windowClosed: false };
const CLOSED: ChannelFacts = { templates: [ORDER], windowClosed: true };
const TEMPLATE = { name: 'order_update', language: 'en-us', params: { order: 'A-1' } };

describe('channelVerdict (a reply against its channel)', () => {
  test('a text reply goes out while the window is open, fails window_closed once it closed', () => {
    expect(channelVerdict({ text: 'hi', template: undefined, hasAttachments: false }, 'int', true, OPEN)).toEqual({ accepted: true, text: 'hi', integrationId: 'int' });
    expect(channelVerdict({ text: 'hi', template: undefined, hasAttachments: false }, 'int', true, CLOSED)).toEqual({ accepted: false, code: 'window_closed' });
    expect(channelVerdict({ text: '', template: undefined, hasAttachments: true }, 'int', true, CLOSED)).toEqual({ accepted: false, code: 'window_closed' });
  });

  test('a template reply goes out in or out of the window, with the filled preview and the declared name and language', () => {
    for (const channel of [OPEN, CLOSED]) {
      expect(channelVerdict({ text: undefined, template: TEMPLATE, hasAttachments: false }, 'int', true, channel)).toEqual({
        accepted: true,
        text: 'Order A-1 shipped.',
        template: { name: 'order_update', language: 'en-US', params: { order: 'A-1' } },
        integrationId: 'int',
      });
    }
  });

  test('a template reply with text or files, an unknown template, bad params: template_invalid', () => {
    const refused = { accepted: false, code: 'template_invalid' };
    expect(channelVerdict({ text: 'hi', template: TEMPLATE, hasAttachments: false }, 'int', true, OPEN)).toEqual(refused);
    expect(channelVerdict({ text: undefined, template: TEMPLATE, hasAttachments: true }, 'int', true, OPEN)).toEqual(refused);
    expect(channelVerdict({ text: undefined, template: { ...TEMPLATE, name: 'nope' }, hasAttachments: false }, 'int', true, OPEN)).toEqual(refused);
    expect(channelVerdict({ text: undefined, template: { ...TEMPLATE, params: {} }, hasAttachments: false }, 'int', true, OPEN)).toEqual(refused);
    expect(channelVerdict({ text: undefined, template: TEMPLATE, hasAttachments: false }, 'int', true, { templates: [], windowClosed: false })).toEqual(refused);
  });

  test('replies off wins over everything', () => {
    expect(channelVerdict({ text: undefined, template: TEMPLATE, hasAttachments: false }, 'int', false, OPEN)).toEqual({ accepted: false, code: 'replies_disabled' });
  });
});

describe("a template reply's delivery and claim", () => {
  const input: ClaimInput = { now: T0 + 1000, requestId: 'R1', newLeaseId: 'L1', predecessorUnfinished: false, recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } };
  const fields = { deliveryId: 'd1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c1', messageId: 'm1', now: T0, reason: 'created' as const };

  test('the claim carries message.template and the filled text, and fits the response schema', () => {
    const template = { name: 'order_update', language: 'en-US', params: { order: 'A-1' } };
    const { decision } = decideAppend({ nextSeq: 1, unfinished: new Map() }, { ...fields, text: 'Order A-1 shipped.', template });
    expect(decision.next.template).toEqual(template);
    const { response } = decideClaim(decision.next, input);
    expect(response).toMatchObject({ status: 'ready', message: { text: 'Order A-1 shipped.', template } });
    expect(DELIVERY_OPERATION_SCHEMAS.claimDelivery.response.safeParse(response).success).toBe(true);
  });

  test('a free-form reply has no template key (the v1 shape)', () => {
    const { decision } = decideAppend({ nextSeq: 1, unfinished: new Map() }, { ...fields, text: 'hi' });
    const { response } = decideClaim(decision.next, input);
    expect(response.status === 'ready' && 'message' in response ? Object.keys(response.message).sort() : null).toEqual(['recipient', 'text']);
  });
});

describe('failClosesWindow', () => {
  const reply = newDelivery({ deliveryId: 'd1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c1', messageId: 'm1', seq: 1, text: 'hi', now: T0 });
  test("a reply's delivery failed window_closed closes the window; other codes, other outcomes, edits do not", () => {
    expect(failClosesWindow(reply, { status: 'failed', error: { code: 'window_closed' } })).toBe(true);
    expect(failClosesWindow(reply, { status: 'failed', error: { code: 'recipient_unreachable' } })).toBe(false);
    expect(failClosesWindow(reply, { status: 'unknown', error: { code: 'window_closed' } })).toBe(false);
    expect(failClosesWindow(reply, null)).toBe(false);
    expect(failClosesWindow({ ...reply, kind: 'edit' }, { status: 'failed', error: { code: 'window_closed' } })).toBe(false);
  });
});
