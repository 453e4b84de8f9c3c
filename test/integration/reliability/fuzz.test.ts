/**
 * Bad input at every endpoint (test/integration/reliability/README.md), generated with fast-check and sent through real HTTP
 * (Hosting -> Functions emulator -> Firestore emulator).
 *
 * Four properties share the run (FC_RUNS cases in total, 280 by default; seed FC_SEED, fixed by
 * default and printed; FC_SHRINK=1 shrinks a counterexample):
 *  - POST /v1/messages as JSON: wrong types, missing and extra fields, boundary lengths in code
 *    points, lone surrogates, invalid UTF-8, identical retries and conflicting reuse of an eventId;
 *  - POST /v1/messages as multipart: odd, missing and mismatched boundaries, broken framing,
 *    missing/duplicated/file-typed `payload`, stray fields, 0-4 images (valid with lying content
 *    types, unsupported, random bytes, empty, oversize, huge dimensions), oversize, malformed or
 *    invalid-UTF-8 payload;
 *  - the four delivery operations: every field of docs/contract.md#limits at, inside and past its bounds,
 *    wrong types, missing and extra fields, ids Firestore cannot store ('a/b', '..', '__x__');
 *  - transport, on all five endpoints: methods, content types and charsets, content encodings,
 *    missing/malformed/unknown keys and inactive integrations, random bytes, oversize bodies,
 *    big (8 KB) and huge (> 16 KB) headers.
 *
 * The oracle is an independent restatement of docs/contract.md and docs/decisions.md (not the service's zod
 * schemas): the exact status and code where the input decides them, otherwise the set of possible
 * ones. Never a 5xx; every 4xx is the error envelope with a request id, including what the
 * runtime's body parser refuses before the service runs (answered by our hook, http/runtime.ts);
 * the one exception is Node's HTTP server's bare 431 for headers over 16 KB. Answers are also
 * checked against openapi/openapi.yaml.
 *
 * Requests that must be rejected go to one integration whose workspace must stay exactly as it
 * was; requests that may be accepted go to another, reconciled exactly at the end (the documents
 * of each 201 and nothing else, its images and no other file). No image file appears elsewhere
 * (other than in other suites' workspaces: the suites run in parallel workers).
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { customerIdFor, eventDocIdFor } from '../../../functions/src/platform/ids';
import { imagePath } from '../../../functions/src/messages/image-store';
import { jpeg, png, webpAnimated, webpLossless, webpLossy } from '../../unit/fixtures/image-bytes';
import { assertResponseMatchesContract } from '../helpers/openapi';
import { closeStack, createTestIntegration, listImageFilesExceptOtherWorkspaces, workspaceDocPaths, type TestIntegration } from '../helpers/stack';
import { FC_RUNS, FC_SEED, FC_SHRINK, codePoints, expectNoKeyMaterialInLogs, describe as describeRes, envelopeCode, rawRequest, sortedCounts, tally, type RawResponse } from './support';

jest.setTimeout(600_000);

// ------------------------------------------------------------------------------------ integrations

/** Receives only requests that may be accepted; reconciled exactly at the end. */
let accepting: TestIntegration;
/** Receives only requests that must be rejected; its workspace must stay as it was. */
let rejecting: TestIntegration;
let inactive: TestIntegration;
let disabled: TestIntegration;
let imagesBefore: string[];
/** The image store as these integrations' requests may change it (other suites write to their own workspaces meanwhile). */
const imageFiles = () => listImageFilesExceptOtherWorkspaces([accepting, rejecting, inactive, disabled].map((i) => i.workspaceId));

type Who = 'accepting' | 'rejecting' | 'inactive' | 'disabled';
const integrationOf = (who: Who): TestIntegration => ({ accepting, rejecting, inactive, disabled })[who];

beforeAll(async () => {
  [accepting, rejecting, inactive, disabled] = await Promise.all([
    createTestIntegration(),
    createTestIntegration(),
    createTestIntegration({ active: false }),
    createTestIntegration({ sourceEnabled: false }),
  ]);
  imagesBefore = await imageFiles();
  console.log(`fuzz: seed=${FC_SEED} runs=${FC_RUNS} (FC_SEED / FC_RUNS override; FC_SHRINK=1 shrinks a failure)`);
});
afterAll(closeStack);

// ------------------------------------------------------------------------------------ the contract, restated (the oracle)

type Spec =
  | { t: 'text'; min: number; max: number; specials?: readonly string[] }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'code' }
  | { t: 'int'; min: number; max: number }
  | { t: 'array'; item: Spec; min: number; max: number }
  | ObjectSpec;
interface ObjectSpec {
  t: 'object';
  fields: Record<string, { spec: Spec; required: boolean }>;
}

const text = (min: number, max: number, specials?: readonly string[]): Spec => (specials ? { t: 'text', min, max, specials } : { t: 'text', min, max });
const req = (spec: Spec) => ({ spec, required: true });
const opt = (spec: Spec) => ({ spec, required: false });
const object = (fields: ObjectSpec['fields']): ObjectSpec => ({ t: 'object', fields });

/** Valid ids (1 to 128 characters) that Firestore cannot use as a document id as they are. */
const DOC_ID_HOSTILE = ['.', '..', '/', '//', 'a/b', '/a', 'a/', 'a//b', '__x__', '__.__', '___', ' ', '\u0000', 'd_/../x', '😀/😀'];
const ID = text(1, 128, DOC_ID_HOSTILE);
const PROVIDER_ID = text(1, 200);

/** docs/contract.md#incoming-messages (wire shape of POST /v1/messages). */
const MESSAGE = object({
  eventId: req(text(1, 128)),
  externalConversationId: req(text(1, 256)),
  sender: req(object({ externalId: req(text(1, 256)), displayName: opt(text(0, 200)), kind: opt({ t: 'enum', values: ['customer', 'service'] }) })),
  message: opt(object({ text: opt(text(0, 10_000)) })),
});

/** docs/contract.md#limits. */
const OPERATIONS = {
  claim: object({ deliveryId: req(ID), requestId: req(ID) }),
  start: object({ deliveryId: req(ID), leaseId: req(ID) }),
  complete: object({ deliveryId: req(ID), leaseId: req(ID), providerMessageIds: req({ t: 'array', item: PROVIDER_ID, min: 1, max: 20 }) }),
  fail: object({
    deliveryId: req(ID),
    leaseId: req(ID),
    outcome: req({ t: 'enum', values: ['retry', 'failed', 'unknown'] }),
    code: req({ t: 'code' }),
    retryAfterMs: opt({ t: 'int', min: 0, max: 3_600_000 }),
    providerMessageIds: opt({ t: 'array', item: PROVIDER_ID, min: 0, max: 20 }),
  }),
} as const;
type Operation = keyof typeof OPERATIONS;
const OPERATION_NAMES = Object.keys(OPERATIONS) as Operation[];

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function conforms(spec: Spec, v: unknown): boolean {
  switch (spec.t) {
    case 'text':
      return typeof v === 'string' && v.isWellFormed() && codePoints(v) >= spec.min && codePoints(v) <= spec.max;
    case 'enum':
      return typeof v === 'string' && spec.values.includes(v);
    case 'code':
      return typeof v === 'string' && v.length <= 80 && /^[a-z][a-z0-9_]*$/.test(v);
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) && v >= spec.min && v <= spec.max;
    case 'array':
      return Array.isArray(v) && v.length >= spec.min && v.length <= spec.max && v.every((item) => conforms(spec.item, item));
    case 'object':
      if (!isPlainObject(v)) return false;
      if (!Object.keys(v).every((k) => Object.hasOwn(spec.fields, k))) return false;
      return Object.entries(spec.fields).every(([k, f]) => (Object.hasOwn(v, k) ? conforms(f.spec, v[k]) : !f.required));
  }
}

/** What POST /v1/messages must answer for a parsed payload with `imageCount` valid images. */
function classifyMessage(v: unknown, imageCount: number): 'ok' | 'invalid_request' | 'empty_message' {
  if (!conforms(MESSAGE, v)) return 'invalid_request';
  const textValue = ((v as { message?: { text?: string } }).message ?? {}).text;
  return (textValue === undefined || textValue === '') && imageCount === 0 ? 'empty_message' : 'ok';
}

// ------------------------------------------------------------------------------------ generators

const SPECIAL_CHARS = ['/', '.', '_', ' ', '"', '\\', '\u0000', '\u001f', '\u007f', '\u00e9', '\u0301', '\u200d', '\u2028', '\ufeff', '\uffff', '中', '😀', '𝄞'];
/** One code point: plain ASCII, any code point, astral (2 UTF-16 units, 4 UTF-8 bytes), or a troublemaker. */
const codePointArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...'abcxyzABCXYZ0189-_'.split('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0x1f300, max: 0x1faff }).map((cp) => String.fromCodePoint(cp)) },
  { weight: 1, arbitrary: fc.constantFrom(...SPECIAL_CHARS) },
);
/** A string of exactly `n` code points. */
const stringOf = (n: number): fc.Arbitrary<string> => fc.string({ unit: codePointArb, minLength: n, maxLength: n });

/** Lengths biased to the boundaries (and mostly small, to keep bodies small). */
const lengthArb = (min: number, max: number): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max: Math.min(max, min + 12) }) },
    { weight: 2, arbitrary: fc.constantFrom(min, max) },
    { weight: 1, arbitrary: fc.integer({ min, max }) },
  );

const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];
const insertAt = (s: string, at: number, what: string): string => {
  const cps = [...s];
  cps.splice(at % (cps.length + 1), 0, what);
  return cps.join('');
};

const wrongTypeArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);

const EXTRA_KEYS = ['__proto__', 'constructor', 'toString', 'eventid', 'EventId', 'images', 'text', 'workspaceId', 'integrationId', ''];
const extraKeyArb = fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 8 }));

const validArb = (spec: Spec): fc.Arbitrary<unknown> => {
  switch (spec.t) {
    case 'text': {
      const plain = lengthArb(spec.min, spec.max).chain(stringOf);
      return spec.specials ? fc.oneof({ weight: 4, arbitrary: plain }, { weight: 1, arbitrary: fc.constantFrom(...spec.specials) }) : plain;
    }
    case 'enum':
      return fc.constantFrom(...spec.values);
    case 'code':
      return fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/), fc.constantFrom('a', `a${'_'.repeat(79)}`, 'provider_timeout'));
    case 'int':
      return fc.oneof(fc.integer({ min: spec.min, max: spec.max }), fc.constantFrom(spec.min, spec.max));
    case 'array':
      return lengthArb(spec.min, spec.max).chain((n) => fc.array(validArb(spec.item), { minLength: n, maxLength: n }));
    case 'object':
      return objectArb(spec, false);
  }
};

const badArb = (spec: Spec): fc.Arbitrary<unknown> => {
  switch (spec.t) {
    case 'text':
      return fc.oneof(
        stringOf(spec.max + 1),
        spec.min > 0 ? stringOf(spec.min - 1) : stringOf(spec.max + 2),
        fc.tuple(validArb(spec) as fc.Arbitrary<string>, fc.nat(), fc.constantFrom(...LONE_SURROGATES)).map(([s, at, sur]) => insertAt(s, at, sur)),
      );
    case 'enum':
      return fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('', ...spec.values.map((v) => v.toUpperCase()), ...spec.values.map((v) => ` ${v}`)));
    case 'code':
      return fc.oneof(fc.constantFrom('', 'A', '1abc', '_a', 'a-b', 'a b', 'é', 'aé', 'a'.repeat(81), 'retry\n'), fc.string({ maxLength: 10 }));
    case 'int':
      return fc.oneof(
        fc.constantFrom(spec.min - 1, spec.max + 1, 1.5, -0.5, 1e21, Number.MAX_SAFE_INTEGER + 2),
        fc.double({ min: spec.min, max: spec.max, noNaN: true, noInteger: true }),
        fc.string({ maxLength: 6 }),
      );
    case 'array':
      return fc.oneof(
        fc.array(validArb(spec.item), { minLength: spec.max + 1, maxLength: spec.max + 2 }),
        ...(spec.min > 0 ? [fc.constant([])] : []),
        fc.tuple(fc.array(validArb(spec.item), { maxLength: 3 }), badArb(spec.item), fc.nat()).map(([items, bad, at]) => {
          const copy: unknown[] = [...items];
          copy.splice(at % (copy.length + 1), 0, bad);
          return copy;
        }),
        fc.array(wrongTypeArb, { minLength: 1, maxLength: 3 }),
      );
    case 'object':
      return objectArb(spec, true);
  }
};

/** Any value for a field: mostly valid, else past its bounds, else the wrong type. */
const anyArb = (spec: Spec): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 6, arbitrary: validArb(spec) }, { weight: 3, arbitrary: badArb(spec) }, { weight: 1, arbitrary: wrongTypeArb });

const ABSENT = Symbol('absent');

/** Sets an own enumerable property, even `__proto__` (so JSON.stringify writes it as a key). */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** An object of `spec`: every field valid (`mutate` false), or fields possibly bad, missing or extra. */
function objectArb(spec: ObjectSpec, mutate: boolean): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.entries(spec.fields).map(([k, f]) => {
    const present = mutate ? anyArb(f.spec) : validArb(f.spec);
    const absentWeight = f.required ? (mutate ? 1 : 0) : 3;
    const value: fc.Arbitrary<unknown> = absentWeight > 0 ? fc.oneof({ weight: 10, arbitrary: present }, { weight: absentWeight, arbitrary: fc.constant(ABSENT) }) : present;
    return value.map((v) => [k, v] as const);
  });
  const extras = mutate
    ? fc.oneof({ weight: 8, arbitrary: fc.constant([] as Array<[string, unknown]>) }, { weight: 1, arbitrary: fc.array(fc.tuple(extraKeyArb, fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 2 }) })
    : fc.constant([] as Array<[string, unknown]>);
  return fc.tuple(fc.tuple(...fields), extras).map(([entries, extra]) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries) if (v !== ABSENT) put(o, k, v);
    for (const [k, v] of extra) if (!Object.hasOwn(spec.fields, k)) put(o, k, v);
    return o;
  });
}

/** A body value for `spec`: valid, mutated, or any JSON at all. */
const bodyValueArb = (spec: ObjectSpec): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 4, arbitrary: objectArb(spec, false) }, { weight: 6, arbitrary: objectArb(spec, true) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc3, 0x28],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
].map((bytes) => Buffer.from(bytes));

/** Inserts invalid UTF-8 right after the first `"` (inside the first string), else appends it. */
function withInvalidUtf8(json: Buffer, bad: Buffer): Buffer {
  const at = json.indexOf(0x22);
  return at < 0 ? Buffer.concat([json, bad]) : Buffer.concat([json.subarray(0, at + 1), bad, json.subarray(at + 1)]);
}

/** eventIds of cases that may be accepted start with a code point unique in the run (fresh events, no accidental conflicts). */
let uniqueCounter = 0;
function uniqueCodePoint(): string {
  const n = uniqueCounter++;
  return String.fromCodePoint(n < 20_000 ? 0x4e00 + n : 0x20000 + (n - 20_000));
}
function withUniqueEventId(v: unknown): unknown {
  if (!isPlainObject(v) || typeof v.eventId !== 'string' || v.eventId.length === 0) return v;
  const copy: Record<string, unknown> = {};
  for (const k of Object.keys(v)) put(copy, k, v[k]);
  copy.eventId = uniqueCodePoint() + [...v.eventId].slice(1).join('');
  return copy;
}

// ------------------------------------------------------------------------------------ images

interface ImageKind {
  name: string;
  bytes: Buffer;
  /** null when the service must accept it; else the status and code it must answer. */
  defect: { status: number; code: string | undefined } | null;
  format?: 'png' | 'jpeg' | 'webp';
}
const OVERSIZE_IMAGE = png(64, 64, { totalBytes: 10 * 1024 * 1024 + 1 });
const GIF = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([1, 0, 1, 0, 0x80, 0, 0]), Buffer.alloc(20)]);
const VALID_IMAGES: ImageKind[] = [
  { name: 'png', bytes: png(16, 16), defect: null, format: 'png' },
  { name: 'jpeg', bytes: jpeg(8, 8), defect: null, format: 'jpeg' },
  { name: 'webp-lossy', bytes: webpLossy(10, 10), defect: null, format: 'webp' },
  { name: 'webp-lossless', bytes: webpLossless(4, 4), defect: null, format: 'webp' },
];
const BAD_IMAGES: ImageKind[] = [
  { name: 'gif', bytes: GIF, defect: { status: 400, code: 'unsupported_image' } },
  { name: 'animated-webp', bytes: webpAnimated(10, 10), defect: { status: 400, code: 'unsupported_image' } },
  { name: 'empty', bytes: Buffer.alloc(0), defect: { status: 400, code: undefined } },
  { name: 'truncated-png', bytes: png(16, 16).subarray(0, 20), defect: { status: 400, code: undefined } },
  { name: 'huge-dimensions', bytes: png(20_000, 16), defect: { status: 400, code: 'image_too_large_dimensions' } },
];
const imageArb: fc.Arbitrary<ImageKind> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...VALID_IMAGES) },
  { weight: 5, arbitrary: fc.constantFrom(...BAD_IMAGES) },
  { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => ({ name: 'random-bytes', bytes: Buffer.from(b), defect: { status: 400, code: undefined } })) },
  { weight: 1, arbitrary: fc.constant({ name: 'oversize', bytes: OVERSIZE_IMAGE, defect: { status: 413, code: 'image_too_large' } }) },
);
const DECLARED_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'text/plain', 'application/json', 'application/octet-stream', 'image/svg+xml', 'x/y; charset=utf-16'];
const FILENAMES = ['a.png', 'photo.jpg', '../../../etc/passwd', '..\\..\\win.ini', 'ünïcödé.webp', '', '.htaccess', `${'x'.repeat(300)}.png`, 'a;b=c.png', '%00.png'];

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// ------------------------------------------------------------------------------------ keys

interface AuthVariant {
  name: string;
  /** Whose key is presented; null for no usable key. */
  who: 'target' | 'inactive' | 'disabled' | null;
  header(key: string): string | undefined;
  /** What the service must answer for it (when the method is POST). */
  outcome: 'ok' | { status: 401 | 403; code: string };
}
const INVALID_KEY = { status: 401, code: 'invalid_key' } as const;
const changeOne = (key: string): string => `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
const AUTH_VARIANTS: AuthVariant[] = [
  { name: 'Bearer key', who: 'target', header: (k) => `Bearer ${k}`, outcome: 'ok' },
  { name: 'bearer (lower case)', who: 'target', header: (k) => `bearer ${k}`, outcome: 'ok' },
  { name: 'Bearer, two spaces', who: 'target', header: (k) => `Bearer  ${k}`, outcome: 'ok' },
  { name: 'no Authorization', who: null, header: () => undefined, outcome: INVALID_KEY },
  { name: 'Bearer only', who: null, header: () => 'Bearer', outcome: INVALID_KEY },
  { name: 'key and junk', who: 'target', header: (k) => `Bearer ${k} junk`, outcome: INVALID_KEY },
  { name: 'Basic', who: 'target', header: (k) => `Basic ${Buffer.from(`${k}:`).toString('base64')}`, outcome: INVALID_KEY },
  { name: 'no scheme', who: 'target', header: (k) => k, outcome: INVALID_KEY },
  { name: 'truncated key', who: 'target', header: (k) => `Bearer ${k.slice(0, -1)}`, outcome: INVALID_KEY },
  { name: 'key + 1 char', who: 'target', header: (k) => `Bearer ${k}A`, outcome: INVALID_KEY },
  { name: 'one char changed (unknown)', who: 'target', header: (k) => `Bearer ${changeOne(k)}`, outcome: INVALID_KEY },
  { name: 'unknown live key', who: null, header: () => `Bearer sdk_live_${'Z'.repeat(43)}`, outcome: INVALID_KEY },
  { name: 'tab separator', who: 'target', header: (k) => `Bearer\t${k}`, outcome: INVALID_KEY },
  { name: 'latin-1 junk', who: null, header: () => `Bearer sdk_test_${'é'.repeat(43)}`, outcome: INVALID_KEY },
  { name: 'upper-cased key', who: 'target', header: (k) => `Bearer ${k.toUpperCase()}`, outcome: INVALID_KEY },
  { name: '8 KB key', who: null, header: () => `Bearer ${'k'.repeat(8000)}`, outcome: INVALID_KEY },
  { name: 'inactive integration', who: 'inactive', header: (k) => `Bearer ${k}`, outcome: { status: 403, code: 'integration_inactive' } },
  { name: 'disabled source', who: 'disabled', header: (k) => `Bearer ${k}`, outcome: { status: 403, code: 'source_disabled' } },
];
const GOOD_AUTH = AUTH_VARIANTS[0] as AuthVariant;

// ------------------------------------------------------------------------------------ cases and the oracle

interface Expectation {
  /** Must be accepted (201, or 200 duplicate for `duplicateOf`). */
  accepted?: boolean;
  /** May be accepted or rejected (e.g. LF-only multipart framing). */
  mayAccept?: boolean;
  status?: number;
  statuses?: readonly number[];
  code?: string;
  /**
   * The runtime's body parser may refuse the body before the service's own checks run: then the
   * answer is one of PARSER_ANSWERS (still our envelope), whatever status the service would give.
   */
  parserFirst?: boolean;
  /** Headers over 16 KB: Node's HTTP server answers 431 before anything else. */
  headersTooLarge?: boolean;
  /** For a replayed message: the original answer (the retry must be 200 duplicate with these ids). */
  duplicateOf?: { conversationId: string; messageId: string };
}

interface Case {
  property: string;
  label: string;
  path: string;
  method: string;
  auth: AuthVariant;
  /** Integration whose key `auth` presents when it presents the target's. */
  target: 'accepting' | 'rejecting';
  headers: Record<string, string>;
  body?: Buffer;
  expect: Expectation;
  /** For messages that may be accepted: what a 201 records. */
  message?: { payload: Record<string, unknown>; images: ImageKind[]; bytes: Buffer; contentType: string };
}

interface AcceptedMessage {
  payload: Record<string, unknown>;
  images: ImageKind[];
  conversationId: string;
  messageId: string;
  /** JSON messages: the exact request, for identical retries. */
  bytes?: Buffer;
  contentType?: string;
}
const acceptedMessages: AcceptedMessage[] = [];
const outcomes = new Map<string, number>();
const casesPerProperty = new Map<string, number>();

function headersFor(c: Case): Record<string, string> {
  const headers: Record<string, string> = { ...c.headers };
  const who: Who | null = c.auth.who === null ? null : c.auth.who === 'target' ? c.target : c.auth.who;
  const value = c.auth.header(who === null ? '' : integrationOf(who).key);
  if (value !== undefined) headers.authorization = value;
  return headers;
}

/** Sends a case, checks the answer against its expectation, and records what a 201 created. */
async function runCase(c: Case): Promise<void> {
  let res: RawResponse;
  const request: { method: string; headers: Record<string, string>; body?: Buffer } = { method: c.method, headers: headersFor(c) };
  if (c.body !== undefined && c.method !== 'GET' && c.method !== 'HEAD') request.body = c.body;
  try {
    res = await rawRequest(c.path, request);
  } catch (err) {
    throw new Error(`[${c.property}] ${c.label}: the request failed: ${(err as Error).message}`);
  }
  const label = check(c, res);
  tally(outcomes, `${c.path} ${label}`);
  tally(casesPerProperty, c.property);
  if (res.status === 201 && c.message) {
    const body = res.json as { conversationId: string; messageId: string };
    const accepted: AcceptedMessage = { payload: c.message.payload, images: c.message.images, conversationId: body.conversationId, messageId: body.messageId };
    if (c.message.images.length === 0 && c.headers['content-type'] !== undefined && !c.headers['content-type'].startsWith('multipart/')) {
      accepted.bytes = c.message.bytes;
      accepted.contentType = c.headers['content-type'];
    }
    acceptedMessages.push(accepted);
  }
}

function check(c: Case, res: RawResponse): string {
  const where = `[${c.property}] ${c.method} ${c.path} (${c.label}; auth: ${c.auth.name}; ${c.headers['content-type'] ?? 'no content type'}; ${c.body?.length ?? 0} bytes)\n   -> ${describeRes(res)}`;
  const fail = (why: string): never => {
    throw new Error(`${why}: ${where}`);
  };
  const e = c.expect;
  if (res.status >= 500) fail('a 5xx');
  if (e.headersTooLarge) {
    if (res.status !== 431) fail('expected the HTTP server\'s 431 for headers over 16 KB');
    return '431 (headers too large)';
  }
  if (res.status >= 200 && res.status < 300) {
    if (!e.accepted && !e.mayAccept) fail('an invalid request was accepted');
    const body = res.json as { conversationId?: unknown; messageId?: unknown; duplicate?: unknown } | undefined;
    if (!isPlainObject(body) || typeof body.conversationId !== 'string' || typeof body.messageId !== 'string' || typeof body.duplicate !== 'boolean') fail('not a success body');
    if (e.duplicateOf) {
      if (res.status !== 200 || body?.duplicate !== true) fail('an identical retry must be 200 duplicate');
      if (body?.conversationId !== e.duplicateOf.conversationId || body?.messageId !== e.duplicateOf.messageId) fail('a duplicate must answer the original ids');
    } else if (res.status !== 201 || body?.duplicate !== false) fail('a new event must be 201');
    assertContract(c, res, where);
    return `${res.status}`;
  }
  if (e.accepted && !e.mayAccept) fail('a valid request was rejected');
  if (res.status < 400) fail('neither success nor a 4xx');
  const code = envelopeCode(res);
  if (code === undefined) {
    if (c.method === 'HEAD') {
      // No body on HEAD: the status and the request id are all there is.
      if (res.status !== 405 || !res.headers.get('x-request-id')) fail('HEAD must be 405 with a request id');
      return '405 (HEAD)';
    }
    fail('a 4xx without the error envelope');
  }
  if (e.parserFirst && PARSER_ANSWERS.includes(`${res.status} ${code}`)) {
    assertContract(c, res, where);
    return `${res.status} ${code} (runtime parser)`;
  }
  if (e.status !== undefined && res.status !== e.status) fail(`expected ${e.status}${e.code ? ` ${e.code}` : ''}`);
  if (e.statuses !== undefined && !e.statuses.includes(res.status)) fail(`expected one of ${e.statuses.join(', ')}`);
  if (e.code !== undefined && code !== e.code) fail(`expected code ${e.code}`);
  assertContract(c, res, where);
  return `${res.status} ${code}`;
}

function assertContract(c: Case, res: RawResponse, where: string): void {
  try {
    assertResponseMatchesContract(c.method, c.path, res.status, res.headers, res.json ?? res.text);
  } catch (err) {
    throw new Error(`the answer does not match openapi/openapi.yaml (${(err as Error).message}): ${where}`);
  }
}

/** What the runtime hook answers for a body the runtime's parser refuses (http/runtime.ts). */
const PARSER_ANSWERS = ['400 invalid_json', '400 invalid_request', '413 payload_too_large', '415 unsupported_media_type'];

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'APPLICATION/JSON'];

/** Expectation for a JSON body that reached the service with an accepted content type. */
function expectForJson(bytes: Buffer, value: unknown, valid: Expectation, classify: (v: unknown) => { status: number; code: string } | null): Expectation {
  if (bytes.length > 65_536) return { status: 413, code: 'payload_too_large' };
  // body-parser (strict) refuses JSON that is not an object or array before the service runs;
  // the service would refuse it too: 400 invalid_json either way.
  if (!isPlainObject(value) && !Array.isArray(value)) return { status: 400, code: 'invalid_json' };
  const problem = classify(value);
  return problem === null ? valid : problem;
}

const runs = (share: number): number => Math.max(1, Math.round(FC_RUNS * share));
const fcOptions = (offset: number, share: number) => ({ seed: FC_SEED + offset, numRuns: runs(share), endOnFailure: !FC_SHRINK });

// ------------------------------------------------------------------------------------ 1. messages, JSON

test(`POST /v1/messages with generated JSON bodies: exact 201 / 200 duplicate / 409 / 400 / 413, never a 5xx`, async () => {
  const caseArb = fc.record({
    value: bodyValueArb(MESSAGE),
    mode: fc.oneof(
      { weight: 16, arbitrary: fc.constant('plain' as const) },
      { weight: 2, arbitrary: fc.constant('invalidUtf8' as const) },
      { weight: 2, arbitrary: fc.constant('replay' as const) },
      { weight: 1, arbitrary: fc.constant('conflict' as const) },
    ),
    bad: fc.constantFrom(...INVALID_UTF8),
    pick: fc.nat(),
    contentType: fc.constantFrom(...JSON_TYPES),
  });
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ value, mode, bad, pick, contentType }) => {
      const earlier = acceptedMessages.filter((m) => m.bytes !== undefined);
      const base = { property: 'messages-json', path: '/v1/messages', method: 'POST', auth: GOOD_AUTH };
      if ((mode === 'replay' || mode === 'conflict') && earlier.length > 0) {
        const original = earlier[pick % earlier.length] as AcceptedMessage;
        if (mode === 'replay') {
          await runCase({ ...base, label: 'identical retry', target: 'accepting', headers: { 'content-type': original.contentType as string }, body: original.bytes as Buffer, expect: { accepted: true, duplicateOf: { conversationId: original.conversationId, messageId: original.messageId } } });
        } else {
          const changed = { ...original.payload, message: { text: `different content ${pick}` } };
          await runCase({ ...base, label: 'same eventId, other content', target: 'accepting', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(changed)), expect: { status: 409, code: 'event_conflict' } });
        }
        return;
      }
      const payload = withUniqueEventId(value);
      const json = Buffer.from(JSON.stringify(payload), 'utf8');
      const bytes = mode === 'invalidUtf8' ? withInvalidUtf8(json, bad) : json;
      let expectation: Expectation;
      if (mode === 'invalidUtf8') {
        expectation = bytes.length > 65_536 ? { status: 413, code: 'payload_too_large' } : { status: 400, code: 'invalid_json' };
      } else {
        expectation = expectForJson(bytes, payload, { accepted: true }, (v) => {
          const verdict = classifyMessage(v, 0);
          return verdict === 'ok' ? null : { status: 400, code: verdict };
        });
      }
      const c: Case = { ...base, label: `${mode} ${bytes.length} bytes`, target: expectation.accepted ? 'accepting' : 'rejecting', headers: { 'content-type': contentType }, body: bytes, expect: expectation };
      if (expectation.accepted) c.message = { payload: payload as Record<string, unknown>, images: [], bytes, contentType };
      await runCase(c);
    }),
    fcOptions(1, 0.3),
  );
});

// ------------------------------------------------------------------------------------ 2. messages, multipart

interface Part {
  name: string;
  data: Buffer;
  filename?: string;
  contentType?: string;
}
type Framing = 'crlf' | 'lfOnly' | 'noClosing' | 'preamble' | 'epilogue';

function buildMultipart(parts: readonly Part[], boundary: string, framing: Framing): Buffer {
  const eol = framing === 'lfOnly' ? '\n' : '\r\n';
  const chunks: Buffer[] = [];
  if (framing === 'preamble') chunks.push(Buffer.from(`This preamble is ignored by every MIME parser.${eol}`));
  for (const part of parts) {
    let head = `--${boundary}${eol}Content-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += eol;
    if (part.contentType !== undefined) head += `Content-Type: ${part.contentType}${eol}`;
    chunks.push(Buffer.from(head + eol, 'utf8'), part.data, Buffer.from(eol));
  }
  if (framing !== 'noClosing') chunks.push(Buffer.from(`--${boundary}--${eol}`));
  if (framing === 'epilogue') chunks.push(Buffer.from('an epilogue, ignored too\r\n'));
  return Buffer.concat(chunks);
}

/** RFC 2046 boundary characters (a space is allowed, but not last). */
const BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ".split('');
const oddBoundaryArb = fc
  .string({ unit: fc.constantFrom(...BCHARS), minLength: 15, maxLength: 69 })
  .map((s) => `${s}Z`);
const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: 16, maxLength: 16 });

const MALFORMED_JSON = ['{', '{"eventId":', '{"eventId":"x",}', "{'eventId':'x'}", 'null', '[]', '', ' ', 'undefined', '{"a":1}{"b":2}', '\ufeff{"eventId":"x"}', 'NaN', '"just a string"'];
const OVERSIZE_PAYLOAD = JSON.stringify({ eventId: 'oversize', externalConversationId: 'c', sender: { externalId: 's' }, message: { text: 'a'.repeat(65_600) } });

type PayloadChoice =
  | { kind: 'json'; value: unknown }
  | { kind: 'malformed'; text: string }
  | { kind: 'invalidUtf8'; value: unknown; bad: Buffer }
  | { kind: 'missing' }
  | { kind: 'twice'; value: unknown }
  | { kind: 'oversize' };
type Structure = 'ok' | 'imagesFirst' | 'extraField' | 'wrongFileField' | 'payloadAsFile' | 'payloadOctetStream' | 'imageAsField';

test(`POST /v1/messages with generated multipart bodies: broken framing, boundaries, parts and images are 4xx, valid ones 201`, async () => {
  const payloadArb: fc.Arbitrary<PayloadChoice> = fc.oneof(
    { weight: 12, arbitrary: bodyValueArb(MESSAGE).map((value) => ({ kind: 'json' as const, value })) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((t) => ({ kind: 'malformed' as const, text: t })) },
    { weight: 2, arbitrary: fc.tuple(objectArb(MESSAGE, false), fc.constantFrom(...INVALID_UTF8)).map(([value, bad]) => ({ kind: 'invalidUtf8' as const, value, bad })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'missing' as const }) },
    { weight: 1, arbitrary: objectArb(MESSAGE, false).map((value) => ({ kind: 'twice' as const, value })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'oversize' as const }) },
  );
  const caseArb = fc.record({
    payload: payloadArb,
    payloadType: fc.constantFrom(undefined, 'text/plain; charset=utf-8', 'application/json', 'text/plain; charset=UTF-8'),
    images: fc.array(fc.record({ kind: imageArb, declared: fc.option(fc.constantFrom(...DECLARED_TYPES), { nil: undefined }), filename: fc.constantFrom(...FILENAMES) }), { maxLength: 4 }),
    structure: fc.oneof(
      { weight: 10, arbitrary: fc.constant<Structure>('ok') },
      { weight: 2, arbitrary: fc.constant<Structure>('imagesFirst') },
      { weight: 4, arbitrary: fc.constantFrom<Structure>('extraField', 'wrongFileField', 'payloadAsFile', 'payloadOctetStream', 'imageAsField') },
    ),
    strayName: fc.constantFrom('foo', 'image', 'Payload', 'IMAGES', 'file', 'payload'),
    boundary: fc.oneof(
      { weight: 10, arbitrary: hex.map((h) => ({ kind: 'random' as const, body: `----fuzz${h}`, header: `----fuzz${h}` })) },
      { weight: 3, arbitrary: oddBoundaryArb.map((b) => ({ kind: 'odd' as const, body: b, header: `"${b}"` })) },
      { weight: 1, arbitrary: fc.tuple(hex, hex).map(([a, b]) => ({ kind: 'mismatch' as const, body: `----fuzz${a}`, header: `zz${b}` })) },
      { weight: 1, arbitrary: fc.constantFrom({ kind: 'missing' as const, body: '----fuzzmissing', header: null }, { kind: 'empty' as const, body: '----fuzzempty', header: '' }) },
    ),
    framing: fc.oneof({ weight: 10, arbitrary: fc.constant<Framing>('crlf') }, { weight: 3, arbitrary: fc.constantFrom<Framing>('preamble', 'epilogue', 'noClosing', 'lfOnly') }),
  });

  await fc.assert(
    fc.asyncProperty(caseArb, async (d) => {
      // At most one 10 MB image per request (more would cross the 21 MB and platform limits instead).
      let seenOversize = false;
      const images = d.images.map((img) => {
        if (img.kind.name !== 'oversize') return img;
        if (seenOversize) return { ...img, kind: VALID_IMAGES[0] as ImageKind };
        seenOversize = true;
        return img;
      });
      const defects: Array<{ status: number; code: string | undefined }> = [];
      const invalidMultipart = { status: 400, code: 'invalid_multipart' };

      // payload part(s)
      const payloadParts: Part[] = [];
      let payloadValue: unknown;
      const p = d.payload;
      const asPart = (data: Buffer): Part => (d.payloadType === undefined ? { name: 'payload', data } : { name: 'payload', data, contentType: d.payloadType });
      if (p.kind === 'json' || p.kind === 'twice') {
        payloadValue = withUniqueEventId(p.value);
        payloadParts.push(asPart(Buffer.from(JSON.stringify(payloadValue), 'utf8')));
        if (p.kind === 'twice') {
          payloadParts.push(asPart(Buffer.from(JSON.stringify(payloadValue), 'utf8')));
          defects.push(invalidMultipart);
        }
      } else if (p.kind === 'malformed') {
        payloadParts.push(asPart(Buffer.from(p.text, 'utf8')));
        defects.push({ status: 400, code: undefined });
      } else if (p.kind === 'invalidUtf8') {
        payloadParts.push(asPart(withInvalidUtf8(Buffer.from(JSON.stringify(p.value), 'utf8'), p.bad)));
        defects.push({ status: 400, code: 'invalid_json' });
      } else if (p.kind === 'oversize') {
        payloadParts.push(asPart(Buffer.from(OVERSIZE_PAYLOAD)));
        defects.push({ status: 413, code: 'payload_too_large' });
      } else {
        defects.push(invalidMultipart);
      }

      // image parts
      const imageParts: Part[] = images.map((img) => ({ name: 'images', data: img.kind.bytes, filename: img.filename, ...(img.declared !== undefined ? { contentType: img.declared } : {}) }));
      if (images.length > 3) defects.push({ status: 400, code: 'too_many_images' });
      for (const img of images) if (img.kind.defect) defects.push(img.kind.defect);
      // A part with filename="" (and no octet-stream type) is a text field to the multipart parser
      // (busboy), so it is refused as a stray field: documented in docs/decisions.md.
      for (const img of images) if (img.filename === '' && img.declared !== 'application/octet-stream') defects.push(invalidMultipart);

      // structure
      let parts: Part[] = [...payloadParts, ...imageParts];
      switch (d.structure) {
        case 'imagesFirst':
          parts = [...imageParts, ...payloadParts];
          break;
        case 'extraField':
          parts.push({ name: d.strayName === 'payload' ? 'foo' : d.strayName, data: Buffer.from('stray') });
          defects.push(invalidMultipart);
          break;
        case 'wrongFileField':
          parts.push({ name: d.strayName, data: png(16, 16), filename: 'stray.png', contentType: 'image/png' });
          defects.push(invalidMultipart);
          break;
        case 'payloadAsFile':
          if (payloadParts[0]) {
            payloadParts[0].filename = 'payload.json';
            defects.push(invalidMultipart);
          }
          break;
        case 'payloadOctetStream':
          if (payloadParts[0]) {
            payloadParts[0].contentType = 'application/octet-stream';
            defects.push(invalidMultipart);
          }
          break;
        case 'imageAsField':
          if (imageParts[0]) {
            delete imageParts[0].filename;
            imageParts[0].contentType = 'image/png';
            defects.push(invalidMultipart);
          }
          break;
        case 'ok':
          break;
      }
      // The message itself, once the parts are fine: schema, then (images validated) empty_message.
      if (payloadValue !== undefined && !defects.some((x) => x.code === 'invalid_multipart' || x.status === 413)) {
        const verdict = classifyMessage(payloadValue, images.length);
        if (verdict !== 'ok') defects.push({ status: 400, code: verdict });
      }

      let expectation: Expectation;
      const b = d.boundary;
      if (b.kind === 'mismatch' || b.kind === 'missing' || b.kind === 'empty') {
        expectation = { status: 400, code: 'invalid_multipart' };
      } else if (d.framing === 'noClosing') {
        expectation = { statuses: [...new Set([400, ...defects.map((x) => x.status)])] };
      } else if (d.framing === 'lfOnly') {
        // Bare LF line breaks: a lenient parser may read them; either way, never a 5xx or a write from a bad payload.
        expectation = defects.length === 0 ? { mayAccept: true, statuses: [400] } : { statuses: [...new Set([400, ...defects.map((x) => x.status)])] };
      } else if (defects.length === 0) {
        expectation = { accepted: true };
      } else if (defects.length === 1) {
        const only = defects[0] as { status: number; code: string | undefined };
        expectation = only.code === undefined ? { status: only.status } : { status: only.status, code: only.code };
      } else {
        expectation = { statuses: [...new Set(defects.map((x) => x.status))] };
      }

      const contentType = b.header === null ? 'multipart/form-data' : `multipart/form-data; boundary=${b.header}`;
      const body = buildMultipart(parts, b.body, d.framing);
      const target = expectation.accepted || expectation.mayAccept ? 'accepting' : 'rejecting';
      const label = `payload ${p.kind}, ${images.map((i) => i.kind.name).join('+') || 'no images'}, ${d.structure}, boundary ${b.kind}, ${d.framing}`;
      const c: Case = { property: 'messages-multipart', label, path: '/v1/messages', method: 'POST', auth: GOOD_AUTH, target, headers: { 'content-type': contentType }, body, expect: expectation };
      if (target === 'accepting' && isPlainObject(payloadValue)) c.message = { payload: payloadValue, images: images.map((i) => i.kind), bytes: body, contentType };
      await runCase(c);
    }),
    fcOptions(2, 0.22),
  );
});

// ------------------------------------------------------------------------------------ 3. delivery operations

test('the four delivery operations with generated bodies: exact 400 invalid_request for any spec violation, 404 for every valid one (ids Firestore cannot store included)', async () => {
  const caseArb = fc.constantFrom(...OPERATION_NAMES).chain((op) => fc.record({ op: fc.constant(op), value: bodyValueArb(OPERATIONS[op]), contentType: fc.constantFrom(...JSON_TYPES) }));
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ op, value, contentType }) => {
      const bytes = Buffer.from(JSON.stringify(value), 'utf8');
      const expectation = expectForJson(bytes, value, { status: 404, code: 'delivery_not_found' }, (v) => (conforms(OPERATIONS[op], v) ? null : { status: 400, code: 'invalid_request' }));
      await runCase({ property: `deliveries-${op}`, label: `${bytes.length} bytes: ${bytes.toString('utf8').slice(0, 160)}`, path: `/v1/deliveries/${op}`, method: 'POST', auth: GOOD_AUTH, target: 'rejecting', headers: { 'content-type': contentType }, body: bytes, expect: expectation });
    }),
    fcOptions(3, 0.28),
  );
});

// ------------------------------------------------------------------------------------ 4. transport, all endpoints

const PATHS = ['/v1/messages', ...OPERATION_NAMES.map((op) => `/v1/deliveries/${op}`)];
const MULTIPART_BOUNDARY = '----fuzz-transport-boundary';
const TRANSPORT_TYPES: ReadonlyArray<string | null> = [
  null,
  '',
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON; Charset="UTF-8"',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset',
  'application/json, text/plain',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`,
  'application/xml',
  'application/json-patch+json',
  '*/*',
  ';;;===',
];
/** Content types the platform cannot parse: its body parsers skip them (and the body, see predictTransport). */
const UNPARSEABLE_TYPES: ReadonlyArray<string | null> = ['', ';;;===', 'application/json; charset', 'application/json, text/plain'];
type BodyKind = 'valid' | 'empty' | 'random' | 'malformed' | 'big' | 'invalidUtf8' | 'multipart';
type ExtraHeaders = 'none' | 'big' | 'huge' | 'many' | 'gzip' | 'bogusEncoding' | 'accept';

/** Our pipeline's content-type verdict (docs/decisions.md): null when accepted, else 415. */
function mediaAccepted(contentType: string | null, path: string): boolean {
  if (contentType === null || contentType.trim() === '') return false;
  const [type, ...params] = contentType.split(';').map((x) => x.trim());
  const media = (type ?? '').toLowerCase();
  const accepts = path === '/v1/messages' ? ['application/json', 'multipart/form-data'] : ['application/json'];
  if (!accepts.includes(media)) return false;
  const charset = params.find((x) => x.toLowerCase().startsWith('charset='));
  return charset === undefined || /^charset="?utf-8"?$/i.test(charset);
}

function predictTransport(path: string, method: string, auth: AuthVariant, contentType: string | null, body: BodyKind, bytes: Buffer, extra: ExtraHeaders): Expectation {
  if (extra === 'huge') return { headersTooLarge: true };
  // With a Content-Encoding, the platform's body parser (which matches every parseable content
  // type) inflates the body before the service runs and fails on these: only a 4xx may come back.
  if ((extra === 'gzip' || extra === 'bogusEncoding') && contentType !== null && !UNPARSEABLE_TYPES.includes(contentType)) {
    return { statuses: [400, 401, 403, 405, 413, 415], parserFirst: true };
  }
  const media = contentType === null ? '' : (contentType.split(';')[0] ?? '').trim().toLowerCase();
  const parserFirst = extra === 'gzip' || extra === 'bogusEncoding' || ['application/json', 'text/plain', 'application/x-www-form-urlencoded'].includes(media);
  const withPlatform = (e: Expectation): Expectation => (parserFirst ? { ...e, parserFirst } : e);
  if (method !== 'POST') return withPlatform({ status: 405, code: 'method_not_allowed' });
  if (auth.outcome !== 'ok') return withPlatform({ status: auth.outcome.status, code: auth.outcome.code });
  if (!mediaAccepted(contentType, path)) return withPlatform({ status: 415, code: 'unsupported_media_type' });
  // A Content-Type the platform cannot parse reaches us without a body (see the probe in the report).
  if (contentType === 'application/json; charset') return { status: 400, code: 'invalid_json' };
  if (media === 'multipart/form-data') {
    return contentType?.includes('boundary=') && body === 'multipart' ? { accepted: true } : withPlatform({ status: 400, code: 'invalid_multipart' });
  }
  if (bytes.length > 65_536) return withPlatform({ status: 413, code: 'payload_too_large' });
  switch (body) {
    case 'empty':
      return withPlatform({ status: 400, code: 'invalid_json' });
    case 'invalidUtf8':
      return withPlatform({ status: 400, code: 'invalid_json' });
    case 'random':
    case 'malformed':
    case 'multipart':
      return withPlatform({ status: 400 });
    case 'valid':
    case 'big':
      return path === '/v1/messages' ? { accepted: true } : { status: 404, code: 'delivery_not_found' };
  }
}

test('transport on all five endpoints: methods, content types, charsets, encodings, keys, sizes and headers', async () => {
  const caseArb = fc.record({
    path: fc.constantFrom(...PATHS),
    method: fc.oneof({ weight: 6, arbitrary: fc.constant('POST') }, { weight: 2, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') }),
    auth: fc.oneof({ weight: 4, arbitrary: fc.constant(GOOD_AUTH) }, { weight: 3, arbitrary: fc.constantFrom(...AUTH_VARIANTS) }),
    contentType: fc.oneof({ weight: 3, arbitrary: fc.constant<string | null>('application/json') }, { weight: 4, arbitrary: fc.constantFrom(...TRANSPORT_TYPES) }),
    body: fc.constantFrom<BodyKind>('valid', 'valid', 'empty', 'random', 'malformed', 'big', 'invalidUtf8', 'multipart'),
    random: fc.uint8Array({ minLength: 1, maxLength: 512 }),
    malformed: fc.constantFrom(...MALFORMED_JSON.filter((m) => m.trim() !== '')),
    bad: fc.constantFrom(...INVALID_UTF8),
    extra: fc.oneof({ weight: 8, arbitrary: fc.constant<ExtraHeaders>('none') }, { weight: 3, arbitrary: fc.constantFrom<ExtraHeaders>('big', 'huge', 'many', 'gzip', 'bogusEncoding', 'accept') }),
    n: fc.nat(),
  });
  await fc.assert(
    fc.asyncProperty(caseArb, async (d) => {
      const isMessages = d.path === '/v1/messages';
      const validValue = isMessages
        ? { eventId: `${uniqueCodePoint()}-transport-${d.n}`, externalConversationId: `conv-${d.n % 7}`, sender: { externalId: `cust-${d.n % 5}` }, message: { text: 'transport fuzz' } }
        : { deliveryId: `d_unknown_${d.n}`, requestId: 'r', leaseId: 'l', providerMessageIds: ['p'], outcome: 'failed', code: 'x' };
      const opValue = isMessages ? validValue : pickFields(validValue as Record<string, unknown>, d.path);
      let bytes: Buffer;
      switch (d.body) {
        case 'valid':
          bytes = Buffer.from(JSON.stringify(opValue));
          break;
        case 'empty':
          bytes = Buffer.alloc(0);
          break;
        case 'random':
          bytes = Buffer.from(d.random);
          break;
        case 'malformed':
          bytes = Buffer.from(d.malformed);
          break;
        case 'big':
          bytes = Buffer.from(JSON.stringify({ ...opValue, padding: 'x'.repeat(70_000) }));
          break;
        case 'invalidUtf8':
          bytes = withInvalidUtf8(Buffer.from(JSON.stringify(opValue)), d.bad);
          break;
        case 'multipart':
          bytes = buildMultipart([{ name: 'payload', data: Buffer.from(JSON.stringify(validValue)) }], MULTIPART_BOUNDARY, 'crlf');
          break;
      }
      const expectation = predictTransport(d.path, d.method, d.auth, d.contentType, d.body, bytes, d.extra);
      const headers: Record<string, string> = {};
      if (d.contentType !== null) headers['content-type'] = d.contentType;
      switch (d.extra) {
        case 'big':
          headers['x-fuzz-padding'] = 'p'.repeat(6_000);
          break;
        case 'huge':
          headers['x-fuzz-padding'] = 'p'.repeat(20_000);
          break;
        case 'many':
          for (let i = 0; i < 100; i++) headers[`x-fuzz-${i}`] = `v${i}`;
          break;
        case 'gzip':
          headers['content-encoding'] = 'gzip';
          break;
        case 'bogusEncoding':
          headers['content-encoding'] = 'bogus-encoding';
          break;
        case 'accept':
          headers.accept = 'text/html';
          headers['accept-charset'] = 'iso-8859-1';
          break;
        case 'none':
          break;
      }
      const target = expectation.accepted ? 'accepting' : 'rejecting';
      const c: Case = { property: 'transport', label: `body ${d.body}, extra headers ${d.extra}`, path: d.path, method: d.method, auth: d.auth, target, headers, body: bytes, expect: expectation };
      if (expectation.accepted) c.message = { payload: validValue as Record<string, unknown>, images: [], bytes, contentType: d.contentType ?? '' };
      await runCase(c);
    }),
    fcOptions(4, 0.2),
  );
});

/** The fields of a valid body for one delivery operation (taken from a superset). */
function pickFields(all: Record<string, unknown>, path: string): Record<string, unknown> {
  const op = path.slice('/v1/deliveries/'.length) as Operation;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(OPERATIONS[op].fields)) if (k in all) out[k] = all[k];
  return out;
}

// ------------------------------------------------------------------------------------ reconciliation

test('afterwards: the rejecting workspaces are exactly as they were; the accepting one holds exactly what its 201s created; no stray image file', async () => {
  const total = [...casesPerProperty.values()].reduce((a, b) => a + b, 0);
  console.log(
    `fuzz summary: seed=${FC_SEED} cases=${total} per property=${JSON.stringify(sortedCounts(casesPerProperty))} accepted=${acceptedMessages.length}\n` +
      `fuzz outcomes: ${JSON.stringify(sortedCounts(outcomes), null, 1)}`,
  );
  expect(total).toBe(runs(0.3) + runs(0.22) + runs(0.28) + runs(0.2));
  expect([...outcomes.keys()].some((k) => / 5\d\d/.test(k))).toBe(false);

  for (const integ of [rejecting, inactive, disabled]) {
    expect(await workspaceDocPaths(integ.workspaceId)).toEqual([`integrations/${integ.integrationId}`]);
  }

  const { workspaceId, integrationId } = accepting;
  const expected = new Set<string>([`integrations/${integrationId}`]);
  const expectedImages = new Set<string>();
  for (const m of acceptedMessages) {
    const sender = m.payload.sender as { externalId: string; kind?: string };
    expected.add(`conversations/${m.conversationId}`);
    expected.add(`conversations/${m.conversationId}/messages/${m.messageId}`);
    expected.add(`events/${eventDocIdFor(integrationId, m.payload.eventId as string)}`);
    if (sender.kind !== 'service') expected.add(`customers/${customerIdFor(integrationId, sender.externalId)}`);
    for (const img of m.images) expectedImages.add(imagePath(workspaceId, m.conversationId, m.messageId, sha256(img.bytes), img.format as string));
  }
  expect(acceptedMessages.length).toBeGreaterThan(20);
  expect(await workspaceDocPaths(workspaceId)).toEqual([...expected].sort());

  const imagesAfter = await imageFiles();
  const before = new Set(imagesBefore);
  const added = imagesAfter.filter((f) => !before.has(f));
  expect(added.sort()).toEqual([...expectedImages].sort());
});

test('no key material of the fuzzed integrations in the emulator log (keys were sent malformed, truncated, extended, upper-cased)', async () => {
  await expectNoKeyMaterialInLogs([accepting.key, rejecting.key, inactive.key, disabled.key]);
});
