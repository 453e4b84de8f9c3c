import { createHash, randomBytes } from 'node:crypto';

/**
 * Integration keys (docs/decisions.md#keys): a greppable prefix plus 32 bytes of CSPRNG output in base64url.
 * Only SHA-256(key) in hex is ever stored; the display prefix (prefix + 4 characters) is safe to log.
 */
const KEY_PREFIXES = ['sdk_live_', 'sdk_test_'] as const;
export type KeyPrefix = (typeof KEY_PREFIXES)[number];
const KEY_PATTERN = /^sdk_(live|test)_[A-Za-z0-9_-]{43}$/;
const DISPLAY_SECRET_CHARS = 4;

/** Mints a new key. `sdk_test_` for demo/emulator projects so a leaked test key is recognisable. */
export function generateKey(prefix: KeyPrefix = 'sdk_live_'): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function isWellFormedKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

/** Hex SHA-256, the only form in which a key is stored or looked up. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Non-secret display form for logs and the console, e.g. `sdk_live_Ab3x`. */
export function displayPrefix(key: string): string {
  const prefix = KEY_PREFIXES.find((p) => key.startsWith(p)) ?? '';
  return key.slice(0, prefix.length + DISPLAY_SECRET_CHARS);
}

/**
 * Extracts the key from an `Authorization` header value. Returns undefined for anything that is
 * not exactly `Bearer <well-formed key>`, so malformed input never reaches a lookup.
 */
export function keyFromAuthorizationHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  return key !== undefined && isWellFormedKey(key) ? key : undefined;
}
