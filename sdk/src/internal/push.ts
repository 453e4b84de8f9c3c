/**
 * `createPushHandler`: the push equivalent of `runPullLoop`, for a Pub/Sub push subscription.
 * Pub/Sub treats a 2xx answer as an ack and anything else as "deliver again (after backoff)".
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PushAuthenticationError } from '../errors.js';
import type { DeliveryNotification } from '../types.js';
import { ackActionFor, type AckAction } from './ack.js';
import { parsePushNotification } from './notification.js';
import { checkOidcOptions, verifyPubSubOidcToken, type PubSubOidcOptions } from './oidc.js';
import { providerHandlers, type ProcessDeliveryOptions, type Provider } from './process.js';
import type { PullLoopClient } from './pull-loop.js';
import type { DeliveryEvent, ProcessDeliveryResult } from './results.js';

/**
 * What one push request came to: the HTTP status to answer (204 acks, 503 asks Pub/Sub to
 * redeliver, 401 refuses a request whose OIDC token did not verify: Pub/Sub redelivers it too).
 */
export interface PushOutcome {
  status: 204 | 401 | 503;
  action: AckAction;
  /** Absent when the body was not a delivery notification (acked: it would never parse), or the request was refused. */
  notification?: DeliveryNotification;
  result?: ProcessDeliveryResult;
  /** What went wrong; a `PushAuthenticationError` when the request was refused (401, or 503 `jwks_unavailable`). */
  error?: unknown;
}

/** Bodies larger than this are refused with 413 (a notification is a few hundred bytes). */
export const MAX_PUSH_BODY_BYTES = 64 * 1024;

export interface PushHandlerOptions {
  /**
   * Required. How push requests are authenticated: the OIDC token Pub/Sub sends when the push
   * subscription has an authentication service account, checked by `verifyPubSubOidcToken`
   * against `{ audience, serviceAccountEmail }` (plus `jwksUrl`, `fetch`, `now`). `'none'`
   * accepts every request unauthenticated: only for an endpoint nothing else can reach, or one
   * authenticated in front of this handler (and for tests).
   */
  auth: PubSubOidcOptions | 'none';
  /** Options of every `processDelivery` call (`providerTimeoutMs`, `extendLease`). */
  delivery?: Pick<ProcessDeliveryOptions, 'providerTimeoutMs' | 'extendLease'>;
  /** Observes every `processDelivery` event, and each request's outcome (`{ type: 'handled', ...PushOutcome }`). What it throws is ignored. */
  onEvent?: (event: DeliveryEvent | ({ type: 'handled' } & PushOutcome)) => void;
}

/**
 * A Node.js request listener (`http.createServer(handler)`, or an Express / Connect route: a body
 * already parsed into `req.body` is used as is), plus `handleBody` for any other framework.
 */
export interface PushHandler {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void>;
  /**
   * Authenticates one push request by its `Authorization` header (unless `auth: 'none'`), then
   * processes its body (parsed JSON, string or bytes) and says what to answer; never rejects.
   */
  handleBody(body: unknown, authorization?: string | null): Promise<PushOutcome>;
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > MAX_PUSH_BODY_BYTES) return 'too_large';
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** Pub/Sub applies its own backoff to a 503; the header is for anything else in between. */
const RETRY_AFTER_SECONDS = '10';

function answer(res: ServerResponse, status: number, error?: { code: string; message: string }): void {
  if (status === 503) res.setHeader('retry-after', RETRY_AFTER_SECONDS);
  if (status === 401) res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
  if (error === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error }));
}

/** The JSON error of a refused request: the failed check's code and message (never the token). */
function refusal(error: unknown): { code: string; message: string } {
  // The key set's failure names where the keys were fetched from (configuration): that goes to the
  // `handled` event, which the connector logs, never to the unauthenticated caller.
  if (error instanceof PushAuthenticationError && error.code === 'jwks_unavailable') return { code: error.code, message: "Google's signing keys are unavailable; the push will be retried" };
  if (error instanceof PushAuthenticationError) return { code: error.code, message: error.message };
  return { code: 'temporarily_unavailable', message: 'the request could not be authenticated; it will be retried' };
}

/**
 * Handles Pub/Sub push requests: verifies the request's OIDC token (`options.auth`, see
 * `verifyPubSubOidcToken`), parses the envelope, runs `processDelivery`, answers 204 (ack) or 503
 * (redeliver) by the same table as `runPullLoop` (`ackActionFor`). A request whose token is
 * missing or does not verify gets 401 and nothing is processed (503 when Google's keys could not
 * be fetched); a body that is not a notification is acked (204); a method other than POST gets
 * 405, a body over `MAX_PUSH_BODY_BYTES` 413.
 *
 * @throws {TypeError} when `options.auth` is missing or unusable: a handler that would accept
 *   unauthenticated pushes needs an explicit `auth: 'none'`.
 */
export function createPushHandler(client: Pick<PullLoopClient, 'processDelivery'>, provider: Provider, options: PushHandlerOptions): PushHandler {
  if (typeof client?.processDelivery !== 'function') throw new TypeError('createPushHandler needs a ConnectorClient');
  // Checked now, not at the first delivery; passed on as given.
  providerHandlers(provider, 'createPushHandler');
  // No default: forgetting the configuration must fail here, not accept every push in production.
  const auth: unknown = options?.auth;
  if (auth === undefined) {
    throw new TypeError(
      "createPushHandler needs options.auth: { audience, serviceAccountEmail } of the push subscription's OIDC token, or 'none' to accept unauthenticated pushes",
    );
  }
  // A copy: the options checked here are the options used, whatever the caller changes later.
  let verifyOptions: PubSubOidcOptions | undefined;
  if (auth !== 'none') {
    checkOidcOptions(auth, 'createPushHandler options.auth');
    verifyOptions = { ...auth };
  }
  const emit = (event: DeliveryEvent | ({ type: 'handled' } & PushOutcome)): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // An observer must never change what happens to a delivery.
    }
  };

  /** A refusal to answer, or `undefined` when the request may be processed. */
  const authenticate = async (authorization: string | null | undefined): Promise<PushOutcome | undefined> => {
    if (verifyOptions === undefined) return undefined;
    try {
      await verifyPubSubOidcToken(authorization, verifyOptions);
      return undefined;
    } catch (error) {
      // Not acked either way: 401 for the request, 503 when Google's keys could not be had (or a bug).
      const status = error instanceof PushAuthenticationError && error.code !== 'jwks_unavailable' ? 401 : 503;
      const outcome: PushOutcome = { status, action: 'nack', error };
      emit({ type: 'handled', ...outcome });
      return outcome;
    }
  };

  const processBody = async (body: unknown): Promise<PushOutcome> => {
    let outcome: PushOutcome;
    let notification: DeliveryNotification;
    try {
      notification = parsePushNotification(body);
    } catch (error) {
      // It will never parse: acknowledge it (parsePushNotification throws InvalidNotificationError only).
      outcome = { status: 204, action: 'ack', error };
      emit({ type: 'handled', ...outcome });
      return outcome;
    }
    let done: { result: ProcessDeliveryResult } | { error: unknown };
    try {
      done = { result: await client.processDelivery(notification, provider, { ...options.delivery, onEvent: emit }) };
    } catch (error) {
      done = { error };
    }
    const action = ackActionFor(done);
    outcome = { status: action === 'ack' ? 204 : 503, action, notification, ...done };
    emit({ type: 'handled', ...outcome });
    return outcome;
  };

  const handleBody = async (body: unknown, authorization?: string | null): Promise<PushOutcome> => {
    try {
      return (await authenticate(authorization)) ?? (await processBody(body));
    } catch (error) {
      // A bug (processBody catches what processDelivery throws): let Pub/Sub try again.
      const outcome: PushOutcome = { status: 503, action: 'nack', error };
      emit({ type: 'handled', ...outcome });
      return outcome;
    }
  };

  const handler = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void> => {
    try {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        answer(res, 405, { code: 'method_not_allowed', message: 'Pub/Sub push requests are POST' });
        return;
      }
      // Before reading the body: an unauthenticated request costs no more than its headers.
      const refused = await authenticate(req.headers.authorization);
      if (refused !== undefined) {
        answer(res, refused.status, refusal(refused.error));
        return;
      }
      let body: unknown = req.body;
      if (body === undefined) {
        const read = await readBody(req);
        if (read === 'too_large') {
          answer(res, 413, { code: 'payload_too_large', message: `a push body is at most ${MAX_PUSH_BODY_BYTES} bytes` });
          return;
        }
        body = read;
      }
      const outcome = await processBody(body);
      answer(res, outcome.status);
    } catch (error) {
      // Reading the request failed (the client went away) or a bug: let Pub/Sub try again.
      emit({ type: 'handled', status: 503, action: 'nack', error });
      if (!res.headersSent) answer(res, 503, { code: 'temporarily_unavailable', message: 'the delivery could not be handled; it will be retried' });
      else res.end();
    }
  };
  return Object.assign(handler, { handleBody });
}
