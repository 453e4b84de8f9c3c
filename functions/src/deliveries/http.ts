/**
 * The connector's delivery endpoints: `endpoints` below holds one handler per delivery operation of
 * the catalogue (../operations.ts `DELIVERY_OPERATIONS`), checked with `satisfies` so that an entry
 * without its handler does not compile. Most are transitions, served without code of their own:
 * `transition(id, rule)` validates the body with the operation's request schema (./schemas.ts
 * `DELIVERY_OPERATION_SCHEMAS`), then the `decide*` rule it references (../rules/state-machine.ts) decides
 * on the delivery the body names, given the body and the transition's facts; its type makes the
 * compiler check that the rule takes that body and answers the response schema's type. The
 * catch-up list and the attachment download have handlers of their own.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type * as z from 'zod';
import { db } from '../platform/firebase';
import { isStorableDocumentId } from '../platform/ids';
import { endpoint, type ParsedRequest, type RequestContext } from '../platform/http/pipeline';
import type { HttpResult } from '../platform/http/types';
import { parseOrThrow } from '../platform/schema';
import { config } from '../platform/config';
import { ServiceUnavailableError } from '../rules/errors';
import { attachmentPath, createImageStore, type ImageStore } from '../platform/object-store';
import { attachmentDownloadHeaders, contentDisposition } from '../rules/file-headers';
import { StreamedBody } from '../platform/http/streamed-body';
import { paths } from '../platform/paths';
import { authenticate } from '../integrations/auth';
import { DELIVERY_OPERATIONS, type OperationsOf } from '../operations';
import { visibleDelivery, type Decision, type DeliveryRecord } from '../rules/record';
import { catchUpPage } from './catch-up-list';
import { DELIVERY_OPERATION_SCHEMAS, type PendingResponse } from './schemas';
import { answerOf, decideAttachmentFetch, DELIVERY_TRANSITIONS, type RuleFacts, type TransitionFacts } from '../rules/state-machine';
import { runTransition } from './transition';
import { startCompletionHooks, type TransitionHooks } from './start-completion';
import { WINDOW_CLOSED } from '../rules/window';

/** Unguessable lease ids: holding one is what authorises start/complete/fail. */
const newLeaseId = (): string => `l_${randomBytes(18).toString('base64url')}`;

/**
 * Runs one delivery transition (./transition.ts) for the calling connector, on a delivery it may
 * see (404 otherwise), and answers the decision's response. Past the request's deadline the client
 * already has its 503, so the transition gives up before writing.
 */
async function transitionForCaller<R>(
  context: RequestContext,
  operationId: string,
  deliveryId: string,
  decide: (d: DeliveryRecord, facts: TransitionFacts) => Decision<R>,
  reads: TransitionReads,
  hooks?: TransitionHooks,
): Promise<R> {
  context.logFields.deliveryId = deliveryId;
  // An id Firestore cannot use as a document id ('a/b', '..', '__x__') names no delivery: the
  // same 404 as any unknown id, not a failed lookup (which would be a 503).
  if (!isStorableDocumentId(deliveryId)) visibleDelivery(null, context.auth);
  const { before, decision, next } = await runTransition<R>(db(), {
    workspaceId: context.auth.workspaceId,
    deliveryId,
    caller: context.auth,
    withConversation: reads.conversation,
    withQueue: reads.queue,
    decide: hooks === undefined ? decide : (d, facts) => hooks.adjust(d, decide(d, facts)),
    ...(hooks === undefined ? {} : { readAlso: (tx, d, decision) => hooks.readAlso(tx, d, decision) }),
    beforeWrite: () => context.deadline.assertTimeLeft(),
  });
  // `caller` makes a missing delivery a 404, and these decisions are never null.
  if (before === null || decision === null) throw new Error('a delivery operation ended without a decision');
  // Logged as `deliveryStatus` once committed (`status` is the request's HTTP status).
  context.logFields.deliveryStatus = decision.next?.status ?? before.status;
  // Claim latency: how long the delivery waited claimable before this claim took it (monitoring/).
  if (decision.next?.status === 'leased' && before.status === 'queued' && before.pendingAt !== undefined) {
    context.logFields.claimLatencyMs = Math.max(0, (decision.next.lease?.claimedAt ?? Date.now()) - before.pendingAt);
  }
  if (next !== null) context.logFields.nextDeliveryId = next.deliveryId;
  return answerOf(operationId, decision.response, next);
}

/** What a transition reads with the delivery, in its one read wave (./transition.ts). */
interface TransitionReads {
  /** The conversation's queue and the conversation (the claim). */
  conversation: boolean;
  /** The conversation's queue: the operation will likely end the delivery and release the next. */
  queue: boolean;
}

/** A JSON delivery endpoint: validate the body with `schema`, run the operation, answer 200. */
const deliveryEndpoint = <S extends z.ZodType, R>(name: string, schema: S, run: (body: z.output<S>, context: RequestContext) => Promise<R>) =>
  endpoint({ name, accepts: ['application/json'], authenticate }, async (request: ParsedRequest, context): Promise<HttpResult> => {
    const body = parseOrThrow(schema, request.json);
    return { status: 200, body: await run(body, context) };
  });

type Endpoint = ReturnType<typeof endpoint>;

/** What a transition rule is given besides the record: the request body and these facts (facts win a name clash). */
type Schemas = typeof DELIVERY_OPERATION_SCHEMAS;
type BodyOf<Id extends keyof Schemas> = z.output<Schemas[Id]['request']>;
type ResponseOf<Id extends keyof Schemas> = z.output<Schemas[Id]['response']>;
/** The delivery operations whose body names a delivery: those a rule can decide. */
type TransitionId = { [Id in keyof Schemas]: BodyOf<Id> extends { deliveryId: string } ? Id : never }[keyof Schemas];
/** The rule of a transition `Id`: it takes `Id`'s body plus the facts, and answers `Id`'s response schema's type. */
type RuleOf<Id extends TransitionId> = (d: DeliveryRecord, input: BodyOf<Id> & RuleFacts) => Decision<ResponseOf<Id>>;

/** What a transition endpoint reads besides the delivery (`TransitionReads`), from its body. */
interface TransitionOptions<Body> {
  /** The body needs the conversation too: a claim (its recipient), a fail that closes the window (docs/contract.md#windows). */
  readsConversation?: (body: Body) => boolean;
  /** The body says the delivery will likely end: read the queue in the first wave. */
  readsQueue?: (body: Body) => boolean;
  /** What the transition adds to its rule (a start's complete: ./start-completion.ts). */
  hooks?: (body: Body) => TransitionHooks;
}

/**
 * The endpoint of a transition operation: body -> `rule`, on the delivery the body names. The rule
 * is referenced directly (not by name), so a reader jumps from the endpoint to it, and this
 * signature has the compiler check it against the operation's schemas (`RuleOf`).
 */
function transition<Id extends TransitionId>(id: Id, rule: RuleOf<Id>, options?: TransitionOptions<BodyOf<Id>>): Endpoint;
/*
 * The implementation sees every transition at once: the body `id`'s schema parses always has a
 * `deliveryId` (`TransitionId`), and the signature above guarantees that `rule` takes that very
 * body, which a generic body cannot express here without a cast.
 */
function transition(id: TransitionId, rule: (d: DeliveryRecord, input: { deliveryId: string } & RuleFacts) => Decision<unknown>, options: TransitionOptions<{ deliveryId: string }> = {}): Endpoint {
  return deliveryEndpoint(`POST ${DELIVERY_OPERATIONS[id].path}`, DELIVERY_OPERATION_SCHEMAS[id].request, (body, context) =>
    transitionForCaller(context, id, body.deliveryId, (d, facts) => rule(d, { ...body, ...facts, newLeaseId: newLeaseId(), random: randomInt(0, 1_000_000) / 1_000_000 }), {
      conversation: options.readsConversation?.(body) === true,
      queue: options.readsQueue?.(body) === true,
    }, options.hooks?.(body)),
  );
}

/** POST /v1/deliveries/pending (listPendingDeliveries): the catch-up list (docs/contract.md#catch-up). */
const listPendingDeliveries = deliveryEndpoint('POST /v1/deliveries/pending', DELIVERY_OPERATION_SCHEMAS.listPendingDeliveries.request, async (body, context): Promise<PendingResponse> => {
  const page = await catchUpPage(db(), context.auth, { limit: body.limit, cursor: body.cursor, now: Date.now() });
  context.logFields.pendingCount = page.deliveries.length;
  return page;
});

/** The object store of reply attachments (../platform/object-store.ts), created on first use. */
let objectStore: ImageStore | undefined;
const attachmentsStore = (): ImageStore => (objectStore ??= createImageStore(config().imageStore));

/** The attachment's Content-Disposition (../rules/file-headers.ts, shared with the console's media). */
export { contentDisposition };

/**
 * POST /v1/deliveries/attachment (getDeliveryAttachment): the bytes of one file of the claimed
 * reply, under the live lease (a read: the delivery is not changed). The file is streamed from the
 * store (docs/decisions.md#stored-files-are-streamed): a missing object, or one whose size is not
 * the recorded one, is a 503 before anything is sent; bytes that turn out not to match the recorded
 * SHA-256 while they pass cut the response off before its last chunk, so a client never receives a
 * complete wrong file (../platform/http/streamed-body.ts; logged as an ERROR naming the delivery and
 * the attachment).
 */
const getDeliveryAttachment = endpoint(
  { name: 'POST /v1/deliveries/attachment', accepts: ['application/json'], authenticate },
  async (request: ParsedRequest, context): Promise<HttpResult> => {
    const body = parseOrThrow(DELIVERY_OPERATION_SCHEMAS.getDeliveryAttachment.request, request.json);
    context.logFields.deliveryId = body.deliveryId;
    const snap = isStorableDocumentId(body.deliveryId) ? await db().doc(paths.delivery(context.auth.workspaceId, body.deliveryId)).get() : null;
    const delivery = visibleDelivery(snap?.exists === true ? (snap.data() as DeliveryRecord) : null, context.auth);
    const file = decideAttachmentFetch(delivery, { now: Date.now(), leaseId: body.leaseId, attachmentId: body.attachmentId });
    context.logFields.attachmentId = file.attachmentId;
    const stored = await attachmentsStore().open(attachmentPath(context.auth.workspaceId, delivery.conversationId, file.attachmentId));
    try {
      if (stored === null || stored.size !== file.size) {
        throw new ServiceUnavailableError('temporarily_unavailable', 'The file cannot be read at the moment; retry after the indicated delay.', ATTACHMENT_RETRY_AFTER_SECONDS);
      }
      context.deadline.assertTimeLeft();
    } catch (err) {
      stored?.stream.destroy();
      throw err;
    }
    return {
      status: 200,
      body: new StreamedBody(stored.stream, { length: file.size, sha256Hex: file.sha256 }),
      headers: attachmentDownloadHeaders(file),
    };
  },
);

/** Seconds before retrying a fetch whose object could not be read. */
const ATTACHMENT_RETRY_AFTER_SECONDS = 5;

type Transitions = typeof DELIVERY_TRANSITIONS;
type TransitionOf = keyof Transitions & TransitionId;

/**
 * Each rule of the table (../rules/state-machine.ts `DELIVERY_TRANSITIONS`) fits its operation's
 * schemas: it takes the body plus the facts and answers the response schema's type, which is also
 * exactly the rule's answer (both ways: a schema and its rule cannot drift apart). A new transition
 * is checked here without a line of its own.
 */
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const checkedRules: { [Id in TransitionOf]: RuleOf<Id> } = DELIVERY_TRANSITIONS;
type AnswersMatch = { [Id in TransitionOf]: SameType<ReturnType<Transitions[Id]>['response'], ResponseOf<Id>> }[TransitionOf];
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<AnswersMatch>();

/**
 * What a transition reads with the delivery in its first wave, where it is more than the delivery:
 * the claim reads the conversation (its answer names the recipient), and so does a `window_closed`
 * fail (it closes the conversation's window); complete and a final fail end
 * the delivery and release the next, so the queue comes in the first wave (a `retry` that finds the
 * retry budget spent fails it too, and reads the queue after deciding).
 */
const FIRST_WAVE: { [Id in TransitionOf]?: TransitionOptions<BodyOf<Id>> } = {
  claimDelivery: { readsConversation: () => true },
  // A start's complete joins the thread's conversation in the same transaction (./start-completion.ts).
  completeDelivery: { readsQueue: () => true, hooks: (body) => startCompletionHooks(db(), body.conversation) },
  // A `window_closed` fail closes the conversation's window in the same transaction: its first wave reads the conversation too.
  failDelivery: { readsQueue: (body) => body.outcome !== 'retry', readsConversation: (body) => body.outcome === 'failed' && body.code === WINDOW_CLOSED },
};

/** One transition of the table as an endpoint, with its first-wave reads. */
const transitionEndpoint = <Id extends TransitionOf>(id: Id): Endpoint => transition(id, checkedRules[id], FIRST_WAVE[id]);

/** Every transition of the table as an endpoint. */
function transitionEndpoints(): { [Id in TransitionOf]: Endpoint } {
  const ids = Object.keys(checkedRules) as TransitionOf[];
  return Object.fromEntries(ids.map((id) => [id, transitionEndpoint(id)])) as { [Id in TransitionOf]: Endpoint };
}

/**
 * The handler of each delivery operation, by operationId (index.ts serves `endpoints[operationId]`):
 * the transitions of the rules' table, the catch-up list and the attachment download. `satisfies`
 * makes a catalogue entry without a handler here (or a handler without an entry) a compile error.
 */
export const endpoints = {
  ...transitionEndpoints(),
  listPendingDeliveries,
  getDeliveryAttachment,
} satisfies Record<OperationsOf<'deliveries/http'>, Endpoint>;

