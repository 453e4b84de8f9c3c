/**
 * The connector's privacy endpoints (docs/contract.md#erasures): the erasures it must purge from
 * its own storage, and its acknowledgement of each.
 */
import type * as z from 'zod';
import { db } from '../platform/firebase';
import { endpoint, type ParsedRequest, type RequestContext } from '../platform/http/pipeline';
import type { HttpResult } from '../platform/http/types';
import { parseOrThrow } from '../platform/schema';
import { authenticate } from '../integrations/auth';
import type { OperationsOf } from '../operations';
import { acknowledgeErasure, pendingErasures } from './erasure-list';
import { PRIVACY_OPERATION_SCHEMAS } from './schemas';

/** A JSON endpoint: validate the body with `schema`, run the operation, answer 200. */
const jsonEndpoint = <S extends z.ZodType, R>(name: string, schema: S, run: (body: z.output<S>, context: RequestContext) => Promise<R>) =>
  endpoint({ name, accepts: ['application/json'], authenticate }, async (request: ParsedRequest, context): Promise<HttpResult> => {
    const body = parseOrThrow(schema, request.json);
    return { status: 200, body: await run(body, context) };
  });

const listPendingErasures = jsonEndpoint('POST /v1/erasures/pending', PRIVACY_OPERATION_SCHEMAS.listPendingErasures.request, async (body, context) => {
  const page = await pendingErasures(db(), context.auth, { limit: body.limit, cursor: body.cursor });
  context.logFields.pendingCount = page.erasures.length;
  return page;
});

const acknowledge = jsonEndpoint('POST /v1/erasures/ack', PRIVACY_OPERATION_SCHEMAS.acknowledgeErasure.request, async (body, context) => {
  context.logFields.erasureId = body.erasureId;
  return acknowledgeErasure(db(), context.auth, body.erasureId, Date.now());
});

/**
 * The handler of each privacy operation of the catalogue (../operations.ts `PRIVACY_OPERATIONS`), by
 * operationId (index.ts serves `endpoints[operationId]`); `satisfies` makes an entry without its handler a compile error.
 */
export const endpoints = { listPendingErasures, acknowledgeErasure: acknowledge } satisfies Record<OperationsOf<'privacy/http'>, ReturnType<typeof endpoint>>;
