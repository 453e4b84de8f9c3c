/**
 * The conformance scenarios (decision 16): each sets a situation up through the test service's
 * operator calls and faults, waits for the connector's outcome, and checks the end state. The
 * runner adds the rules checker's verdict (`violations({ final: true })`) to every one.
 * docs/conformance.md describes each in words.
 */
import { LEASE_MS, type LifecycleKind } from '../internal/contract.generated.js';
import type { ConnectorClient } from '../client.js';
import type { ChannelMessage, IncomingInput, StartAddressKind } from './connector.js';
import type { CreatedIntegration, IntegrationCapabilities, OperationId, RecordedCall, TestService } from '../testing/types.js';

/** What a scenario works with (one fresh service and integration per scenario). */
interface ScenarioContext {
  service: TestService;
  integration: CreatedIntegration;
  /** The conversation the runner's customer opened before the connector started. */
  conversationId: string;
  externalConversationId: string;
  customerId: string;
  /** The kinds of address the connector declares it starts conversations by (`starts`); empty: none. */
  startKinds: readonly StartAddressKind[];
  /** A client with the integration's key: the runner plays another connector instance with it (`start-answers-sent`). */
  client: ConnectorClient;
  /** The connector's inbound hook (`sendIncoming`), when it has one. */
  sendIncoming: ((input: IncomingInput) => Promise<void>) | undefined;
  /** The connector's channel view (`channelMessage`), when it has one. */
  channelMessage: ((providerMessageId: string) => ChannelMessage | undefined) | undefined;
  /** `service.waitFor` with the scenario's timeout; rejects with a message naming `what`. */
  waitFor(predicate: () => boolean, what: string): Promise<void>;
  /** Waits `ms` (real time) so that a misbehaving connector has the time to misbehave. */
  settle(ms: number): Promise<void>;
}

export interface Scenario {
  name: string;
  /** One line: what it provokes and what it expects. */
  title: string;
  capabilities?: IntegrationCapabilities;
  /** The service clock runs this much behind real time (leases then look short to the connector). */
  serviceClockOffsetMs?: number;
  /** Passed to the connector's `start()` as `providerDelayMs`. */
  providerDelayMs?: number;
  /** Needs the connector's `sendIncoming`; skipped without it. */
  needsIncoming?: boolean;
  /** A scenario of a delivery kind after the send: runs only for a connector that declares it (`lifecycle`). */
  lifecycle?: LifecycleKind;
  /** Runs only for a connector that declares it handles a reply window (`windows`, `--windows`). */
  windows?: true;
  /** Runs only for a connector that declares the address kinds it starts conversations by (`starts`, `--starts`). */
  starts?: true;
  /** Before the connector starts (the runner's customer has written already). */
  before?(ctx: ScenarioContext): void | Promise<void>;
  /** After the connector started: provoke and wait. */
  run(ctx: ScenarioContext): Promise<void>;
  /** The end state: what went wrong, one sentence each (empty: as expected). */
  check(ctx: ScenarioContext): string[];
}

/** A scenario that could not reach its outcome. */
class ScenarioError extends Error {
  override name = 'ScenarioError';
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});
const body = (c: RecordedCall): Json => obj(c.request.body);
const answer = (c: RecordedCall): Json => obj(c.response.body);
const code = (c: RecordedCall): unknown => obj(answer(c).error).code;

/** The calls of one operation about one delivery. */
function callsOf(ctx: ScenarioContext, operationId: OperationId, deliveryId: string): RecordedCall[] {
  return ctx.service.calls({ integrationId: ctx.integration.integrationId, operationId }).filter((c) => body(c).deliveryId === deliveryId);
}
function delivery(ctx: ScenarioContext, deliveryId: string) {
  const d = ctx.service.deliveries({ integrationId: ctx.integration.integrationId }).find((x) => x.deliveryId === deliveryId);
  if (d === undefined) throw new ScenarioError(`delivery ${deliveryId} is gone`);
  return d;
}
const statusOf = (ctx: ScenarioContext, deliveryId: string): string => delivery(ctx, deliveryId).status;
const sendingStarts = (ctx: ScenarioContext, deliveryId: string) => callsOf(ctx, 'startDelivery', deliveryId).filter((c) => c.response.status === 200 && answer(c).status === 'sending');
const completes = (ctx: ScenarioContext, deliveryId: string) => callsOf(ctx, 'completeDelivery', deliveryId).filter((c) => c.response.status === 200);

/** Delivered once: `sent`, one lease started, one accepted completion. */
function deliveredOnce(ctx: ScenarioContext, deliveryId: string): string[] {
  const problems: string[] = [];
  const status = statusOf(ctx, deliveryId);
  if (status !== 'sent') problems.push(`delivery ${deliveryId} ended ${status}, not sent`);
  const leases = new Set(sendingStarts(ctx, deliveryId).map((c) => body(c).leaseId));
  if (leases.size === 0) problems.push(`delivery ${deliveryId} was never started (no start answered \`sending\`)`);
  if (leases.size > 1) problems.push(`delivery ${deliveryId} was started (answered sending) under ${leases.size} leases: the provider was called ${leases.size} times`);
  const completed = new Set(completes(ctx, deliveryId).map((c) => JSON.stringify([body(c).leaseId, body(c).providerMessageIds])));
  if (completed.size > 1) problems.push(`delivery ${deliveryId} was completed ${completed.size} times with different leases or ids`);
  return problems;
}

const REPLY = 'Your order #1234 ships today (conformance check).';

function reply(ctx: ScenarioContext, text = REPLY, files?: { fileName: string; contentType: string; data: Uint8Array }[]): string {
  return ctx.service.reply({ conversationId: ctx.conversationId, text, ...(files === undefined ? {} : { files }) }).deliveryId;
}

const plainReply: Scenario = {
  name: 'plain-reply',
  title: 'an operator reply is claimed, started, sent once and completed',
  async run(ctx) {
    const id = reply(ctx);
    await ctx.waitFor(() => statusOf(ctx, id) === 'sent', 'the reply to be sent');
    (ctx as ScenarioState).deliveryId = id;
  },
  check: (ctx) => deliveredOnce(ctx, idOf(ctx)),
};

const claimRetryAfter: Scenario = {
  name: 'claim-503-retry-after',
  title: 'the claim answers 503 with Retry-After: 2; the connector retries the same claim after two seconds',
  async run(ctx) {
    // Two seconds, as for start's 503: with one, a connector that retries at once was seen to pass
    // on a saturated machine (its immediate retry reached the service after the second was over).
    ctx.service.inject('claimDelivery', { status: 503, retryAfterSeconds: 2 });
    const id = reply(ctx);
    (ctx as ScenarioState).deliveryId = id;
    await ctx.waitFor(() => statusOf(ctx, id) === 'sent', 'the reply to be sent after the refused claim');
  },
  check(ctx) {
    const id = idOf(ctx);
    const problems = deliveredOnce(ctx, id);
    const claims = callsOf(ctx, 'claimDelivery', id);
    if (!claims.some((c) => c.injected)) problems.push('the injected 503 never reached a claim of this delivery');
    return problems;
  },
};

/** The provider id the runner reports when it sends a reply as "another instance". */
const OTHER_INSTANCE_ID = 'conformance-other-instance';

function waitingSkips(ctx: ScenarioContext, deliveryId: string): ReturnType<typeof callsOf> {
  return callsOf(ctx, 'claimDelivery', deliveryId).filter((c) => answer(c).status === 'skip' && answer(c).reason === 'waiting_for_previous');
}

const skipWaiting: Scenario = {
  name: 'skip-waiting-for-previous',
  title: 'another instance holds the first reply: the second is claimed meanwhile, skipped and acknowledged, then sent in order once notified again',
  async run(ctx) {
    // Another instance of the connector holds the first reply: the connector's first claim of it
    // is answered 503 lease_busy (Retry-After: 2), then the runner claims it and holds its lease
    // until the connector has claimed the second reply (a connector that works one reply of a
    // conversation at a time meets an unfinished predecessor only this way).
    ctx.service.inject('claimDelivery', { status: 503, code: 'lease_busy', retryAfterSeconds: 2 });
    const first = reply(ctx, 'First reply (conformance check).');
    Object.assign(ctx, { deliveryId: first });
    await ctx.waitFor(() => callsOf(ctx, 'claimDelivery', first).some((c) => c.injected), "the connector's first claim of the first reply");
    const other = await ctx.client.deliveries.claim({ deliveryId: first });
    if (other.status !== 'ready') throw new ScenarioError(`the runner's own claim answered ${other.status}`);
    const second = reply(ctx, 'Second reply (conformance check).');
    Object.assign(ctx, { secondId: second });
    await ctx.waitFor(() => waitingSkips(ctx, second).length > 0, 'the second reply to be claimed while the first is unfinished');
    await ctx.client.deliveries.start({ deliveryId: first, leaseId: other.leaseId });
    await ctx.client.deliveries.complete({ deliveryId: first, leaseId: other.leaseId, providerMessageIds: [OTHER_INSTANCE_ID] });
    await ctx.waitFor(() => statusOf(ctx, second) === 'sent', 'the second reply to be sent');
  },
  check(ctx) {
    const first = idOf(ctx);
    const second = (ctx as ScenarioState).secondId ?? '';
    const problems = [...deliveredOnce(ctx, first), ...deliveredOnce(ctx, second)];
    const firstIds = delivery(ctx, first).providerMessageIds.join(',');
    if (firstIds !== OTHER_INSTANCE_ID) problems.push(`delivery ${first} carries provider ids ${firstIds}: the connector sent it too, under another instance's lease`);
    if (waitingSkips(ctx, second).length === 0) problems.push('the second reply was never claimed while the first was unfinished (the scenario did not happen)');
    const firstDone = completes(ctx, first)[0];
    const secondStart = sendingStarts(ctx, second)[0];
    if (firstDone !== undefined && secondStart !== undefined && secondStart.receivedAt < firstDone.answeredAt) problems.push('the second reply was started before the first was completed');
    return problems;
  },
};

const startSent: Scenario = {
  name: 'start-answers-sent',
  title: 'while the connector waits to start, another instance sends the reply: start answers `sent` and the connector stops',
  async run(ctx) {
    ctx.service.inject('startDelivery', { status: 503, retryAfterSeconds: 2 });
    const id = reply(ctx);
    (ctx as ScenarioState).deliveryId = id;
    // The connector's first start was refused; it waits 2 s before trying again.
    await ctx.waitFor(() => callsOf(ctx, 'startDelivery', id).some((c) => c.injected), "the connector's first start");
    const connectorLease = String(body(callsOf(ctx, 'startDelivery', id).find((c) => c.injected)!).leaseId);
    (ctx as ScenarioState).connectorLease = connectorLease;
    // Another instance takes over once the lease ran out, and sends the reply.
    ctx.service.expireLease(id);
    const claim = await ctx.client.deliveries.claim({ deliveryId: id });
    if (claim.status !== 'ready') throw new ScenarioError(`the runner's own claim answered ${claim.status}`);
    await ctx.client.deliveries.start({ deliveryId: id, leaseId: claim.leaseId });
    await ctx.client.deliveries.complete({ deliveryId: id, leaseId: claim.leaseId, providerMessageIds: [OTHER_INSTANCE_ID] });
    await ctx.waitFor(
      () => callsOf(ctx, 'startDelivery', id).some((c) => body(c).leaseId === connectorLease && answer(c).status === 'sent'),
      "the connector's start to be answered `sent`",
    );
    await ctx.settle(500);
  },
  check(ctx) {
    const id = idOf(ctx);
    const d = delivery(ctx, id);
    const problems: string[] = [];
    if (d.status !== 'sent') problems.push(`delivery ${id} ended ${d.status}, not sent`);
    if (d.providerMessageIds.join(',') !== OTHER_INSTANCE_ID) problems.push(`delivery ${id} carries provider ids ${d.providerMessageIds.join(', ')}: the connector sent it too`);
    return problems;
  },
};

const leaseLostOnComplete: Scenario = {
  name: 'lease-lost-on-complete',
  title: 'complete answers 409 lease_lost: the connector drops that lease (no retry, no fail under it)',
  async run(ctx) {
    ctx.service.inject('completeDelivery', { status: 409, code: 'lease_lost' });
    const id = reply(ctx);
    (ctx as ScenarioState).deliveryId = id;
    await ctx.waitFor(() => callsOf(ctx, 'completeDelivery', id).some((c) => c.injected), 'the connector to complete');
    await ctx.settle(1_000);
  },
  check(ctx) {
    const id = idOf(ctx);
    const problems: string[] = [];
    const leases = new Set(sendingStarts(ctx, id).map((c) => body(c).leaseId));
    if (leases.size > 1) problems.push(`delivery ${id} was started under ${leases.size} leases: the provider was called ${leases.size} times`);
    if (!callsOf(ctx, 'completeDelivery', id).some((c) => c.injected && code(c) === 'lease_lost')) problems.push('the injected lease_lost never reached a complete of this delivery');
    return problems;
  },
};

/** The service clock runs this far behind: a fresh lease then looks 2 s long to the connector. */
const SHORT_LEASE_OFFSET_MS = LEASE_MS - 2_000;

const longProviderCall: Scenario = {
  name: 'long-provider-call',
  title: 'the provider takes longer than the lease has left: the connector extends the lease while it runs',
  serviceClockOffsetMs: SHORT_LEASE_OFFSET_MS,
  providerDelayMs: 3_000,
  async run(ctx) {
    const id = reply(ctx);
    (ctx as ScenarioState).deliveryId = id;
    await ctx.waitFor(() => statusOf(ctx, id) === 'sent' || statusOf(ctx, id) === 'unknown' || statusOf(ctx, id) === 'failed', 'the reply to finish');
  },
  check(ctx) {
    const id = idOf(ctx);
    const problems = deliveredOnce(ctx, id);
    const start = sendingStarts(ctx, id)[0];
    const done = completes(ctx, id)[0];
    const extended = callsOf(ctx, 'extendDeliveryLease', id).filter((c) => c.response.status === 200 && start !== undefined && c.receivedAt >= start.answeredAt && (done === undefined || c.receivedAt <= done.receivedAt));
    if (extended.length === 0) problems.push('the lease was never extended while the provider call ran (extend at half of the remaining lease: docs/contract.md#extend)');
    if (delivery(ctx, id).attempts.some((a) => a.event === 'lease_expired')) problems.push('the lease expired during the provider call');
    return problems;
  },
};

const corruptedAttachment: Scenario = {
  name: 'corrupted-attachment',
  title: "a reply's file has one byte changed: the connector must fail the delivery (retry or failed), never complete it",
  capabilities: { attachments: true },
  async run(ctx) {
    const data = new TextEncoder().encode('Invoice 1234: 2 items, 40.00 EUR\n');
    const id = reply(ctx, 'Your invoice is attached (conformance check).', [{ fileName: 'invoice.txt', contentType: 'text/plain', data }]);
    ctx.service.corruptAttachment(id);
    (ctx as ScenarioState).deliveryId = id;
    await ctx.waitFor(() => callsOf(ctx, 'failDelivery', id).some((c) => c.response.status === 200) || completes(ctx, id).length > 0, 'the connector to report the delivery');
    await ctx.settle(300);
  },
  check(ctx) {
    const id = idOf(ctx);
    const problems: string[] = [];
    if (callsOf(ctx, 'completeDelivery', id).length > 0) problems.push(`delivery ${id} was completed although its file does not match the claim's SHA-256`);
    const fail = callsOf(ctx, 'failDelivery', id).find((c) => c.response.status === 200);
    if (fail !== undefined && body(fail).outcome === 'unknown') problems.push(`delivery ${id} was failed as unknown (${String(body(fail).code)}): nothing was sent, report retry or failed`);
    return problems;
  },
};

const duplicateNotification: Scenario = {
  name: 'duplicate-notification',
  title: 'a sent reply is notified again (a Pub/Sub duplicate): the connector acknowledges it and sends nothing',
  async run(ctx) {
    const id = reply(ctx);
    (ctx as ScenarioState).deliveryId = id;
    await ctx.waitFor(() => statusOf(ctx, id) === 'sent', 'the reply to be sent');
    const claimsBefore = callsOf(ctx, 'claimDelivery', id).length;
    ctx.service.notifyAgain(id);
    // Processed: claimed again (answered skip), or acknowledged without a claim.
    await ctx.waitFor(() => callsOf(ctx, 'claimDelivery', id).length > claimsBefore || ((ctx as ScenarioState).subscriptionIdle?.() ?? false), 'the duplicate to be processed');
    await ctx.settle(300);
  },
  check: (ctx) => deliveredOnce(ctx, idOf(ctx)),
};

const INCOMING_TEXT = 'Where is my parcel? (conformance check)';

const messageRetry: Scenario = {
  name: 'message-retry-after-503',
  title: 'posting an incoming message answers 503 with Retry-After: 1: the connector sends the same event again (same eventId)',
  needsIncoming: true,
  async run(ctx) {
    ctx.service.inject('sendMessage', { status: 503, retryAfterSeconds: 1 });
    const send = ctx.sendIncoming;
    if (send === undefined) throw new ScenarioError('the connector has no sendIncoming');
    await send({ text: INCOMING_TEXT, externalConversationId: 'conformance-chat-2', externalCustomerId: 'customer-2@conformance.test' });
    await ctx.waitFor(() => ctx.service.messages({ integrationId: ctx.integration.integrationId }).some((m) => m.text?.includes(INCOMING_TEXT) === true), 'the message to be stored');
    await ctx.settle(300);
  },
  check(ctx) {
    const problems: string[] = [];
    const stored = ctx.service.messages({ integrationId: ctx.integration.integrationId }).filter((m) => m.text?.includes(INCOMING_TEXT) === true);
    if (stored.length !== 1) problems.push(`the message was stored ${stored.length} times`);
    const posts = ctx.service.calls({ integrationId: ctx.integration.integrationId, operationId: 'sendMessage' });
    if (!posts.some((c) => c.injected)) problems.push('the injected 503 never reached the message');
    return problems;
  },
};

// ------------------------------------------------------------------------------- after the send

const EDITED = 'Your order #1234 ships tomorrow (conformance check, edited).';

/** An edit / unsend delivery, processed once: `sent`, started under one lease, completed once, and nothing but it touched the reply's own delivery. */
function changedOnce(ctx: ScenarioContext, replyId: string, changeId: string, kind: LifecycleKind): string[] {
  const problems = deliveredOnce(ctx, changeId).map((p) => p.replace(`delivery ${changeId}`, `the ${kind} delivery ${changeId}`));
  const original = delivery(ctx, replyId);
  if (original.status !== 'sent') problems.push(`the reply's own delivery ${replyId} ended ${original.status} after the ${kind}`);
  return problems;
}

/** With the connector's channel view: what each of the target's messages shows now. */
function channelProblems(ctx: ScenarioContext, changeId: string, expect: (message: ChannelMessage | undefined) => string | null): string[] {
  const view = ctx.channelMessage;
  if (view === undefined) return [];
  const target = delivery(ctx, changeId).target;
  return (target?.providerMessageIds ?? []).flatMap((id) => {
    const problem = expect(view(id));
    return problem === null ? [] : [`provider message ${id}: ${problem}`];
  });
}

async function sentReplyOf(ctx: ScenarioContext): Promise<{ messageId: string; deliveryId: string }> {
  const created = ctx.service.reply({ conversationId: ctx.conversationId, text: REPLY });
  await ctx.waitFor(() => statusOf(ctx, created.deliveryId) === 'sent', 'the reply to be sent');
  return created;
}

const isOver = (status: string): boolean => status === 'sent' || status === 'failed' || status === 'unknown';

const editReply: Scenario = {
  name: 'edit-reply',
  title: "the operator edits a sent reply: the connector changes the sent message in the channel (never a new one) and completes the edit once",
  lifecycle: 'edit',
  capabilities: { lifecycle: { edit: { windowSeconds: 900 } } },
  async run(ctx) {
    const reply = await sentReplyOf(ctx);
    const edit = ctx.service.edit(reply.messageId, EDITED);
    Object.assign(ctx, { deliveryId: reply.deliveryId, secondId: edit.deliveryId });
    await ctx.waitFor(() => isOver(statusOf(ctx, edit.deliveryId)), 'the edit to be delivered');
    await ctx.settle(200);
  },
  check(ctx) {
    const changeId = (ctx as ScenarioState).secondId ?? '';
    return [
      ...changedOnce(ctx, idOf(ctx), changeId, 'edit'),
      ...channelProblems(ctx, changeId, (m) => (m === undefined ? 'the channel does not know it' : m.text === EDITED ? null : `the channel shows ${JSON.stringify(m.text)}, not the edited text (the provider never edited it)`)),
    ];
  },
};

const unsendReply: Scenario = {
  name: 'unsend-reply',
  title: 'the operator unsends a sent reply: the connector deletes the sent message in the channel and completes the unsend once',
  lifecycle: 'unsend',
  capabilities: { lifecycle: { unsend: { windowSeconds: 900 } } },
  async run(ctx) {
    const reply = await sentReplyOf(ctx);
    const unsend = ctx.service.unsend(reply.messageId);
    Object.assign(ctx, { deliveryId: reply.deliveryId, secondId: unsend.deliveryId });
    await ctx.waitFor(() => isOver(statusOf(ctx, unsend.deliveryId)), 'the unsend to be delivered');
    await ctx.settle(200);
  },
  check(ctx) {
    const changeId = (ctx as ScenarioState).secondId ?? '';
    return [
      ...changedOnce(ctx, idOf(ctx), changeId, 'unsend'),
      ...channelProblems(ctx, changeId, (m) => (m === undefined ? 'the channel does not know it' : m.deleted === true ? null : 'the channel still shows it: the unsend was completed without the provider deleting the message')),
    ];
  },
};

/** The reply the `window-closed` scenario writes: a connector that declares `windows` fails it `window_closed`. */
const WINDOW_REPLY = '#window the channel refuses this one';

const windowClosed: Scenario = {
  name: 'window-closed',
  title: "the channel refuses a reply outside its window: the connector fails it { outcome: failed, code: window_closed } once (no retry, no complete), and the window closes",
  windows: true,
  async before(ctx) {
    // A 24 h window, then a customer message that opens it (the runner's first message came before the window was declared).
    await ctx.client.channel.update({ window: { seconds: 86_400 } });
    await ctx.client.messages.send({ eventId: `window-${ctx.conversationId}`, externalConversationId: ctx.externalConversationId, sender: { externalId: ctx.customerId }, text: 'Are you there?' });
  },
  async run(ctx) {
    const created = ctx.service.reply({ conversationId: ctx.conversationId, text: WINDOW_REPLY });
    Object.assign(ctx, { deliveryId: created.deliveryId });
    await ctx.waitFor(() => isOver(statusOf(ctx, created.deliveryId)), 'the reply to be failed');
    await ctx.settle(200);
  },
  check(ctx) {
    const deliveryId = idOf(ctx);
    const problems: string[] = [];
    const d = delivery(ctx, deliveryId);
    if (d.status !== 'failed' || d.failure?.code !== 'window_closed') problems.push(`the delivery ended ${d.status}${d.failure ? ` (${d.failure.code})` : ''}, not failed with window_closed`);
    const fails = callsOf(ctx, 'failDelivery', deliveryId).map(body);
    if (fails.some((f) => f.outcome !== 'failed')) problems.push('the connector reported window_closed with another outcome than failed (a closed window does not open by retrying)');
    if (completes(ctx, deliveryId).length > 0) problems.push('the connector completed the reply its channel refused');
    try {
      ctx.service.reply({ conversationId: ctx.conversationId, text: 'Still there?' });
      problems.push("the conversation's window is still open after the connector's window_closed");
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'window_closed') throw err;
    }
    return problems;
  },
};

// ------------------------------------------------------------------ conversations the desk starts

/** The new customer the `start-conversation` scenario starts a conversation with, by each kind of address. */
export const START_ADDRESSES: Readonly<Record<StartAddressKind, string>> = Object.freeze({ phone: '+447700900123', email: 'new-customer@conformance.test', handle: 'conformance_new_customer' });
const START_TEXT = 'Hello from the support desk: your order #1234 has shipped (conformance check).';
const START_ANSWER = 'Thanks, that was quick! (conformance check)';
const AFTER_START = 'You are welcome (conformance check).';

interface DeclaredTemplate {
  name: string;
  language: string;
  params: { name: string }[];
}

/** The channel as the connector declared it in this scenario: its accepted `PUT /v1/channel` calls in order, each replacing the fields it names. */
function declaredChannel(ctx: ScenarioContext): { windowed: boolean; templates: DeclaredTemplate[] } {
  let windowed = false;
  let templates: DeclaredTemplate[] = [];
  for (const call of ctx.service.calls({ integrationId: ctx.integration.integrationId, operationId: 'updateChannel' }).filter((c) => c.response.status === 200)) {
    const update = body(call);
    if ('window' in update) windowed = update.window !== null;
    if (Array.isArray(update.templates)) templates = update.templates as DeclaredTemplate[];
  }
  return { windowed, templates };
}

/** One start of the scenario: its address, the started conversation and its delivery; after it was sent, the customer's answer and the operator's next reply. */
interface StartRun {
  kind: StartAddressKind;
  startedConversationId: string;
  deliveryId: string;
  answerConversationId?: string;
  followUpId?: string;
}

const startsOf = (ctx: ScenarioContext): StartRun[] => (ctx as ScenarioState).starts ?? [];

const NO_CONVERSATION =
  "a start's send must return { providerMessageIds, conversation: { externalConversationId, externalCustomerId } }: the thread the channel made (or found) for the address and the customer's id in it";

/** Why a start did not end `sent` with its thread, in the connector's terms. */
function startProblems(ctx: ScenarioContext, run: StartRun): string[] {
  const address = `${run.kind} ${START_ADDRESSES[run.kind]}`;
  const d = delivery(ctx, run.deliveryId);
  const claimed = callsOf(ctx, 'claimDelivery', run.deliveryId).some((c) => answer(c).status === 'ready' && answer(c).kind === 'start');
  if (!claimed) return [`the start to ${address} was never claimed (delivery ${run.deliveryId} ended ${d.status})`];
  const refusedComplete = callsOf(ctx, 'completeDelivery', run.deliveryId).some((c) => c.response.status === 400 && code(c) === 'conversation_required');
  if (d.status === 'unknown' && d.failure?.code === 'start_without_conversation') {
    return [`the connector's send returned no conversation for the start to ${address} (the SDK failed it unknown, start_without_conversation): ${NO_CONVERSATION}`];
  }
  if (d.status !== 'sent') {
    return [`the start to ${address} ended ${d.status}${d.failure ? ` (${d.failure.code})` : ''}, not sent${refusedComplete ? ` after a complete without conversation (400 conversation_required): ${NO_CONVERSATION}` : ''}`];
  }
  const problems = deliveredOnce(ctx, run.deliveryId);
  if (d.start?.thread === undefined) problems.push(`the start to ${address} was completed without the thread it joins: ${NO_CONVERSATION}`);
  if (run.answerConversationId !== undefined && run.followUpId !== undefined) {
    const followUp = delivery(ctx, run.followUpId);
    if (followUp.conversationId !== run.answerConversationId) problems.push(`the customer's answer from the thread landed in ${run.answerConversationId}, the operator's next reply in ${followUp.conversationId}: the start did not join the thread's conversation`);
    if (followUp.status !== 'sent') problems.push(`the operator's reply after the start to ${address} ended ${followUp.status}${followUp.failure ? ` (${followUp.failure.code})` : ''}, not sent`);
  }
  return problems;
}

const startConversation: Scenario = {
  name: 'start-conversation',
  title:
    "the desk starts a conversation to a new customer by each kind of address the connector declares: its send gets input.start with recipient.address and returns the thread (conversation); the start is sent, the customer's answer and the operator's next reply land in the conversation it joined",
  starts: true,
  async run(ctx) {
    const { integrationId } = ctx.integration;
    ctx.service.setCapabilities(integrationId, { conversations: { start: { addressKinds: [...ctx.startKinds] } } });
    // On a channel with a reply window (declared by the connector at start-up), a start needs a template: the first one declared, each param filled.
    const channel = declaredChannel(ctx);
    const template = channel.templates[0];
    if (channel.windowed && template === undefined) throw new ScenarioError('the connector declared a reply window and no template: a conversation the desk starts on its channel must begin with a template (PUT /v1/channel templates)');
    const first = channel.windowed && template !== undefined ? { template: { name: template.name, language: template.language, params: Object.fromEntries(template.params.map((p) => [p.name, 'Conformance'])) } } : { text: START_TEXT };
    const runs: StartRun[] = ctx.startKinds.map((kind) => {
      const started = ctx.service.startConversation({ integrationId, to: { kind, value: START_ADDRESSES[kind] }, ...first });
      if (started.result === undefined || started.deliveryId === undefined) throw new ScenarioError(`the test service refused the start by ${kind}: ${started.error?.code ?? '?'} (${started.error?.message ?? ''})`);
      return { kind, startedConversationId: started.result.conversationId, deliveryId: started.deliveryId };
    });
    (ctx as ScenarioState).starts = runs;
    await ctx.waitFor(() => runs.every((r) => isOver(statusOf(ctx, r.deliveryId))), 'each start to be delivered');
    // Joined: the customer answers from the thread the connector named, and the operator replies in the started conversation (the console follows mergedInto).
    for (const r of runs) {
      const thread = delivery(ctx, r.deliveryId).start?.thread;
      if (statusOf(ctx, r.deliveryId) !== 'sent' || thread === undefined) continue;
      const answered = await ctx.client.messages.send({ eventId: `start-answer-${r.deliveryId}`, externalConversationId: thread.externalConversationId, sender: { externalId: thread.externalCustomerId }, text: START_ANSWER });
      r.answerConversationId = answered.conversationId;
      r.followUpId = ctx.service.reply({ conversationId: r.startedConversationId, text: AFTER_START }).deliveryId;
    }
    await ctx.waitFor(() => runs.every((r) => r.followUpId === undefined || isOver(statusOf(ctx, r.followUpId))), 'the replies after the starts to be delivered');
    await ctx.settle(200);
  },
  check(ctx) {
    const runs = startsOf(ctx);
    if (runs.length === 0) return ['the scenario started no conversation'];
    return runs.flatMap((r) => startProblems(ctx, r));
  },
};

// An email address: the email connector mails replies to the customer's id.
const ERASED_CUSTOMER = 'customer-1@conformance.test';

const erasure: Scenario = {
  name: 'erasure',
  title: 'a customer is erased before the connector starts: it purges its copies and acknowledges the erasure',
  before(ctx) {
    (ctx as ScenarioState).erasureId = ctx.service.erase(ctx.integration.integrationId, ERASED_CUSTOMER).erasureId;
  },
  async run(ctx) {
    const id = (ctx as ScenarioState).erasureId;
    await ctx.waitFor(() => ctx.service.erasures(ctx.integration.integrationId).some((e) => e.erasureId === id && e.acknowledged), 'the erasure to be acknowledged (the connector walks the pending erasures at start-up)');
  },
  check(ctx) {
    const id = (ctx as ScenarioState).erasureId;
    return ctx.service.erasures(ctx.integration.integrationId).some((e) => e.erasureId === id && e.acknowledged) ? [] : [`erasure ${String(id)} was not acknowledged`];
  },
};

/** Per-scenario values kept on the context between `run` and `check`. */
export type ScenarioState = ScenarioContext & { deliveryId?: string; secondId?: string; connectorLease?: string; erasureId?: string; starts?: StartRun[]; subscriptionIdle?: () => boolean };

function idOf(ctx: ScenarioContext): string {
  const id = (ctx as ScenarioState).deliveryId;
  if (id === undefined) throw new ScenarioError('the scenario created no delivery');
  return id;
}

/** The customer the runner plays before each scenario (the erasure scenario erases them). */
export const CONFORMANCE_CUSTOMER = { externalConversationId: 'conformance-chat-1', customerId: ERASED_CUSTOMER, text: 'Hello, my order #1234 has not arrived (conformance check).' };

/** Every scenario, in the order the runner runs them. */
export const SCENARIOS: readonly Scenario[] = Object.freeze([
  plainReply,
  claimRetryAfter,
  skipWaiting,
  startSent,
  leaseLostOnComplete,
  longProviderCall,
  corruptedAttachment,
  duplicateNotification,
  messageRetry,
  erasure,
  editReply,
  unsendReply,
  windowClosed,
  startConversation,
]);
