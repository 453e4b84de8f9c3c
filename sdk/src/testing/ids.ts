/**
 * The test service's ids and digests: derived from the request where the service derives them (a
 * retried request finds the same record), random where the service mints them.
 */
import { createHash, randomBytes } from 'node:crypto';

export const digestId = (prefix: string, parts: readonly string[]): string => `${prefix}${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}`;
export const randomId = (prefix: string): string => `${prefix}${randomBytes(16).toString('base64url')}`;
export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
