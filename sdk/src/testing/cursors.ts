/**
 * The opaque cursors of the paged lists (functions/src/platform/cursor.ts): the position, tagged
 * with its owner and list, so a cursor of another integration or list is refused.
 */
import { createHash } from 'node:crypto';
import { apiError } from './errors.js';

const ownerTag = (scope: string, owner: { workspaceId: string; integrationId: string }): string =>
  createHash('sha256').update(`${scope}${owner.workspaceId}\u0000${owner.integrationId}`).digest('base64url').slice(0, 16);

/** The cursor of a position in the owner's list (`scope` names the list). */
export function encodeCursor(owner: { workspaceId: string; integrationId: string }, scope: string, position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: 1, o: ownerTag(scope, owner), ...position })).toString('base64url');
}

/** The position a cursor of this owner's list holds, or 400 `invalid_cursor`. */
export function decodeCursor<P>(owner: { workspaceId: string; integrationId: string }, scope: string, cursor: string, read: (fields: Record<string, unknown>) => P | null): P {
  let value: unknown;
  try {
    value = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
  } catch {
    value = undefined;
  }
  const { v, o, ...fields } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const position = v === 1 && o === ownerTag(scope, owner) ? read(fields) : null;
  if (position === null) throw apiError(400, 'invalid_cursor', 'cursor: not a cursor of this list; start again without one.');
  return position;
}
