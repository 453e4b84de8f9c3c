/**
 * Shared helpers for integration tests: they talk to the running emulators (started by
 * `npm test` through `firebase emulators:exec`) over real HTTP, and read/write Firestore with the
 * Admin SDK exactly as the console or the admin CLI would.
 *
 * Every helper that creates data uses fresh random ids, so tests never depend on each other or
 * on their order. Call `closeStack()` in an `afterAll` of each test file.
 */
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { DocumentReference, Firestore } from 'firebase-admin/firestore';
import { createIntegration } from '../../../functions/src/integrations/admin';
import { multipartBody, type MultipartPart } from './multipart';
import { db } from '../../../functions/src/platform/firebase';
import { parseConfig } from '../../../functions/src/platform/config';
import { assertResponseMatchesContract } from './openapi';

// ------------------------------------------------------------------------------------ environment

function requiredEnv(name: string, hint: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`Integration tests need ${name} (${hint}). Run them with \`npm test\`, which starts the emulators and sets it.`);
  }
  return value.replace(/\/+$/, '');
}

/**
 * The public API host: firebase.json's rewrites to the HTTP functions on the production runtime,
 * every other path (the console's page) to the Hosting emulator (scripts/lib/framework.mjs `startRouter`).
 */
export const apiBaseUrl = (): string => requiredEnv('API_BASE_URL', 'the router in front of the production runtime (scripts/test-stack.mjs)');
/** The Hosting emulator's address: its rewrites to the Functions emulator's HTTP functions (the smoke suite's second pass). */
export const hostingUrl = (): string => requiredEnv('HOSTING_URL', 'the Hosting emulator address');
/** Functions emulator base address for direct calls, e.g. `${functionsUrl()}/messages` (and the functions no rewrite serves). */
export const functionsUrl = (): string => requiredEnv('FUNCTIONS_URL', 'the Functions emulator base address');
/** Directory where the functions store images under the emulators. */
export const testImageDir = (): string => requiredEnv('TEST_IMAGE_DIR', 'the local image store of the functions');
export const firestoreEmulatorHost = (): string => requiredEnv('FIRESTORE_EMULATOR_HOST', 'set by firebase emulators:exec');
export const projectId = (): string => requiredEnv('GCLOUD_PROJECT', 'set by firebase emulators:exec');

/**
 * The key cache TTLs the functions run with (KEY_CACHE_TTL_MS, KEY_NEGATIVE_CACHE_TTL_MS): the
 * suites get the same environment as the emulators (scripts/test.mjs), and read it through the
 * service's own parser, so a test stack with short TTLs (quicker revocation tests) and the
 * defaults give the same answer the functions use. Revocation tests bound their waits by these.
 */
export function keyCacheTtls(): { positiveMs: number; negativeMs: number } {
  const { keyCacheTtlMs, keyNegativeCacheTtlMs } = parseConfig(process.env);
  return { positiveMs: keyCacheTtlMs, negativeMs: keyNegativeCacheTtlMs };
}

/** Request latency and polling interval on a loaded 2-core test machine, added to the TTL. */
const REVOCATION_MARGIN_MS = 5_000;

/**
 * How long after a key was revoked (or its integration changed) every function instance must refuse
 * it: the key cache TTL plus a margin for the polling request in flight and a loaded emulator,
 * never above the contract's 30 s (docs/contract.md#authentication).
 */
export function revocationBoundMs(): number {
  return Math.min(30_000, keyCacheTtls().positiveMs + REVOCATION_MARGIN_MS);
}

/** The Admin SDK Firestore client (connected to the emulator through FIRESTORE_EMULATOR_HOST). */
export function adminDb(): Firestore {
  firestoreEmulatorHost();
  projectId();
  return db();
}

/** Releases the Firestore client so Jest can exit; call in `afterAll`. */
export async function closeStack(): Promise<void> {
  if (process.env.FIRESTORE_EMULATOR_HOST) await db().terminate();
}

// ------------------------------------------------------------------------------------ integrations

export interface TestIntegrationOptions {
  /** Replies topic (`projects/<p>/topics/<t>`); replies are disabled without one. */
  topic?: string;
  /** Per-integration incoming rate limit (the tests' default is 100000 per minute). */
  messagesPerMinute?: number;
  /** `false` makes the integration inactive (403 `integration_inactive`). */
  active?: boolean;
  /** `false` disables the source (403 `source_disabled`). */
  sourceEnabled?: boolean;
  /** Create the integration in this workspace instead of a fresh one. */
  workspaceId?: string;
}

export interface TestIntegration {
  workspaceId: string;
  integrationId: string;
  /** The plaintext integration key (send as `Authorization: Bearer <key>`). */
  key: string;
}

/** Creates a fresh workspace (unless given) and an integration in it, as the admin CLI does. */
export async function createTestIntegration(options: TestIntegrationOptions = {}): Promise<TestIntegration> {
  const firestore = adminDb();
  const workspaceId = options.workspaceId ?? `ws_${randomUUID()}`;
  const issued = await createIntegration(firestore, {
    workspaceId,
    name: `integration test ${randomUUID().slice(0, 8)}`,
    createdBy: 'integration-tests',
    keyPrefix: 'sdk_test_',
    ...(options.topic !== undefined ? { topic: options.topic } : {}),
    ...(options.messagesPerMinute !== undefined ? { messagesPerMinute: options.messagesPerMinute } : {}),
  });
  const flags: Record<string, boolean> = {};
  if (options.active !== undefined) flags.active = options.active;
  if (options.sourceEnabled !== undefined) flags.sourceEnabled = options.sourceEnabled;
  if (Object.keys(flags).length > 0) {
    await integrationRef(workspaceId, issued.integrationId).update(flags);
  }
  return { workspaceId, integrationId: issued.integrationId, key: issued.key };
}

export const workspaceRef = (workspaceId: string): DocumentReference => adminDb().collection('workspaces').doc(workspaceId);
export const integrationRef = (workspaceId: string, integrationId: string): DocumentReference =>
  workspaceRef(workspaceId).collection('integrations').doc(integrationId);

// ------------------------------------------------------------------------------------ HTTP

export { messageParts, multipartBody, type ImagePart, type MultipartPart } from './multipart';

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, otherwise the text. */
  body: unknown;
  /** The raw response text. */
  text: string;
}

export interface RequestOptions {
  /** Integration key; sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Extra or overriding headers (e.g. a malformed `Authorization`). */
  headers?: Record<string, string>;
  /** Content-Type to send; `null` sends none. */
  contentType?: string | null;
  /** HTTP method (default POST). */
  method?: string;
  /** Base address (default API_BASE_URL, through Hosting). */
  baseUrl?: string;
  /**
   * Every `/v1/` response is checked against openapi/openapi.yaml (helpers/openapi.ts) and a
   * mismatch fails the test; `true` skips that for a response that is deliberately not the API's.
   */
  skipContractCheck?: boolean;
}

export interface JsonRequestOptions extends RequestOptions {
  /** Send `body` as is (a string or bytes) instead of `JSON.stringify(body)`. */
  raw?: boolean;
}

async function send(path: string, body: Buffer | string | undefined, contentType: string | null, options: RequestOptions): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (contentType !== null) headers['content-type'] = contentType;
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  Object.assign(headers, options.headers ?? {});
  const url = `${options.baseUrl ?? apiBaseUrl()}${path}`;
  const init: RequestInit = { method: options.method ?? 'POST', headers };
  if (body !== undefined) init.body = typeof body === 'string' ? body : new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) {
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      parsed = text;
    }
  }
  const { pathname } = new URL(url);
  if (!options.skipContractCheck && pathname.startsWith('/v1/')) {
    assertResponseMatchesContract(init.method as string, pathname, res.status, res.headers, parsed);
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** POSTs `body` as JSON (or raw with `raw: true`) to `path` on the API host. */
export function postJson(path: string, body: unknown, options: JsonRequestOptions = {}): Promise<ApiResponse> {
  const payload = options.raw ? (body as string | Buffer | undefined) : JSON.stringify(body);
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  return send(path, payload, contentType, options);
}

/**
 * Starts `count` workers of the function behind `path` before a test sends `count` requests at
 * once and pins their answers. The Functions emulator answers each concurrent request in a worker
 * process of its own and starts one when none is idle (production serves up to 80 at once in one
 * instance): `count` cold starts together on a loaded machine outlasted Hosting's 60 s proxy
 * timeout (seen in a CI run: 9 of 20 concurrent claims answered 504 by Hosting). These requests
 * are refused at once (an empty JSON body: 400, nothing written); their answers are not looked at.
 */
export async function warmWorkers(path: string, count: number, key: string): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => postJson(path, {}, { key, skipContractCheck: true })));
}

/** Sends a request with any method and no body (e.g. GET for the 405 check). */
export function request(path: string, options: RequestOptions & { body?: Buffer | string } = {}): Promise<ApiResponse> {
  return send(path, options.body, options.contentType === undefined ? null : options.contentType, options);
}

export interface MultipartOptions extends RequestOptions {
  /** Boundary to use (default: random). */
  boundary?: string;
  /** Bytes before the first boundary (ignored by parsers; used to reach an exact request size). */
  preamble?: Buffer;
}

/** POSTs a multipart/form-data body built from `parts` to `path` on the API host. */
export function postMultipart(path: string, parts: readonly MultipartPart[], options: MultipartOptions = {}): Promise<ApiResponse> {
  const { body, contentType } = multipartBody(parts, {
    ...(options.boundary !== undefined ? { boundary: options.boundary } : {}),
    ...(options.preamble !== undefined ? { preamble: options.preamble } : {}),
  });
  return send(path, body, options.contentType === undefined ? contentType : options.contentType, options);
}

// ------------------------------------------------------------------------------------ Firestore

/**
 * Paths of every existing document under `ref`, at any depth (not `ref` itself), sorted: one
 * kindless all-descendants query (StructuredQuery `from: [{ allDescendants: true }]` without a
 * collection id, under `ref`: the query the Admin SDK's recursiveDelete runs), sent to the
 * emulator's REST API as its owner (no rules), names only. Not a walk with listCollections and
 * listDocuments: the emulator answers each of those by reading every document it holds, so a walk
 * of one workspace read the whole database once per document and subcollection in it (a seventh of
 * the Firestore emulator's CPU over a full run, in its flight recording); the query reads it once.
 */
export async function listDocPaths(ref: DocumentReference): Promise<string[]> {
  const documents = `projects/${projectId()}/databases/(default)/documents`;
  const res = await fetch(`http://${firestoreEmulatorHost()}/v1/${documents}/${ref.path}:runQuery`, {
    method: 'POST',
    headers: { Authorization: 'Bearer owner', 'Content-Type': 'application/json' },
    body: JSON.stringify({ structuredQuery: { from: [{ allDescendants: true }], select: { fields: [{ fieldPath: '__name__' }] } } }),
  });
  if (!res.ok) throw new Error(`listing the documents under ${ref.path}: HTTP ${res.status} ${await res.text()}`);
  // One row per document; a query that matched nothing answers a single row with only a readTime.
  const rows = (await res.json()) as Array<{ document?: { name: string } }>;
  return rows.flatMap((row) => (row.document === undefined ? [] : [row.document.name.slice(documents.length + 1)])).sort();
}

/** Paths of every document under a workspace, relative to it (e.g. `integrations/abc`). */
export async function workspaceDocPaths(workspaceId: string): Promise<string[]> {
  const prefix = `workspaces/${workspaceId}/`;
  return (await listDocPaths(workspaceRef(workspaceId))).map((p) => p.slice(prefix.length));
}

/** Number of documents under a workspace (recursively), or in one of its top-level collections. */
export async function countDocs(workspaceId: string, collection?: string): Promise<number> {
  const paths = await workspaceDocPaths(workspaceId);
  return collection === undefined ? paths.length : paths.filter((p) => p.startsWith(`${collection}/`)).length;
}

// ------------------------------------------------------------------------------------ images

async function walk(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: string[] = [];
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(full)));
    else files.push(full);
  }
  return files;
}

/**
 * Files in the functions' local image store (relative to TEST_IMAGE_DIR, sorted), optionally only
 * under `prefix` (e.g. `workspaces/<id>`). Includes temporary files, so partial writes show up too.
 */
export async function listImageFiles(prefix = ''): Promise<string[]> {
  const root = testImageDir();
  const files = await walk(join(root, prefix));
  return files.map((f) => relative(root, f)).sort();
}

/**
 * Files in the image store a test of `workspaceIds` may see change: everything except other
 * workspaces' directories (every object path starts with `workspaces/<id>/`, temporary files sit
 * next to their target), so a check that "no file appeared anywhere" holds while other suites
 * write their own images at the same time (the integration suites run in parallel workers).
 */
export async function listImageFilesExceptOtherWorkspaces(workspaceIds: readonly string[]): Promise<string[]> {
  const own = workspaceIds.map((id) => `workspaces/${id}/`);
  return (await listImageFiles()).filter((f) => !f.startsWith('workspaces/') || own.some((prefix) => f.startsWith(prefix)));
}

/** Absolute path of a stored image given its store path (as recorded on the message). */
export const imageFilePath = (storePath: string): string => join(testImageDir(), storePath);
