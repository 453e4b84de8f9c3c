/**
 * Shared pieces of the reliability suite (test/integration/reliability/README.md): raw HTTP with full control over method,
 * headers and bytes; the fast-check seed and run count; the emulator log written by
 * scripts/test.mjs and the key-material scan; a counting fake provider for the SDK; statistics.
 */
import { readFile } from 'node:fs/promises';
import { apiBaseUrl } from '../helpers/stack';
import type { ProviderSend, ProviderSendInput } from '../../../sdk/src/index';

// ------------------------------------------------------------------------------------ settings

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got '${raw}'`);
  return value;
}

/** fast-check seed: fixed by default so a run is reproducible; `FC_SEED=<n>` overrides it. */
export const FC_SEED = envInt('FC_SEED', 20_260_611);
/**
 * Total fuzz cases over all properties (default 280); `FC_RUNS=<n>` scales the run up or down.
 * With the fixed seed every `npm test` sends the same cases, so the default buys a regression
 * check, and a deep run (say `FC_RUNS=5000` with a new `FC_SEED`) is the search for new bugs:
 * 560 cases took 60-130 s of the integration phase's two cores, as long as any other suite.
 */
export const FC_RUNS = envInt('FC_RUNS', 280);
/** `FC_SHRINK=1` shrinks a counterexample (slow over HTTP); by default the first failure is reported as is. */
export const FC_SHRINK = process.env.FC_SHRINK === '1';
/**
 * Soak duration in seconds (default 30; CI keeps it at most 120). Thirty seconds still hold three
 * sweeps under load, about 180 incoming messages and 50 replies; the soak is on the @serial path
 * of `npm test`, whose eight-minute budget a 60 s default overran. Longer runs are opt-in.
 */
export const SOAK_SECONDS = envInt('SOAK_SECONDS', 30);

// ------------------------------------------------------------------------------------ raw HTTP

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON when the answer says it is JSON and parses; undefined otherwise. */
  json: unknown;
  /** Wall time of the exchange in ms. */
  ms: number;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  baseUrl?: string;
}

/** One HTTP exchange with the API host, byte for byte as given (no contract check, no defaults). */
export async function rawRequest(path: string, request: RawRequest = {}): Promise<RawResponse> {
  const init: RequestInit = { method: request.method ?? 'POST', headers: request.headers ?? {} };
  if (request.body !== undefined) {
    init.body = typeof request.body === 'string' ? request.body : new Uint8Array(request.body.buffer, request.body.byteOffset, request.body.byteLength);
  }
  const started = performance.now();
  return rawResponseOf(await fetch(`${request.baseUrl ?? apiBaseUrl()}${path}`, init), started);
}

/** `res` read whole, as a RawResponse of an exchange that began at `started` (performance.now()). */
export async function rawResponseOf(res: Response, started: number): Promise<RawResponse> {
  const text = await res.text();
  const ms = performance.now() - started;
  let json: unknown;
  if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
    try {
      json = JSON.parse(text) as unknown;
    } catch {
      json = undefined;
    }
  }
  return { status: res.status, headers: res.headers, text, json, ms };
}

/** The five endpoints of the API. */
export const ENDPOINTS = ['/v1/messages', '/v1/deliveries/claim', '/v1/deliveries/start', '/v1/deliveries/complete', '/v1/deliveries/fail'] as const;

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** The error code when `res` is exactly the envelope `{"error":{"code","message"?}}` with a request id, else undefined. */
export function envelopeCode(res: RawResponse): string | undefined {
  if (!/^req_[A-Za-z0-9_-]{8,}$/.test(res.headers.get('x-request-id') ?? '')) return undefined;
  const body = res.json as { error?: { code?: unknown; message?: unknown } } | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  if (Object.keys(body).join() !== 'error' || typeof body.error !== 'object' || body.error === null) return undefined;
  if (!Object.keys(body.error).every((k) => k === 'code' || k === 'message')) return undefined;
  if (typeof body.error.code !== 'string' || !SNAKE_CASE.test(body.error.code)) return undefined;
  if ('message' in body.error && typeof body.error.message !== 'string') return undefined;
  return body.error.code;
}

/** One line describing a response, for failure messages. */
export const describe = (res: RawResponse): string =>
  `HTTP ${res.status} ${res.headers.get('content-type') ?? '(no content type)'} ${res.text.slice(0, 300).replace(/\s+/g, ' ')}`;

// ------------------------------------------------------------------------------------ text

/** Length in Unicode code points (every text limit of docs/contract.md#limits counts these). */
export const codePoints = (s: string): number => [...s].length;

// ------------------------------------------------------------------------------------ emulator log

/** The file scripts/test.mjs tees the `emulators:exec` output to (emulators, functions' logs, Jest). */
export function emulatorLogFile(): string {
  const file = process.env.EMULATOR_LOG_FILE;
  if (!file) throw new Error('EMULATOR_LOG_FILE is not set: run the suite with `npm test` (scripts/test.mjs tees the emulator output to it).');
  return file;
}

export const readEmulatorLog = (): Promise<string> => readFile(emulatorLogFile(), 'utf8');

/** The secret part of a key (after `sdk_live_` / `sdk_test_`). */
export const secretOf = (key: string): string => key.replace(/^sdk_(live|test)_/, '');

/** Every 16-character window of a key's secret part (a log line holding any of them leaks key material). */
export function keyWindows(key: string, width = 16): string[] {
  const secret = secretOf(key);
  const windows: string[] = [];
  for (let i = 0; i + width <= secret.length; i++) windows.push(secret.slice(i, i + width));
  return windows;
}

export interface KeyLeak {
  /** The key's display prefix (never the key). */
  key: string;
  /** What matched: the whole key or a 16-character window of its secret. */
  match: string;
  line: string;
}

/**
 * The Hosting emulator prints an access log in the "combined" format, whose third field is the
 * user name of HTTP Basic credentials (`127.0.0.1 - <user> [date] "POST /v1/..."`). A client that
 * sends its key as Basic credentials (the API answers 401 invalid_key) sees it printed there by
 * the emulator's front end: not by the service, and not by the production front end. `echoes`
 * holds those fields; the lines are scanned with the field blanked.
 */
export function withoutAccessLogUsers(log: string): { log: string; echoes: string[] } {
  const echoes: string[] = [];
  const lines = log.split('\n').map((line) =>
    line.replace(/^(i {2}hosting: \S+ - )(\S+)( \[)/, (_all, head: string, user: string, tail: string) => {
      if (user === '-') return `${head}${user}${tail}`;
      echoes.push(user);
      return `${head}-${tail}`;
    }),
  );
  return { log: lines.join('\n'), echoes };
}

/** Lines of `log` that contain a key, or any 16-character window of a key's secret part. */
export function findKeyMaterial(log: string, keys: readonly string[]): KeyLeak[] {
  const leaks: KeyLeak[] = [];
  const lines = log.split('\n');
  for (const key of keys) {
    const windows = keyWindows(key);
    for (const line of lines) {
      const match = line.includes(key) ? key : windows.find((w) => line.includes(w));
      if (match !== undefined) leaks.push({ key: `${key.slice(0, 13)}…`, match, line: line.slice(0, 300) });
    }
  }
  return leaks;
}

/**
 * The log as it is once everything the service logged so far is in it: sends a marker request
 * (401, logged with its request id by the function) and polls the file until the marker shows up.
 */
export async function flushedEmulatorLog(timeoutMs = 15_000): Promise<string> {
  // One marker per function (each runs in its own process, with its own output stream).
  const markers = await Promise.all(
    ENDPOINTS.map(async (path) => {
      const res = await rawRequest(path, { headers: { 'content-type': 'application/json' }, body: '{}' });
      const requestId = res.headers.get('x-request-id');
      if (!requestId) throw new Error(`the marker request to ${path} got no request id: ${describe(res)}`);
      return requestId;
    }),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await readEmulatorLog();
    const missing = markers.filter((m) => !log.includes(m));
    if (missing.length === 0) return log;
    if (Date.now() > deadline) throw new Error(`the functions' log lines of ${missing.join(', ')} never reached ${emulatorLogFile()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Fails (without printing the keys) when the emulator log holds any key material of `keys`,
 * anywhere but the Hosting emulator's Basic-credentials user field (see withoutAccessLogUsers),
 * whose echoes of these keys are counted in `basicUserEchoes`.
 */
export async function expectNoKeyMaterialInLogs(keys: readonly string[]): Promise<{ lines: number; keys: number; basicUserEchoes: number }> {
  const { log, echoes } = withoutAccessLogUsers(await flushedEmulatorLog());
  const leaks = findKeyMaterial(log, keys);
  if (leaks.length > 0) throw new Error(`${leaks.length} log line(s) hold key material:\n${redactLeaks(leaks)}`);
  const basicUserEchoes = findKeyMaterial(echoes.join('\n'), keys).length;
  return { lines: log.split('\n').length, keys: keys.length, basicUserEchoes };
}

/** A leak report that does not itself print the key material it found. */
export const redactLeaks = (leaks: readonly KeyLeak[]): string =>
  leaks
    .slice(0, 5)
    .map((l) => `${l.key} (${l.match.length === 16 ? '16-character window' : 'whole key'}) in: ${l.line.split(l.match).join('[…]').slice(0, 200)}`)
    .join('\n');

// ------------------------------------------------------------------------------------ fake provider

export interface CountingProvider {
  send: ProviderSend;
  /** Every call, in order. */
  calls: ProviderSendInput[];
  /** Calls for one delivery. */
  callsFor(deliveryId: string): number;
  /** The most calls made under one (deliveryId, leaseId): processDelivery must keep it at 1. */
  maxCallsPerLease(): number;
}

/** A fake channel provider that records every call and answers what `behave` returns (default: one id). */
export function countingProvider(
  behave: (input: ProviderSendInput, call: number) => Promise<unknown> | unknown = (input) => [`prov-${input.deliveryId.slice(-8)}-${input.leaseId.slice(-6)}`],
): CountingProvider {
  const calls: ProviderSendInput[] = [];
  const send: ProviderSend = async (input) => {
    calls.push(input);
    return (await behave(input, calls.length)) as string[];
  };
  return {
    send,
    calls,
    callsFor: (deliveryId) => calls.filter((c) => c.deliveryId === deliveryId).length,
    maxCallsPerLease: () => {
      const perLease = new Map<string, number>();
      for (const c of calls) perLease.set(`${c.deliveryId} ${c.leaseId}`, (perLease.get(`${c.deliveryId} ${c.leaseId}`) ?? 0) + 1);
      return Math.max(0, ...perLease.values());
    },
  };
}

// ------------------------------------------------------------------------------------ statistics

/** The p-th percentile (0..100, nearest rank) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Adds `n` to the count of `key`. */
export function tally(map: Map<string, number>, key: string, n = 1): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

export const sortedCounts = (map: Map<string, number>): Record<string, number> => Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
