/**
 * Integration keys minted in the browser, the same format as the service's
 * functions/src/integrations/keys.ts: prefix + 32 CSPRNG bytes in base64url (43 characters).
 * Only the SHA-256 hex of the whole key and the display prefix ever leave this module: the console
 * shows the key once and never stores or logs it.
 */

export type KeyPrefix = 'sdk_live_' | 'sdk_test_';

export interface IssuedKey {
  /** The plaintext key, for showing once. */
  key: string;
  /** Hex SHA-256 of the key: what Firestore stores as `keyHash`. */
  keyHash: string;
  /** Prefix + 4 characters, e.g. `sdk_test_Ab3x`: what Firestore stores as `keyPrefix`. */
  keyPrefix: string;
}

const DISPLAY_SECRET_CHARS = 4;

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Hex SHA-256 of a string's UTF-8 bytes (WebCrypto). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Mints a key with crypto.getRandomValues and hashes it with crypto.subtle. */
export async function issueKey(prefix: KeyPrefix): Promise<IssuedKey> {
  const random = new Uint8Array(32);
  crypto.getRandomValues(random);
  const key = prefix + base64url(random);
  return { key, keyHash: await sha256Hex(key), keyPrefix: key.slice(0, prefix.length + DISPLAY_SECRET_CHARS) };
}
