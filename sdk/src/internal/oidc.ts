/**
 * `verifyPubSubOidcToken`: the OIDC token Pub/Sub puts in `Authorization: Bearer <JWT>` on every
 * push request of a subscription with an authentication service account, checked with
 * `node:crypto` only (the SDK has no dependencies): RS256 against Google's published keys, then
 * the claims. Checking the audience alone is not enough (any Google-signed token for that
 * audience would pass), so the service account's `email` and `email_verified` are checked too.
 */
import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { PushAuthenticationError, type PushAuthenticationErrorCode } from '../errors.js';
import type { FetchLike } from './transport.js';

/** Google's OAuth2 signing keys (JWKS), the default of `jwksUrl`. */
export const DEFAULT_OIDC_JWKS_URL = 'https://www.googleapis.com/oauth2/v3/certs';
/** How far `exp` may be past and `iat` / `nbf` ahead of the local clock: 60 s. */
export const OIDC_CLOCK_SKEW_MS = 60_000;
/**
 * Google's keys are fetched again at most this often (60 s): when a token names a `kid` the
 * cached set lacks (a key rotation), and as the shortest cache lifetime whatever `max-age` says.
 * Without it, tokens with made-up `kid`s would turn every request into a fetch.
 */
export const OIDC_JWKS_MIN_REFETCH_MS = 60_000;

/**
 * After a failed fetch of the keys, the next one waits this long (5 s): meanwhile requests are
 * verified with the keys still held or refused `jwks_unavailable` (Pub/Sub redelivers), so that
 * unauthenticated requests cannot turn an outage of Google's endpoint into one fetch each.
 */
export const OIDC_JWKS_FAILURE_BACKOFF_MS = 5_000;
/**
 * How long past their `max-age` the keys are still used while they cannot be fetched again (24 h):
 * Google publishes a key well before it signs with it and keeps it long after, so a refresh that
 * fails must not turn valid pushes into 503s.
 */
export const OIDC_JWKS_STALE_MAX_MS = 24 * 3_600_000;

/** A JWKS fetch that takes longer fails (`jwks_unavailable`); Pub/Sub redelivers. */
const JWKS_FETCH_TIMEOUT_MS = 10_000;
/** Google's key set is about 2 KB; a larger answer (64 KiB) is refused unread. */
const JWKS_MAX_BYTES = 64 * 1024;
/** Google's ID tokens are about 1 KB; anything much larger is refused before decoding. */
const MAX_TOKEN_LENGTH = 8 * 1024;
/** Both spellings Google's ID tokens use. */
const GOOGLE_ISSUERS: ReadonlySet<string> = new Set(['https://accounts.google.com', 'accounts.google.com']);
/** Google's keys are 2048-bit; a shorter RSA key in the set is ignored. */
const MIN_RSA_MODULUS_BITS = 2048;

/** What `verifyPubSubOidcToken` checks the token against (also `createPushHandler`'s `auth`). */
export interface PubSubOidcOptions {
  /**
   * The audience of the push subscription's OIDC token: what `--push-auth-token-audience` was set
   * to, or the push endpoint URL when it was not.
   */
  audience: string;
  /** The subscription's push authentication service account (`--push-auth-service-account`). */
  serviceAccountEmail: string;
  /** Where Google's signing keys are published. Default `DEFAULT_OIDC_JWKS_URL`. */
  jwksUrl?: string;
  /**
   * `fetch` implementation for the keys; default the global `fetch`. Keys are cached per `jwksUrl`
   * and `fetch` function, so pass the same function every time.
   */
  fetch?: FetchLike;
  /** Clock in epoch ms for `exp`, `iat`, `nbf` and the key cache. Default `Date.now`. */
  now?: () => number;
}

/** The verified claims of a Pub/Sub push token (plus whatever else Google put in it). */
export interface PubSubOidcClaims {
  iss: string;
  aud: string;
  email: string;
  email_verified: true;
  /** Seconds since the epoch. */
  exp: number;
  /** Seconds since the epoch. */
  iat: number;
  [claim: string]: unknown;
}

const refuse = (code: PushAuthenticationErrorCode, message: string, cause?: unknown): PushAuthenticationError =>
  new PushAuthenticationError(code, message, cause === undefined ? undefined : { cause });

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An attacker chooses these strings: quote a short prefix only. */
const quote = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value) : typeof value);

/**
 * Throws a `TypeError` for options that cannot work (a configuration mistake, not a bad request).
 * `createPushHandler` calls it at construction.
 */
export function checkOidcOptions(options: unknown, where: string): asserts options is PubSubOidcOptions {
  if (!isRecord(options)) throw new TypeError(`${where} must be { audience, serviceAccountEmail }`);
  for (const field of ['audience', 'serviceAccountEmail'] as const) {
    const value = options[field];
    if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${where}.${field} must be a non-empty string`);
  }
  if (options.jwksUrl !== undefined) {
    const url = typeof options.jwksUrl === 'string' && URL.canParse(options.jwksUrl) ? new URL(options.jwksUrl) : undefined;
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new TypeError(`${where}.jwksUrl must be an http(s) URL`);
    // A public key set needs no credentials; in the URL they would travel with every key fetch
    // and reach wherever the URL is shown.
    if (url.username !== '' || url.password !== '') throw new TypeError(`${where}.jwksUrl must not carry credentials (user:password@)`);
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new TypeError(`${where}.fetch must be a function`);
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError(`${where}.now must be a function`);
}

/** `Cache-Control: max-age` in ms, or 0 without one (or with `no-store` / `no-cache`). */
function maxAgeMs(cacheControl: string | null): number {
  if (cacheControl === null || /(?:^|,)\s*no-(?:store|cache)\b/i.test(cacheControl)) return 0;
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl);
  return match?.[1] === undefined ? 0 : Number(match[1]) * 1000;
}

/** One entry of the JWKS as a verification key, or `undefined` for anything but a usable RS256 signing key. */
function rsaKey(jwk: unknown): { kid: string; key: KeyObject } | undefined {
  if (!isRecord(jwk) || typeof jwk.kid !== 'string' || jwk.kid === '' || jwk.kty !== 'RSA') return undefined;
  if ((jwk.alg !== undefined && jwk.alg !== 'RS256') || (jwk.use !== undefined && jwk.use !== 'sig')) return undefined;
  if (typeof jwk.n !== 'string' || typeof jwk.e !== 'string') return undefined;
  let key: KeyObject;
  try {
    const material: JsonWebKey = { kty: 'RSA', n: jwk.n, e: jwk.e };
    key = createPublicKey({ key: material, format: 'jwk' });
  } catch {
    return undefined;
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  return bits !== undefined && bits >= MIN_RSA_MODULUS_BITS ? { kid: jwk.kid, key } : undefined;
}

/** A URL as a message may show it: scheme, host and path; never credentials or a query (which may hold a secret). */
function shownUrl(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  return parsed === undefined ? 'the configured jwksUrl' : `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** The body as text, refused (thrown) once it is longer than `maxBytes`, without reading the rest. */
async function boundedText(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new RangeError(`the answer declares ${declared} bytes`);
  }
  const reader = res.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new RangeError(`the answer is longer than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

interface KeySet {
  keys: ReadonlyMap<string, KeyObject>;
  /** Epoch ms after which the set is fetched again before use. */
  expiresAt: number;
}

/** Google's keys from one URL through one `fetch`: cached for their `max-age`, one fetch at a time. */
class JwksCache {
  #set: KeySet | undefined;
  #lastFetchAt = Number.NEGATIVE_INFINITY;
  /** The last fetch's failure and when it happened, until a fetch succeeds. */
  #failure: { at: number; error: unknown } | undefined;
  #inflight: Promise<KeySet> | undefined;
  readonly #url: string;
  readonly #fetch: FetchLike;

  constructor(url: string, fetchImpl: FetchLike) {
    this.#url = url;
    this.#fetch = fetchImpl;
  }

  async key(kid: string, now: () => number): Promise<KeyObject> {
    const set = this.#set;
    const time = now();
    if (set !== undefined && time < set.expiresAt) {
      const key = set.keys.get(kid);
      if (key !== undefined) return key;
      // Unknown kid: Google may have rotated its keys since the fetch. Fetch again, but not more
      // than once per interval, or made-up kids would make every request a fetch.
      if (time - this.#lastFetchAt < OIDC_JWKS_MIN_REFETCH_MS) {
        // A fetch under way (another request's unknown kid) may bring it: wait for that one.
        const latest = this.#inflight === undefined ? undefined : await this.#inflight.catch(() => undefined);
        const fetched = latest?.keys.get(kid);
        if (fetched !== undefined) return fetched;
        throw refuse('unknown_key', `no Google signing key has kid ${quote(kid)}`);
      }
    }
    const fresh = await this.#current(now);
    const key = fresh.keys.get(kid);
    if (key === undefined) throw refuse('unknown_key', `no Google signing key has kid ${quote(kid)}`);
    return key;
  }

  /**
   * The keys to verify with now: fetched again, unless the last fetch failed less than
   * `OIDC_JWKS_FAILURE_BACKOFF_MS` ago; when they cannot be had, the keys held (at most
   * `OIDC_JWKS_STALE_MAX_MS` past their expiry), else the failure.
   */
  async #current(now: () => number): Promise<KeySet> {
    const failure = this.#failure;
    let error: unknown;
    if (failure !== undefined && now() - failure.at < OIDC_JWKS_FAILURE_BACKOFF_MS) {
      error = failure.error;
    } else {
      try {
        return await this.#refresh(now);
      } catch (refused) {
        error = refused;
      }
    }
    const held = this.#set;
    if (held !== undefined && now() < held.expiresAt + OIDC_JWKS_STALE_MAX_MS) return held;
    throw error;
  }

  /** Concurrent requests share one fetch. */
  #refresh(now: () => number): Promise<KeySet> {
    this.#inflight ??= (async () => {
      this.#lastFetchAt = now();
      try {
        const set = await this.#load(now);
        this.#set = set;
        this.#failure = undefined;
        return set;
      } catch (error) {
        this.#failure = { at: now(), error };
        throw error;
      } finally {
        this.#inflight = undefined;
      }
    })();
    return this.#inflight;
  }

  async #load(now: () => number): Promise<KeySet> {
    // Messages reach unauthenticated callers (the 503's body) and logs: the URL without credentials or query.
    const where = shownUrl(this.#url);
    let res: Response;
    try {
      res = await this.#fetch(this.#url, { method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS) });
    } catch (cause) {
      throw refuse('jwks_unavailable', `Google's signing keys could not be fetched from ${where}`, cause);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw refuse('jwks_unavailable', `${where} answered ${res.status} for Google's signing keys`);
    }
    let document: unknown;
    try {
      document = JSON.parse(await boundedText(res, JWKS_MAX_BYTES));
    } catch (cause) {
      throw refuse('jwks_unavailable', `${where} did not answer a JSON key set of at most ${JWKS_MAX_BYTES} bytes`, cause);
    }
    if (!isRecord(document) || !Array.isArray(document.keys)) throw refuse('jwks_unavailable', `${where} did not answer a JWKS ({ "keys": [...] })`);
    const keys = new Map<string, KeyObject>();
    for (const jwk of document.keys as unknown[]) {
      const entry = rsaKey(jwk);
      if (entry !== undefined) keys.set(entry.kid, entry.key);
    }
    // Never shorter than the refetch interval: a missing or zero max-age must not mean a fetch per request.
    return { keys, expiresAt: now() + Math.max(maxAgeMs(res.headers.get('cache-control')), OIDC_JWKS_MIN_REFETCH_MS) };
  }
}

const globalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);
/** Key caches by `fetch` function, then URL: shared by every call with the same options. */
const caches = new WeakMap<FetchLike, Map<string, JwksCache>>();

function cacheFor(url: string, fetchImpl: FetchLike): JwksCache {
  let byUrl = caches.get(fetchImpl);
  if (byUrl === undefined) caches.set(fetchImpl, (byUrl = new Map()));
  let cache = byUrl.get(url);
  if (cache === undefined) byUrl.set(url, (cache = new JwksCache(url, fetchImpl)));
  return cache;
}

/** A claim's time for a message; `Date` throws on times out of its range, which a token may carry. */
const isoTime = (seconds: number): string => {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? `${seconds} s` : date.toISOString();
};

const TOKEN = /^Bearer +([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/i;

function decodePart(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!isRecord(value)) throw refuse('malformed_token', `the token's ${what} is not a base64url JSON object`);
  return value;
}

/**
 * Verifies the OIDC token of a Pub/Sub push request (`Authorization: Bearer <JWT>`) and returns
 * its claims. Checked, in this order: the header is `Bearer` and a three-part JWT; `alg` is
 * `RS256` (never `none` or an HMAC); the signature, with Google's published key of the token's
 * `kid` (fetched from `jwksUrl`, cached for its `Cache-Control: max-age`, fetched again for an
 * unknown `kid` at most every `OIDC_JWKS_MIN_REFETCH_MS`); `iss` is Google; `aud` equals
 * `audience`; `exp` is not past and `iat` (and `nbf`) not ahead, give or take
 * `OIDC_CLOCK_SKEW_MS`; `email` equals `serviceAccountEmail` and `email_verified` is `true`.
 *
 * @param authorizationHeader The request's `Authorization` header (`req.headers.authorization`,
 *   `request.headers.get('authorization')`).
 * @throws {PushAuthenticationError} when the token is refused (`code` says why; `jwks_unavailable`
 *   when Google's keys could not be fetched).
 * @throws {TypeError} when the options are not usable.
 */
export async function verifyPubSubOidcToken(authorizationHeader: string | null | undefined, options: PubSubOidcOptions): Promise<PubSubOidcClaims> {
  checkOidcOptions(options, 'verifyPubSubOidcToken options');
  const now = options.now ?? Date.now;
  if (authorizationHeader === undefined || authorizationHeader === null || authorizationHeader === '') {
    throw refuse('missing_token', 'the request has no Authorization header (is the push subscription configured with an OIDC service account?)');
  }
  const match = authorizationHeader.length <= MAX_TOKEN_LENGTH ? TOKEN.exec(authorizationHeader.trim()) : null;
  if (match === null) throw refuse('malformed_token', 'the Authorization header is not "Bearer <JWT>"');
  const [, headerPart = '', payloadPart = '', signaturePart = ''] = match;
  const header = decodePart(headerPart, 'header');
  if (header.alg !== 'RS256') throw refuse('unsupported_algorithm', `the token's alg is ${quote(header.alg)}, not "RS256"`);
  // RFC 7515: a header parameter marked critical that we do not understand must fail the token.
  if (header.crit !== undefined) throw refuse('malformed_token', 'the token has critical header parameters');
  if (typeof header.kid !== 'string' || header.kid === '') throw refuse('malformed_token', "the token's header has no kid");

  const key = await cacheFor(options.jwksUrl ?? DEFAULT_OIDC_JWKS_URL, options.fetch ?? globalFetch).key(header.kid, now);
  let valid: boolean;
  try {
    valid = signaturePart !== '' && verify('RSA-SHA256', Buffer.from(`${headerPart}.${payloadPart}`, 'ascii'), key, Buffer.from(signaturePart, 'base64url'));
  } catch {
    valid = false;
  }
  if (!valid) throw refuse('invalid_signature', "the token's signature does not verify with Google's key");

  // Only a signed payload is read: nothing below is the sender's word alone.
  const claims = decodePart(payloadPart, 'payload');
  if (typeof claims.iss !== 'string' || !GOOGLE_ISSUERS.has(claims.iss)) throw refuse('invalid_issuer', `the token's iss is ${quote(claims.iss)}, not Google`);
  // A string compare, no array: Google's ID tokens carry exactly one audience.
  if (claims.aud !== options.audience) throw refuse('invalid_audience', `the token's aud ${quote(claims.aud)} is not the configured audience`);
  const { exp, iat, nbf } = claims;
  if (typeof exp !== 'number' || !Number.isFinite(exp) || typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('malformed_token', 'the token has no numeric exp and iat');
  const time = now();
  if (exp * 1000 + OIDC_CLOCK_SKEW_MS <= time) throw refuse('token_expired', `the token expired at ${isoTime(exp)}`);
  if (iat * 1000 - OIDC_CLOCK_SKEW_MS > time) throw refuse('token_not_yet_valid', `the token is issued in the future (${isoTime(iat)})`);
  if (typeof nbf === 'number' && nbf * 1000 - OIDC_CLOCK_SKEW_MS > time) throw refuse('token_not_yet_valid', `the token is not valid before ${isoTime(nbf)}`);
  if (claims.email !== options.serviceAccountEmail) throw refuse('invalid_email', `the token's email ${quote(claims.email)} is not the configured push service account`);
  if (claims.email_verified !== true) throw refuse('email_not_verified', "the token's email_verified is not true");
  return { ...claims, iss: claims.iss, aud: options.audience, email: options.serviceAccountEmail, email_verified: true, exp, iat };
}
