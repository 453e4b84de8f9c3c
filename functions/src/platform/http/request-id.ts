import { randomBytes } from 'node:crypto';

/** A fresh request id, returned as `X-Request-Id` and logged with every line about the request. */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString('base64url')}`;
}
