/**
 * Entry point: only declares functions (options + handler). Every HTTP operation of the catalogue
 * (./operations.ts) is its own function in europe-central2, exported under its `functionName` and
 * served at the base host through the Hosting rewrites generated from the same catalogue; adding an
 * operation does not touch this file. The triggers are declared below by hand.
 *
 * Handlers are required on each function's first invocation (`lazy`), not imported here: every
 * instance loads this file, so an instance of one function loads only its own handler module and
 * what that imports (claimDelivery never loads busboy or the image code; triggers never load the
 * HTTP pipeline; HTTP functions never load the triggers' code). The catalogue is metadata only, so
 * loading it loads no handler either. The declarations themselves stay synchronous, so the Firebase
 * CLI discovers every function by loading this file. Publishing (@google-cloud/pubsub) is loaded
 * lazily inside the trigger code, never by the HTTP functions.
 *
 * What is required is the handler module's esbuild bundle (lib/bundles/, built after tsc by
 * scripts/bundle-functions.mjs): one file with our code, zod (tree-shaken) and busboy, with
 * firebase-functions, firebase-admin and @google-cloud/* left to node_modules. Loading one
 * file instead of ~130 modules is most of what keeps the cold start near the platform's own. The
 * types are those of the source module each bundle is built from (`HandlerModules` below).
 */
import { onRequest, type HttpsFunction, type HttpsOptions } from 'firebase-functions/v2/https';
import { onDocumentCreated, onDocumentDeleted, onDocumentUpdated, onDocumentWritten } from 'firebase-functions/v2/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { lazy } from './platform/lazy';
import { installRuntimeHooks } from './platform/http/runtime';
import { REGION } from './platform/region';
import { CONSOLE_API, HTTP_OPERATIONS, HTTP_REGION, type HandlerBundle, type HttpBundle, type OperationId, type OperationsOf } from './operations';

/**
 * What `require` returns for each handler bundle: the types of the source module it is built from.
 * Declared here, the one module nothing imports, rather than in the catalogue: a catalogue naming
 * its handler modules, even by type, formed an import cycle with every feature that reads its
 * entries (docs/architecture.md#operations). Type-only: tsc erases these imports.
 */
interface HandlerModules {
  'messages/http': typeof import('./messages/http');
  'messages/triggers': typeof import('./messages/triggers');
  'deliveries/http': typeof import('./deliveries/http');
  'deliveries/triggers': typeof import('./deliveries/triggers');
  'integrations/triggers': typeof import('./integrations/triggers');
  'privacy/http': typeof import('./privacy/http');
  'privacy/triggers': typeof import('./privacy/triggers');
  'console-api/http': typeof import('./console-api/http');
  'console-api/cleanup': typeof import('./console-api/cleanup');
}
type Assert<T extends true> = T;
/** Compiles only while `HandlerModules` types exactly the bundles the catalogue names. */
export type EveryBundleTyped = Assert<[keyof HandlerModules] extends [HandlerBundle] ? ([HandlerBundle] extends [keyof HandlerModules] ? true : false) : false>;

/** The handler module `bundle`, required on first use: its esbuild bundle, typed as its source. */
function requireBundle<B extends HandlerBundle>(bundle: B): HandlerModules[B] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first invocation, see platform/lazy.ts
  return require(`./bundles/${bundle}.js`) as HandlerModules[B];
}

// Before the runtime builds its server (it loads this file first): body-parser failures get our
// envelope, and requests carry their arrival time (platform/http/runtime.ts).
installRuntimeHooks();

/** HTTP functions and triggers (in the Firestore database's location): Warsaw, platform/region.ts. */
const TRIGGER_REGION = REGION;

const httpOptions: HttpsOptions = {
  region: HTTP_REGION,
  // Connectors call server-to-server with a bearer key: no browser CORS, and the function itself is
  // publicly invokable (authentication is the integration key, checked by the handler).
  cors: false,
  invoker: 'public',
  concurrency: 80,
  maxInstances: 20,
  timeoutSeconds: 60,
};

/** The bundles that serve the operations of the catalogue (each exports `endpoints`). */
type OperationBundle = (typeof HTTP_OPERATIONS)[OperationId]['bundle'];
type Endpoint = { [B in OperationBundle]: HandlerModules[B]['endpoints'][keyof HandlerModules[B]['endpoints']] }[OperationBundle];
/**
 * Compiles only while each HTTP bundle's `endpoints` serves every operation the catalogue gives it
 * (each feature's http.ts checks the same with `satisfies`; this is the entry point's side of it).
 */
export type EveryOperationServed = Assert<
  { [B in OperationBundle]: OperationsOf<B> extends keyof HandlerModules[B]['endpoints'] ? true : false }[OperationBundle] extends true ? true : false
>;
/** The console's bundle is an HTTP bundle too, with its own handler rather than `endpoints`. */
export type ConsoleBundleIsHttp = Assert<typeof CONSOLE_API.bundle extends HttpBundle ? true : false>;

/** The handler of operation `id`: `endpoints[id]` of the bundle the catalogue names. */
function handlerOf(id: OperationId): Endpoint {
  const endpoints: Partial<Record<OperationId, Endpoint>> = requireBundle(HTTP_OPERATIONS[id].bundle).endpoints;
  const handler = endpoints[id];
  if (handler === undefined) throw new Error(`${HTTP_OPERATIONS[id].bundle} serves no ${id}`);
  return handler;
}

/**
 * One HTTP function per operation, named by the catalogue (`claimDelivery`, `messages`, ...).
 * Exported through `module.exports` because the names come from data: the Firebase CLI, the
 * emulator and the functions framework all find a function as a property of the loaded module.
 * (Not as an exported object: the CLI would read that as a function group, `httpFunctions-messages`.)
 */
const httpFunctions: Readonly<Record<string, HttpsFunction>> = Object.fromEntries(
  (Object.keys(HTTP_OPERATIONS) as OperationId[]).map((id) => {
    const operation = HTTP_OPERATIONS[id];
    return [operation.functionName, onRequest({ ...httpOptions, ...operation.options }, lazy(() => handlerOf(id)))];
  }),
);
Object.assign(module.exports, httpFunctions);

/**
 * The console's function (operations.ts `CONSOLE_API`, docs/console.md#console-endpoints): uploads
 * of reply files and members-only media under `/console/v1/**` on the Hosting site, authenticated
 * with the member's Firebase ID token (so, like the connectors' functions, publicly invokable).
 * Exported under the catalogue's name, which its Hosting rewrite names too.
 */
Object.assign(module.exports, {
  [CONSOLE_API.functionName]: onRequest({ ...httpOptions, ...CONSOLE_API.options }, lazy(() => requireBundle(CONSOLE_API.bundle).consoleApi)),
});

/** Operator reply written by the console -> delivery + notification (exactly one per reply). */
export const onReplyWritten = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/conversations/{conversationId}/messages/{messageId}', retry: true },
  lazy(() => requireBundle('deliveries/triggers').onReplyCreated),
);
/**
 * Every update of a message, one function for both features that act on one:
 * - the console's requests on a reply (deliveries/triggers.ts): cancel (recall before send,
 *   docs/decisions.md#recall-before-send-cancel), resend of a failed/unknown reply
 *   (docs/decisions.md#operator-resend), edit and unsend of a sent one (docs/contract.md#edits-and-unsends);
 * - for message events (messages/triggers.ts), a reply's new provider ids: recorded for reactions by
 *   `target.providerMessageId`, and the reactions waiting for them applied (docs/contract.md#message-events).
 * WHY one function: it fires on every message update, the service's own mirror writes included
 * (several per delivery), and almost every update is neither's business; a function per feature
 * doubled those invocations. Both handlers return at once on an update that is not theirs and are
 * idempotent, so they run side by side and a retry (after either failed) redoes nothing the other
 * finished.
 */
export const onReplyUpdated = onDocumentUpdated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/conversations/{conversationId}/messages/{messageId}', retry: true },
  lazy(() => {
    const replyRequests = requireBundle('deliveries/triggers').onReplyUpdated;
    const replyProviderIds = requireBundle('messages/triggers').onReplyProviderIds;
    return async (event: Parameters<typeof replyRequests>[0]): Promise<void> => {
      const results = await Promise.allSettled([replyRequests(event), replyProviderIds(event)]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    };
  }),
);
/** A member's request to start a conversation -> the conversation, its first message and a `start` delivery (or the start's `error`). */
export const onConversationStartCreated = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/conversationStarts/{startId}', retry: true },
  lazy(() => requireBundle('deliveries/triggers').onStartCreated),
);
/** A pending message event's document deleted by its TTL (24 hours, its target never came): one log line per dropped event. */
export const onPendingEventsDeleted = onDocumentDeleted(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/pendingEvents/{pendingId}' },
  lazy(() => requireBundle('messages/triggers').onPendingEventsDeleted),
);
/** Transactional outbox -> the owner's Pub/Sub topic (at least once). */
export const publishNotifications = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'outbox/{outboxId}', retry: true },
  lazy(() => requireBundle('deliveries/triggers').onOutboxCreated),
);
/** Delayed notifications (retry at `notBefore`). */
export const publishDueNotification = onTaskDispatched(
  { region: TRIGGER_REGION, retryConfig: { maxAttempts: 10, minBackoffSeconds: 5 }, rateLimits: { maxConcurrentDispatches: 50 } },
  lazy(() => requireBundle('deliveries/triggers').onPublishDue),
);
/** Safety net: missed notifications and expired leases, every minute. */
export const sweepDeliveries = onSchedule(
  { region: TRIGGER_REGION, schedule: 'every 1 minutes', timeoutSeconds: 120 },
  lazy(() => requireBundle('deliveries/triggers').onSweep),
);
/**
 * Integration health for the console (`integrationHealth/{integrationId}`), every minute: counts,
 * oldest claimable, last sent, last error; at most one write per integration per minute.
 */
export const rollUpIntegrationHealth = onSchedule(
  { region: TRIGGER_REGION, schedule: 'every 1 minutes', timeoutSeconds: 120 },
  lazy(() => requireBundle('deliveries/triggers').onHealthRollUp),
);
/** Integration created or changed (console/CLI): replies topic check (`replies.topicStatus`), key-hash uniqueness. */
export const onIntegrationWritten = onDocumentWritten(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/integrations/{integrationId}', retry: true },
  lazy(() => requireBundle('integrations/triggers').onIntegrationChanged),
);
/**
 * Erasure of one customer (docs/privacy.md#erasure): an admin's erasure document starts the job at once; it continues
 * itself in bounded runs through the task queue below until its audit is `done`.
 */
export const onErasureRequested = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/erasures/{erasureId}', retry: true },
  lazy(() => requireBundle('privacy/triggers').onErasureCreated),
);
/** The next bounded run of an erasure (each run hands over to the next task until done). */
export const continueErasure = onTaskDispatched(
  { region: TRIGGER_REGION, retryConfig: { maxAttempts: 20, minBackoffSeconds: 5 }, rateLimits: { maxConcurrentDispatches: 10 } },
  lazy(() => requireBundle('privacy/triggers').onErasureTask),
);
/**
 * Retention (docs/privacy.md#retention): stamps `expireAt` for the TTL policies, deletes the messages that name
 * stored objects (objects first) and conversations itself, and under the emulator deletes what expired (it
 * runs no TTL). Bounded per run.
 */
export const applyRetention = onSchedule(
  { region: TRIGGER_REGION, schedule: 'every 10 minutes', timeoutSeconds: 300 },
  lazy(() => requireBundle('privacy/triggers').onRetention),
);
/**
 * Uploads no reply took within 24 hours: object first, then record (docs/data-model.md#attachment-uploads).
 * Bounded per run and resumable; the local stack runs it itself (scripts/stack.mjs).
 */
export const cleanUpUnusedUploads = onSchedule(
  { region: TRIGGER_REGION, schedule: 'every 10 minutes', timeoutSeconds: 120 },
  lazy(() => requireBundle('console-api/cleanup').onUploadCleanup),
);
/** Export of one customer (docs/privacy.md#export): an admin's export document -> its JSON Lines file. */
export const onExportRequested = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/exports/{exportId}', retry: true, timeoutSeconds: 300, memory: '1GiB' },
  lazy(() => requireBundle('privacy/triggers').onExportCreated),
);
/**
 * An export's file for the workspace's admins (docs/privacy.md#export): GET with the console's Firebase ID token.
 * Not an operation of the connectors' API (no integration key), so not in the catalogue.
 */
export const downloadExport = onRequest(
  { region: TRIGGER_REGION, cors: false, invoker: 'public', memory: '512MiB', timeoutSeconds: 60 },
  lazy(() => requireBundle('privacy/triggers').downloadExport),
);
