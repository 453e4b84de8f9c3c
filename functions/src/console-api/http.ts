/**
 * The console's HTTP function, `consoleApi` (docs/console.md#console-endpoints), served on the
 * Hosting site under `/console/v1/**` (../operations.ts `CONSOLE_API`):
 *
 * - `POST /console/v1/attachments`: a workspace member uploads one file for a reply in one
 *   conversation (./upload.ts);
 * - `GET /console/v1/media?...`: a member reads an incoming image or a reply's file (./media.ts).
 *
 * The caller is a console user: `Authorization: Bearer <Firebase Auth ID token>`, verified with
 * the Admin SDK (../platform/http/id-token.ts), and a member of the workspace the request names.
 * The checks run in this order: path (404), method (405), token (401 `invalid_token`), then the
 * endpoint's own. Like the connectors' endpoints, every answer has `X-Request-Id`, every error the
 * envelope, unknown failures are 503 with `Retry-After` (never 500), the request is answered within
 * its time budget, and one structured log line per request names the ids (never the token).
 */
import type { Request } from 'firebase-functions/v2/https';
import type { Response } from 'express';
import { config } from '../platform/config';
import { MethodNotAllowedError, NotFoundError, UnauthorizedError, type ApiError } from '../rules/errors';
import { Deadline } from '../platform/http/deadline';
import { idTokenUid } from '../platform/http/id-token';
import { answerWithin } from '../platform/http/pipeline';
import { newRequestId } from '../platform/http/request-id';
import { RECEIVED_AT, type HttpResult } from '../platform/http/types';
import type { ConsoleContext } from './context';
import { serveMedia } from './media';
import { receiveUpload } from './upload';


interface ConsoleEndpoint {
  method: 'GET' | 'POST';
  handle: (req: Request, context: ConsoleContext) => Promise<HttpResult>;
}

/** The endpoints under `/console/v1/`, by their last path segment. */
const ENDPOINTS: Readonly<Record<string, ConsoleEndpoint>> = {
  attachments: { method: 'POST', handle: receiveUpload },
  media: { method: 'GET', handle: serveMedia },
};

/** The endpoint a request path names (`/console/v1/<name>`), or undefined. */
function endpointOf(path: string): [string, ConsoleEndpoint] | undefined {
  const name = /\/console\/v1\/([a-z]+)\/?$/.exec(path)?.[1];
  const endpoint = name === undefined ? undefined : ENDPOINTS[name];
  return name === undefined || endpoint === undefined ? undefined : [name, endpoint];
}

const invalidToken = (): ApiError => new UnauthorizedError('invalid_token', 'Sign in: a valid Firebase ID token is required (Authorization: Bearer <token>).');

/** The `consoleApi` function's handler. */
export async function consoleApi(req: Request, res: Response): Promise<void> {
  const startedAt = performance.now();
  const requestId = newRequestId();
  const deadline = new Deadline(((req as { [RECEIVED_AT]?: number })[RECEIVED_AT] ?? Date.now()) + config().requestDeadlineMs);
  res.setHeader('X-Request-Id', requestId);
  const found = endpointOf(req.path);
  const name = found === undefined ? 'unknown' : `${found[1].method} /console/v1/${found[0]}`;
  const logFields: ConsoleContext['logFields'] = {};
  const answer = async (): Promise<HttpResult> => {
    if (found === undefined) throw new NotFoundError('not_found', 'No console endpoint at this path: POST /console/v1/attachments or GET /console/v1/media.');
    const [, endpoint] = found;
    if (req.method !== endpoint.method) throw new MethodNotAllowedError('method_not_allowed', `${name} only.`);
    const uid = await idTokenUid(req.get('authorization'), 'console.unauthenticated');
    if (uid === null) throw invalidToken();
    logFields.uid = uid;
    return endpoint.handle(req, { uid, deadline, logFields });
  };
  await answerWithin(res, deadline, { requestId, endpoint: name, startedAt, fields: () => logFields, allow: found?.[1].method ?? 'GET, POST' }, answer);
}
