/**
 * Scale by design (docs/capacity.md): the emulator cannot show Firestore's hot spots, so the rules
 * that avoid them are checked here, on firestore.indexes.json and the query catalogues, against
 * the capacity catalogue (functions/src/platform/capacity.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COLLECTIONS, PARTITION_FIELDS, type CollectionCapacity } from '../../../functions/src/platform/capacity';
import { paths } from '../../../functions/src/platform/paths';
import { CONSOLE_QUERIES, QUERIES, type QuerySpec } from '../../../functions/src/platform/queries';

interface IndexFile {
  indexes: Array<{ collectionGroup: string; queryScope: string; fields: Array<{ fieldPath: string; order?: string }> }>;
  fieldOverrides: Array<{ collectionGroup: string; fieldPath: string; indexes: unknown[] }>;
}

const indexFile = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'firestore.indexes.json'), 'utf8')) as IndexFile;
const catalogue: Record<string, CollectionCapacity> = COLLECTIONS;
const specs = [...Object.entries(QUERIES), ...Object.entries(CONSOLE_QUERIES)] as Array<[string, QuerySpec]>;

/** A field name that looks monotonic: a time (`...At`) or a sequence number. */
const looksMonotonic = (field: string): boolean => /At$/.test(field.split('.').at(-1) ?? '') || field === 'seq';

/** Index problems: an ordered monotonic field without a partition field before it. */
function unpartitioned(file: IndexFile, collections: Record<string, CollectionCapacity>): string[] {
  const problems: string[] = [];
  for (const ix of file.indexes) {
    const c = collections[ix.collectionGroup];
    if (c === undefined) {
      problems.push(`${ix.collectionGroup}: not in the capacity catalogue`);
      continue;
    }
    ix.fields.forEach((f, i) => {
      if (!(c.monotonic as readonly string[]).includes(f.fieldPath)) return;
      const before = ix.fields.slice(0, i).map((p) => p.fieldPath);
      if (PARTITION_FIELDS[c.partition].length > 0 && !before.some((p) => PARTITION_FIELDS[c.partition].includes(p))) {
        problems.push(`${ix.collectionGroup} (${ix.fields.map((x) => x.fieldPath).join(', ')}): ${f.fieldPath} without a partition field before it`);
      }
    });
  }
  return problems;
}

/** True when `field` (or a map it is in) has an override with no indexes. */
function exempt(file: IndexFile, collection: string, field: string): boolean {
  const segments = field.split('.');
  return segments.some((_, i) => file.fieldOverrides.some((o) => o.collectionGroup === collection && o.fieldPath === segments.slice(0, i + 1).join('.') && o.indexes.length === 0));
}

/** Monotonic fields that keep an automatic single-field index although no single-field query needs it. */
function indexedButUnqueried(file: IndexFile, collections: Record<string, CollectionCapacity>, queries: Array<[string, QuerySpec]>): string[] {
  const problems: string[] = [];
  for (const [name, c] of Object.entries(collections)) {
    for (const field of c.monotonic) {
      // Per-conversation collections may keep a single-field index a query uses (a person's rate).
      const usedAlone = queries.some(([, q]) => q.collection === name && q.where.length === 0 && q.orderBy.some((o) => o.field === field));
      if (c.partition === 'conversation' && usedAlone) continue;
      if (!exempt(file, name, field)) problems.push(`${name}.${field}`);
    }
  }
  return problems;
}

describe('capacity rules (docs/capacity.md)', () => {
  test('every collection the service or the console writes is in the catalogue', () => {
    const fromPaths = new Set<string>();
    const sample = new Proxy({}, { get: () => 'x' }) as Record<string, string>;
    for (const build of Object.values(paths)) {
      const path = (build as (...args: string[]) => string)(sample.a as string, sample.b as string, sample.c as string);
      path.split('/').forEach((segment, i) => {
        if (i % 2 === 0) fromPaths.add(segment);
      });
    }
    expect([...fromPaths].filter((c) => !(c in catalogue))).toEqual([]);
    // And every collection of the indexes and queries.
    const mentioned = [...indexFile.indexes.map((i) => i.collectionGroup), ...indexFile.fieldOverrides.map((o) => o.collectionGroup), ...specs.map(([, q]) => q.collection)];
    expect(mentioned.filter((c) => !(c in catalogue))).toEqual([]);
  });

  test('no index orders on a monotonic field without a shard or finer partition before it', () => {
    expect(unpartitioned(indexFile, catalogue)).toEqual([]);
  });

  test('every monotonic field no query needs alone is exempt from single-field indexing', () => {
    expect(indexedButUnqueried(indexFile, catalogue, specs)).toEqual([]);
  });

  test('every field of an index or query that looks like a time or sequence is in the catalogue', () => {
    const fields = [
      ...indexFile.indexes.flatMap((ix) => ix.fields.map((f) => [ix.collectionGroup, f.fieldPath] as const)),
      ...specs.flatMap(([, q]) => [...q.where.map((w) => w.field), ...q.orderBy.map((o) => o.field)].map((f) => [q.collection, f] as const)),
    ];
    const missing = fields.filter(([c, f]) => looksMonotonic(f) && f !== 'seq' && !(catalogue[c]?.monotonic as readonly string[] | undefined)?.includes(f));
    expect(missing).toEqual([]);
  });

  test('the checks are not vacuous', () => {
    const hot: IndexFile = {
      indexes: [{ collectionGroup: 'outbox', queryScope: 'COLLECTION', fields: [{ fieldPath: 'workspaceId' }, { fieldPath: 'dueAt' }] }],
      fieldOverrides: [],
    };
    expect(unpartitioned(hot, catalogue)).toEqual(['outbox (workspaceId, dueAt): dueAt without a partition field before it']);
    expect(unpartitioned({ ...hot, indexes: [{ collectionGroup: 'nowhere', queryScope: 'COLLECTION', fields: [] }] }, catalogue)).toEqual(['nowhere: not in the capacity catalogue']);
    expect(indexedButUnqueried({ indexes: [], fieldOverrides: [] }, { events: catalogue.events as CollectionCapacity }, [])).toEqual(['events.createdAt', 'events.expireAt']);
    // A map's override covers its subfields.
    expect(exempt({ indexes: [], fieldOverrides: [{ collectionGroup: 'deliveries', fieldPath: 'lease', indexes: [] }] }, 'deliveries', 'lease.expiresAt')).toBe(true);
    expect(exempt({ indexes: [], fieldOverrides: [{ collectionGroup: 'deliveries', fieldPath: 'lease', indexes: [{}] }] }, 'deliveries', 'lease.expiresAt')).toBe(false);
  });
});
