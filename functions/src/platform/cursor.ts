/**
 * The opaque cursors of the connectors' paged lists (the catch-up list, the erasures list):
 * base64url JSON `{ v: 1, o: <owner tag>, ...position }`. The owner tag ties a cursor to one
 * integration without naming it (a cursor may end up in logs); `scope` keeps the lists' tags apart.
 */
import { createHash } from 'node:crypto';
import { BadRequestError } from '../rules/errors';

export interface CursorOwner {
  workspaceId: string;
  integrationId: string;
}

const ownerTag = (scope: string, owner: CursorOwner): string =>
  createHash('sha256').update(`${scope}${owner.workspaceId}\u0000${owner.integrationId}`).digest('base64url').slice(0, 16);

/** A cursor of `owner`'s list standing for `position` (its fields in the order given). */
export function encodeOwnedCursor(scope: string, owner: CursorOwner, position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: 1, o: ownerTag(scope, owner), ...position })).toString('base64url');
}

/**
 * The position a cursor stands for: `readPosition` gets the cursor's fields besides `v` and `o`
 * and answers null when they are not a position. 400 `invalid_cursor` when the cursor is
 * malformed, another integration's, or not a position.
 */
export function decodeOwnedCursor<P>(scope: string, owner: CursorOwner, cursor: string, readPosition: (fields: Record<string, unknown>) => P | null): P {
  let value: unknown;
  try {
    value = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
  } catch {
    value = undefined;
  }
  const { v, o, ...fields } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const position = v === 1 && o === ownerTag(scope, owner) ? readPosition(fields) : null;
  if (position === null) throw new BadRequestError('invalid_cursor', 'cursor: not a cursor of this list; start again without one.');
  return position;
}
