/**
 * firestore.indexes.json covers every query the service runs. The emulator never asks for an
 * index, production Firestore fails the query (FAILED_PRECONDITION), so this test is the only
 * guard. The queries come from functions/src/platform/queries.ts, which the store code uses to build
 * them (checked below by scanning the sources for hand-built queries).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CONSOLE_QUERIES, QUERIES, type QuerySpec } from '../../../functions/src/platform/queries';

const ROOT = join(__dirname, '..', '..', '..');

type Order = 'ASCENDING' | 'DESCENDING';
type Scope = 'COLLECTION' | 'COLLECTION_GROUP';
interface IndexField {
  fieldPath: string;
  order?: Order;
  arrayConfig?: string;
}
interface CompositeIndex {
  collectionGroup: string;
  queryScope: Scope;
  fields: IndexField[];
}
interface FieldOverride {
  collectionGroup: string;
  fieldPath: string;
  ttl?: boolean;
  indexes: Array<{ order?: Order; arrayConfig?: string; queryScope: Scope }>;
}
interface IndexFile {
  indexes: CompositeIndex[];
  fieldOverrides: FieldOverride[];
}

const EQUALITY_OPS = new Set(['==', 'in']);
const RANGE_OPS = new Set(['<', '<=', '>', '>=', '!=', 'not-in']);

/** What a query needs: single-field indexes (merged for equality-only queries) or one composite. */
type Requirement =
  | { kind: 'single'; fields: Array<{ field: string; order: Order }>; contains?: string }
  | { kind: 'composite'; equality: string[]; sort: Array<{ field: string; order: Order }> };

function requirementOf(spec: QuerySpec): Requirement {
  const equality: string[] = [];
  const range: string[] = [];
  const contains: string[] = [];
  for (const f of spec.where) {
    if (EQUALITY_OPS.has(f.op)) equality.push(f.field);
    else if (RANGE_OPS.has(f.op)) range.push(f.field);
    else if (f.op === 'array-contains') contains.push(f.field);
    // array-contains-any, or array-contains with other filters, needs more modelling: extend this test first.
    else throw new Error(`operator ${f.op} is not modelled by this test`);
  }
  if (contains.length > 0) {
    if (contains.length > 1 || equality.length > 0 || range.length > 0 || spec.orderBy.length > 0) throw new Error('array-contains is modelled alone only');
    return { kind: 'single', fields: [], contains: contains[0] as string };
  }
  // Firestore sorts by the explicit orderBy, then implicitly by each inequality field (ascending).
  // ... and last by `__name__`, which every index has: an explicit `__name__` needs nothing more.
  const sort: Array<{ field: string; order: Order }> = spec.orderBy
    .filter((o) => !equality.includes(o.field) && o.field !== '__name__')
    .map((o) => ({ field: o.field, order: o.direction === 'asc' ? 'ASCENDING' : 'DESCENDING' }));
  for (const field of range) if (!sort.some((s) => s.field === field)) sort.push({ field, order: 'ASCENDING' });

  if (sort.length === 0) return { kind: 'single', fields: equality.map((field) => ({ field, order: 'ASCENDING' })) };
  if (equality.length === 0 && sort.length === 1) return { kind: 'single', fields: sort };
  return { kind: 'composite', equality, sort };
}

/** A CONTAINS index of an array field: automatic for collection scope, an override for collection groups. */
function hasContainsIndex(file: IndexFile, collection: string, scope: Scope, field: string): boolean {
  const override = file.fieldOverrides.find((o) => o.collectionGroup === collection && o.fieldPath === field);
  if (override) return override.indexes.some((i) => i.arrayConfig === 'CONTAINS' && i.queryScope === scope);
  return scope === 'COLLECTION';
}

function hasSingleField(file: IndexFile, collection: string, scope: Scope, field: string, order: Order): boolean {
  const override = file.fieldOverrides.find((o) => o.collectionGroup === collection && o.fieldPath === field);
  // An override replaces the automatic indexes of that field; without one, Firestore indexes every
  // field ascending and descending, for collection scope only.
  if (override) return override.indexes.some((i) => i.order === order && i.queryScope === scope);
  return scope === 'COLLECTION';
}

function matchesComposite(ix: CompositeIndex, collection: string, scope: Scope, req: Extract<Requirement, { kind: 'composite' }>): boolean {
  if (ix.collectionGroup !== collection || ix.queryScope !== scope) return false;
  const fields = ix.fields.filter((f) => f.fieldPath !== '__name__');
  if (fields.length !== req.equality.length + req.sort.length) return false;
  const head = fields.slice(0, req.equality.length);
  const tail = fields.slice(req.equality.length);
  return (
    head.every((f) => f.order !== undefined && req.equality.includes(f.fieldPath)) &&
    new Set(head.map((f) => f.fieldPath)).size === req.equality.length &&
    tail.every((f, i) => f.fieldPath === req.sort[i]?.field && f.order === req.sort[i]?.order)
  );
}

/** Problems with `file` for `spec`; empty when the declared indexes serve the query. */
function missingIndexes(file: IndexFile, spec: QuerySpec): string[] {
  const req = requirementOf(spec);
  if (req.kind === 'single') {
    if (req.contains !== undefined) return hasContainsIndex(file, spec.collection, spec.scope, req.contains) ? [] : [`array-contains index ${spec.collection}.${req.contains} (${spec.scope})`];
    return req.fields
      .filter((f) => !hasSingleField(file, spec.collection, spec.scope, f.field, f.order))
      .map((f) => `single-field index ${spec.collection}.${f.field} ${f.order} (${spec.scope})`);
  }
  if (file.indexes.some((ix) => matchesComposite(ix, spec.collection, spec.scope, req))) return [];
  const fields = [...req.equality.map((f) => `${f} ==`), ...req.sort.map((s) => `${s.field} ${s.order}`)].join(', ');
  return [`composite index on ${spec.collection} (${spec.scope}): ${fields}`];
}

const indexFile = JSON.parse(readFileSync(join(ROOT, 'firestore.indexes.json'), 'utf8')) as IndexFile;
// The service's queries and the console contract's (both must be served by declared indexes).
const specs = [...Object.entries(QUERIES), ...Object.entries(CONSOLE_QUERIES)] as Array<[string, QuerySpec]>;

describe('firestore.indexes.json', () => {
  test.each(specs)('query %s is served by a declared index', (_name, spec) => {
    expect(missingIndexes(indexFile, spec)).toEqual([]);
  });

  test('every composite index serves at least one query (no stale indexes)', () => {
    const unused = indexFile.indexes.filter(
      (ix) => !specs.some(([, spec]) => {
        const req = requirementOf(spec);
        return req.kind === 'composite' && matchesComposite(ix, spec.collection, spec.scope, req);
      }),
    );
    expect(unused).toEqual([]);
  });

  test('the TTL policy on events.expireAt is kept (idempotency records expire after retention)', () => {
    expect(indexFile.fieldOverrides).toContainEqual({ collectionGroup: 'events', fieldPath: 'expireAt', ttl: true, indexes: [] });
  });

  test('the ordering map deliveryQueues.pending is not indexed (never queried; one index entry per key otherwise)', () => {
    expect(indexFile.fieldOverrides).toContainEqual({ collectionGroup: 'deliveryQueues', fieldPath: 'pending', indexes: [] });
  });

  test('the checker is not vacuous: without the declared indexes the queries are reported', () => {
    const empty: IndexFile = { indexes: [], fieldOverrides: [] };
    expect(missingIndexes(empty, QUERIES.unfinishedOfConversation)).toEqual(['composite index on deliveries (COLLECTION): conversationId ==, status ==, seq ASCENDING']);
    expect(missingIndexes(empty, QUERIES.overdueOutboxOfShard)).toHaveLength(1);
    expect(missingIndexes(empty, QUERIES.claimableOfIntegration)).toEqual(['composite index on deliveryChecks (COLLECTION): workspaceId ==, integrationId ==, listShard ==, pendingAt ASCENDING']);
    expect(missingIndexes(empty, QUERIES.outboundRepliesSince)).toHaveLength(1);
    // Collection-group single-field queries need an explicit override; collection scope is automatic.
    expect(missingIndexes(empty, QUERIES.integrationByKeyHash)).toEqual(['single-field index integrations.keyHash ASCENDING (COLLECTION_GROUP)']);
    expect(missingIndexes(empty, QUERIES.messagesNamingImage)).toEqual(['array-contains index messages.images (COLLECTION_GROUP)']);
    const singleRange: QuerySpec = { collection: 'messages', scope: 'COLLECTION', where: [{ field: 'createdAt', op: '<=' }], orderBy: [] };
    expect(missingIndexes(empty, singleRange)).toEqual([]);
    // ... unless the field is exempted from indexing (docs/capacity.md exempts unqueried time fields).
    const exempted: IndexFile = { indexes: [], fieldOverrides: [{ collectionGroup: 'messages', fieldPath: 'createdAt', indexes: [] }] };
    expect(missingIndexes(exempted, singleRange)).toEqual(['single-field index messages.createdAt ASCENDING (COLLECTION)']);
    // A descending sort is not served by an ascending index.
    const desc: QuerySpec = { ...QUERIES.unfinishedOfConversation, where: QUERIES.unfinishedOfConversation.where.slice(0, 2), orderBy: [{ field: 'seq', direction: 'desc' }] };
    expect(missingIndexes(indexFile, desc)).toHaveLength(1);
  });
});

describe('queries are built only from functions/src/platform/queries.ts', () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  const files = sources(join(ROOT, 'functions', 'src')).filter((f) => !f.endsWith(join('platform', 'queries.ts')));

  test.each(files.map((f) => [relative(ROOT, f), f]))('%s builds no query by hand', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const handBuilt = text.split('\n').filter((line) => /\.(where|orderBy|collectionGroup|findNearest)\(/.test(line));
    expect(handBuilt).toEqual([]);
  });
});
