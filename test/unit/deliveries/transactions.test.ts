/**
 * What docs/architecture.md says about the delivery code, checked on the sources: every delivery
 * transaction is opened in deliveries/transition.ts, only the store's plan writer writes a delivery record,
 * and a reply's `delivery` mirror has one writer (deliveries/store.ts `writeReplyMirror`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const DELIVERIES = join(__dirname, '../../../functions/src/deliveries');
const sources = readdirSync(DELIVERIES)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => ({ name, text: readFileSync(join(DELIVERIES, name), 'utf8') }));

/** The files whose code (comments aside) matches `pattern`. */
function filesMatching(pattern: RegExp): string[] {
  const once = new RegExp(pattern.source, pattern.flags.replace('g', ''));
  return sources.filter(({ text }) => once.test(text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''))).map(({ name }) => name);
}

test('only transition.ts opens a delivery transaction', () => {
  expect(filesMatching(/\.runTransaction\(/)).toEqual(['transition.ts']);
});

test("a delivery record is written only by the store's writer of a plan (applyPlan / writeRecord, called in transition.ts only)", () => {
  expect(filesMatching(/\bwriteRecord\(/).sort()).toEqual(['store.ts', 'transition.ts']);
  expect(filesMatching(/\bapplyPlan\(/).sort()).toEqual(['store.ts', 'transition.ts']);
  const transition = sources.find(({ name }) => name === 'transition.ts')?.text ?? '';
  // One transition's plan, one creation's append.
  expect(transition.match(/\bapplyPlan\(/g)).toHaveLength(1);
  expect(transition.match(/\bwriteRecord\(/g)).toHaveLength(1);
  // The record collection is set or updated only in store.ts's writer.
  const store = sources.find(({ name }) => name === 'store.ts')?.text ?? '';
  expect(store.match(/tx\.(set|update)\(ref, /g)).toHaveLength(2);
});

test('one writer of the reply mirror: only store.ts writes a `delivery` field, in writeReplyMirror', () => {
  const writesDeliveryField = /\.(set|update|create)\([^;]*\bdelivery\b/g;
  expect(filesMatching(writesDeliveryField)).toEqual(['store.ts']);
  const store = sources.find(({ name }) => name === 'store.ts')?.text ?? '';
  expect(store.match(writesDeliveryField)).toHaveLength(1);
  expect(store).toMatch(/export function writeReplyMirror\([^)]*\): void \{\n\s*tx\.set\(replyRef\(db, reply\), \{ delivery: mirror \}/);
});

test("one writer of a reply's edit/unsend history: only lifecycle-history.ts writes `edits`, `unsends` or `unsent`", () => {
  // The fields' names as written (keys or strings), and the `unsent` marker: nowhere else.
  expect(filesMatching(/['"](edits|unsends|unsent)['"]|\bunsent = \{|\bunsent: \{/).sort()).toEqual(['lifecycle-history.ts']);
  const history = sources.find(({ name }) => name === 'lifecycle-history.ts')?.text ?? '';
  expect(history.match(/tx\.(set|update|create)\(/g)).toHaveLength(1);
});

test('creation appends through one function: only transition.ts asks for the append plan, sequencing, resend and edits/unsends call appendDelivery', () => {
  // `planAppend` (rules/plan.ts, over `decideAppend`); its only other caller is the SDK's in-memory store (sdk/src/testing/deliveries.ts).
  expect(filesMatching(/\bdecideAppend\(/)).toEqual([]);
  expect(filesMatching(/\bplanAppend\(/)).toEqual(['transition.ts']);
  expect(filesMatching(/\bappendDelivery\(/).sort()).toEqual(['lifecycle.ts', 'resend.ts', 'sequencing.ts', 'starts.ts', 'transition.ts']);
  expect(filesMatching(/\bwriteQueueAfterAppend\(/).sort()).toEqual(['store.ts', 'transition.ts']);
});
