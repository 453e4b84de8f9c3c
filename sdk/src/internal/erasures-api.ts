// Interim: the erasure operations' wire types and readers, written by hand until the service's API
// document lists them (then scripts/sdk-generate.mjs generates these into api.generated.ts and
// this file goes).
import type { Operation } from './api.generated.js';
import { isObject } from './response.js';

export interface ListPendingErasuresRequest {
  limit?: number;
  cursor?: string;
}
export interface ListPendingErasuresResponse {
  erasures: Array<{ erasureId: string; externalCustomerId: string; externalConversationIds: string[]; requestedAt: number }>;
  nextCursor: string | null;
}
export interface AcknowledgeErasureRequest {
  erasureId: string;
}
export interface AcknowledgeErasureResponse {
  acknowledged: true;
}

const isString = (v: unknown): v is string => typeof v === 'string';

export const listPendingErasures: Operation<ListPendingErasuresResponse> = {
  operationId: 'listPendingErasures',
  method: 'POST',
  path: '/v1/erasures/pending',
  expected: '200: PendingErasuresResponse',
  read(_status, body) {
    if (!isObject(body) || !Array.isArray(body.erasures) || !(body.nextCursor === null || isString(body.nextCursor))) return undefined;
    const erasures: ListPendingErasuresResponse['erasures'] = [];
    for (const item of body.erasures as unknown[]) {
      if (!isObject(item) || !isString(item.erasureId) || !isString(item.externalCustomerId) || !Number.isInteger(item.requestedAt)) return undefined;
      if (!Array.isArray(item.externalConversationIds) || !item.externalConversationIds.every(isString)) return undefined;
      erasures.push({ erasureId: item.erasureId, externalCustomerId: item.externalCustomerId, externalConversationIds: [...(item.externalConversationIds as string[])], requestedAt: item.requestedAt as number });
    }
    return { erasures, nextCursor: body.nextCursor };
  },
};

export const acknowledgeErasure: Operation<AcknowledgeErasureResponse> = {
  operationId: 'acknowledgeErasure',
  method: 'POST',
  path: '/v1/erasures/ack',
  expected: '200: AckErasureResponse',
  read(_status, body) {
    return isObject(body) && body.acknowledged === true ? { acknowledged: true } : undefined;
  },
};
