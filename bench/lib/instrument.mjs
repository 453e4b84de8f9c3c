/**
 * Counts what the service really does against Firestore, at the Admin SDK's wire funnel: every
 * RPC goes through `Firestore.prototype.request` (unary: commit, rollback, beginTransaction) or
 * `Firestore.prototype.requestStream` (batchGetDocuments, runQuery), so patching those two counts
 * round trips exactly, with their timing (for the critical path) and what they carried (documents
 * returned, writes committed). `runTransaction` and each attempt are counted too.
 *
 * It also records the transaction's API calls (get/getAll/set/create/update/delete, grouped into
 * the waves the code issued them in) so the same reads and writes can be replayed as a minimal
 * direct transaction: the baseline of the overhead figures.
 *
 * Only for a bench process that runs the handlers in-process, one operation at a time.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { FUNCTIONS_LIB } from './build.mjs';

const require = createRequire(import.meta.url);
/** The exact @google-cloud/firestore instance the compiled functions use (through firebase-admin). */
const adminFirestorePath = require.resolve('firebase-admin/firestore', { paths: [FUNCTIONS_LIB] });
const gcf = require(require.resolve('@google-cloud/firestore', { paths: [adminFirestorePath] }));

let active = null;
let installed = false;

function isTransactional(method, request) {
  if (method === 'rollback' || method === 'beginTransaction') return true;
  if (!request) return false;
  return Boolean(request.transaction?.length || request.newTransaction || (method === 'commit' && request.transaction));
}

function startRpc(method, request) {
  const rpc = {
    method,
    tx: isTransactional(method, request),
    start: performance.now(),
    end: null,
    found: 0,
    missing: 0,
    queryDocs: 0,
    writes: method === 'commit' || method === 'batchWrite' ? (request?.writes?.length ?? 0) : 0,
  };
  active.rpcs.push(rpc);
  return rpc;
}

const finish = (rpc) => {
  rpc.end ??= performance.now();
};

/** Patches the Admin SDK (idempotent). Counting happens only inside `measure()`. */
function install() {
  if (installed) return;
  installed = true;
  const F = gcf.Firestore.prototype;

  const request = F.request;
  F.request = function (method, req, ...rest) {
    const rpc = active ? startRpc(method, req) : null;
    const p = request.call(this, method, req, ...rest);
    if (rpc) p.then(() => finish(rpc), () => finish(rpc));
    return p;
  };

  const requestStream = F.requestStream;
  F.requestStream = function (method, bidi, req, ...rest) {
    const rpc = active && method !== 'listen' ? startRpc(method, req) : null;
    const p = requestStream.call(this, method, bidi, req, ...rest);
    if (!rpc) return p;
    return p.then(
      (stream) => {
        // Observe without consuming: `emit('data')` fires in flowing and paused (read()) modes alike.
        const emit = stream.emit;
        stream.emit = function (event, chunk, ...more) {
          if (event === 'data' && chunk) {
            if (chunk.found) rpc.found++;
            else if (chunk.missing) rpc.missing++;
            if (chunk.document) rpc.queryDocs++;
          } else if (event === 'end' || event === 'error' || event === 'close') finish(rpc);
          return emit.call(this, event, chunk, ...more);
        };
        return stream;
      },
      (err) => {
        finish(rpc);
        throw err;
      },
    );
  };

  const runTransaction = F.runTransaction;
  F.runTransaction = function (...args) {
    if (active) active.transactions++;
    return runTransaction.apply(this, args);
  };

  const T = gcf.Transaction.prototype;
  const runOnce = T.runTransactionOnce;
  T.runTransactionOnce = function (...args) {
    if (active) {
      active.attempts++;
      this.__benchPattern = { waves: [], writes: [], pending: 0, missing: new Set() };
      active.patterns.push(this.__benchPattern);
    }
    return runOnce.apply(this, args);
  };

  const recordRead = (tx, target, promise) => {
    const pattern = tx.__benchPattern;
    if (!active || !pattern) return promise;
    if (pattern.pending === 0) pattern.waves.push([]); // issued after every earlier read resolved: a new wave
    pattern.waves[pattern.waves.length - 1].push(target);
    pattern.pending++;
    promise.then(
      (result) => {
        pattern.pending--;
        // Documents that did not exist when read: the replay reads (or creates) new ones instead.
        for (const snap of Array.isArray(result) ? result : [result]) {
          if (snap instanceof gcf.DocumentSnapshot && !snap.exists) pattern.missing.add(snap.ref.path);
        }
      },
      () => pattern.pending--,
    );
    return promise;
  };
  const get = T.get;
  T.get = function (refOrQuery) {
    const kind = refOrQuery instanceof gcf.DocumentReference ? 'doc' : 'query';
    return recordRead(this, { kind, target: refOrQuery }, get.call(this, refOrQuery));
  };
  const getAll = T.getAll;
  T.getAll = function (...refs) {
    return recordRead(this, { kind: 'getAll', target: refs.filter((r) => r instanceof gcf.DocumentReference) }, getAll.apply(this, refs));
  };
  for (const op of ['set', 'create', 'update', 'delete']) {
    const original = T[op];
    T[op] = function (ref, ...args) {
      this.__benchPattern?.writes.push({ op, ref, args });
      return original.call(this, ref, ...args);
    };
  }
}

/** Sequential round trips: RPCs that overlap in time share one. */
function criticalPath(rpcs) {
  const sorted = [...rpcs].sort((a, b) => a.start - b.start);
  let waves = 0;
  let waveEnd = -Infinity;
  for (const rpc of sorted) {
    const end = rpc.end ?? rpc.start;
    if (rpc.start >= waveEnd) {
      waves++;
      waveEnd = end;
    } else waveEnd = Math.max(waveEnd, end);
  }
  return waves;
}

/** What one operation did, from its RPCs. Billed reads: a lookup costs 1 per document asked, a query 1 per document (min 1). */
function summarizeRpcs(record) {
  const count = (pred) => record.rpcs.filter(pred).length;
  const byMethod = {};
  for (const r of record.rpcs) byMethod[r.method] = (byMethod[r.method] ?? 0) + 1;
  const reads = (rs) =>
    rs.reduce((n, r) => n + (r.method === 'batchGetDocuments' ? r.found + r.missing : r.method === 'runQuery' ? Math.max(1, r.queryDocs) : 0), 0);
  const tx = record.rpcs.filter((r) => r.tx);
  const nonTx = record.rpcs.filter((r) => !r.tx);
  return {
    transactions: record.transactions,
    attempts: record.attempts,
    rpcs: record.rpcs.length,
    roundTrips: criticalPath(record.rpcs),
    byMethod,
    txRpcs: tx.length,
    nonTxRpcs: nonTx.length,
    docsRead: reads(record.rpcs),
    docsReadOutsideTx: reads(nonTx),
    docsReturned: record.rpcs.reduce((n, r) => n + r.found + r.queryDocs, 0),
    docsWritten: record.rpcs.reduce((n, r) => n + r.writes, 0),
    lookups: count((r) => r.method === 'batchGetDocuments'),
    queries: count((r) => r.method === 'runQuery'),
  };
}

/**
 * Runs `fn` with counting on; returns `{ value, ms, counts, pattern }` where `pattern` is the last
 * transaction attempt's reads (by wave) and writes, for `replay`.
 */
export async function measure(fn) {
  if (active) throw new Error('measure() calls must not overlap');
  install();
  const record = { rpcs: [], transactions: 0, attempts: 0, patterns: [] };
  active = record;
  const t0 = performance.now();
  let value;
  try {
    value = await fn();
  } finally {
    active = null;
  }
  const ms = performance.now() - t0;
  const last = record.patterns[record.patterns.length - 1];
  return { value, ms, counts: summarizeRpcs(record), pattern: last ? await finishPattern(last) : null };
}

/**
 * Which documents of the pattern the operation inserted: those missing when read, and those it
 * wrote that were created by its commit (createTime = updateTime afterwards) or are gone since
 * (e.g. an outbox entry already published). The replay inserts new documents for these.
 */
async function finishPattern(pattern) {
  const fresh = new Set(pattern.missing);
  const written = [...new Map(pattern.writes.map((w) => [w.ref.path, w.ref])).values()].filter((ref) => !fresh.has(ref.path));
  if (written.length > 0) {
    for (const snap of await written[0].firestore.getAll(...written)) {
      if (!snap.exists || snap.createTime.isEqual(snap.updateTime)) fresh.add(snap.ref.path);
    }
  }
  return { waves: pattern.waves, writes: pattern.writes, fresh };
}

/**
 * The minimal direct transaction with the same reads (same documents and queries, issued in the
 * same waves) and the same writes (same documents and data). Documents the operation inserted
 * are inserted again under new ids in the same collections (read while missing, then created),
 * so inserts stay inserts and updates stay updates.
 */
export function replay(firestore, pattern) {
  const renamed = new Map();
  const target = (ref) => {
    if (!pattern.fresh.has(ref.path)) return ref;
    if (!renamed.has(ref.path)) renamed.set(ref.path, ref.parent.doc());
    return renamed.get(ref.path);
  };
  return firestore.runTransaction(async (tx) => {
    for (const wave of pattern.waves) {
      await Promise.all(
        wave.map((read) => (read.kind === 'getAll' ? tx.getAll(...read.target.map(target)) : tx.get(read.kind === 'doc' ? target(read.target) : read.target))),
      );
    }
    for (const { op, ref, args } of pattern.writes) {
      const to = target(ref);
      // A `create` of a document that exists by now (not inserted by the operation) is a `set`.
      if (op === 'create' && to === ref) tx.set(ref, args[0]);
      else tx[op](to, ...args);
    }
  });
}

/**
 * The reads of `pattern` in the waves a delivery transaction issued them in before every
 * operation read in one wave (docs/decisions.md, "Delivery: one read wave"): the delivery alone
 * first (its record named the conversation), then the rest of the first wave (the queue, and for
 * a claim the conversation), then the delivery its terminal transition releases, which was read
 * before it was woken (here: a document the pattern updates without having read it). Same
 * documents read and written: the baseline of "ms per delivery, new / today's shape".
 */
export function oldShape(pattern) {
  const [first, ...rest] = pattern.waves;
  const refs = (read) => (read.kind === 'getAll' ? read.target : read.kind === 'doc' ? [read.target] : null);
  const firstRefs = first?.length === 1 ? refs(first[0]) : null;
  const split = firstRefs && firstRefs.length > 1 ? [[{ kind: 'doc', target: firstRefs[0] }], firstRefs.slice(1).map((target) => ({ kind: 'doc', target }))] : first ? [first] : [];
  const read = new Set(pattern.waves.flatMap((w) => w.flatMap((r) => refs(r)?.map((ref) => ref.path) ?? [])));
  const unread = [...new Map(pattern.writes.filter((w) => w.op === 'update' && !read.has(w.ref.path)).map((w) => [w.ref.path, w.ref])).values()];
  return { ...pattern, waves: [...split, ...rest, ...(unread.length > 0 ? [unread.map((target) => ({ kind: 'doc', target }))] : [])] };
}

/** A short human description of a pattern, e.g. "get(1) -> [query, get](2) -> commit 2 writes". */
export function describePattern(pattern) {
  if (!pattern) return 'no transaction';
  const wave = (w) => w.map((r) => (r.kind === 'getAll' ? `getAll(${r.target.length})` : r.kind)).join(' + ');
  const write = (w) => `${w.op}${pattern.fresh.has(w.ref.path) ? ' new' : ''} ${w.ref.parent.id}`;
  return [...pattern.waves.map(wave), `commit(${pattern.writes.map(write).join(', ')})`].join(' -> ');
}
