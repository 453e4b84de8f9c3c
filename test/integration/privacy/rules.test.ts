/**
 * firestore.rules for the privacy requests (docs/privacy.md): erasures, exports and the retention
 * period are written by the workspace's admins only, with exactly the documented fields. Own demo
 * project (`demo-privacy-rules`), so no trigger fires and no other suite's data is touched.
 * @own-project its Firestore project is its own: it runs from the stack's start, beside the @serial suites
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { deleteDoc, doc, getDoc, serverTimestamp, setDoc, updateDoc, type DocumentData, type Firestore } from 'firebase/firestore';
import { rulesClients } from '../helpers/rules-clients';

const PROJECT = 'demo-privacy-rules';
const WS = 'ws-a';
const OTHER_WS = 'ws-b';
const INTEGRATION = 'int-1';
let env: RulesTestEnvironment;

const { as } = rulesClients(() => env);
const admin = () => as('alice');
const operator = () => as('oscar');
const otherAdmin = () => as('bob');

const request = (uid = 'alice', overrides: DocumentData = {}): DocumentData => ({ integrationId: INTEGRATION, externalCustomerId: 'cust-1', requestedAt: serverTimestamp(), requestedBy: uid, ...overrides });

beforeAll(async () => {
  const [host, port] = (process.env.FIRESTORE_EMULATOR_HOST ?? '').split(':');
  if (!host || !port) throw new Error('FIRESTORE_EMULATOR_HOST is not set: run with `npm test`.');
  env = await initializeTestEnvironment({ projectId: PROJECT, firestore: { rules: readFileSync(join(__dirname, '..', '..', '..', 'firestore.rules'), 'utf8'), host, port: Number(port) } });
});

beforeEach(async () => {
  await env.clearFirestore();
  await env.withSecurityRulesDisabled(async (ctx) => {
    const db = ctx.firestore() as unknown as Firestore;
    await setDoc(doc(db, 'workspaces', WS, 'members', 'alice'), { role: 'admin' });
    await setDoc(doc(db, 'workspaces', WS, 'members', 'oscar'), { role: 'operator' });
    await setDoc(doc(db, 'workspaces', OTHER_WS, 'members', 'bob'), { role: 'admin' });
    for (const ws of [WS, OTHER_WS]) await setDoc(doc(db, 'workspaces', ws, 'integrations', INTEGRATION), { name: 'Shop' });
    await setDoc(doc(db, 'workspaces', WS, 'erasures', 'done-1'), { ...request(), requestedAt: new Date(), status: 'done', acknowledgedAt: 1 });
  });
});

afterAll(async () => {
  await env.cleanup();
});

describe.each(['erasures', 'exports'])('%s', (collectionName) => {
  const ref = (db: Firestore, id = 'r-1', ws = WS) => doc(db, 'workspaces', ws, collectionName, id);

  test('an admin creates a request with exactly the four fields', async () => {
    await assertSucceeds(setDoc(ref(admin()), request()));
  });

  test("operators and other workspaces' admins are refused", async () => {
    await assertFails(setDoc(ref(operator()), request('oscar')));
    await assertFails(setDoc(ref(otherAdmin()), request('bob')));
  });

  test('extra or missing fields, a foreign requester, a client time, an unknown integration are refused', async () => {
    await assertFails(setDoc(ref(admin()), request('alice', { status: 'done' })));
    const { externalCustomerId: _omitted, ...missing } = request();
    await assertFails(setDoc(ref(admin()), missing));
    await assertFails(setDoc(ref(admin()), request('oscar')));
    await assertFails(setDoc(ref(admin()), request('alice', { requestedAt: new Date(0) })));
    await assertFails(setDoc(ref(admin()), request('alice', { integrationId: 'nope' })));
    await assertFails(setDoc(ref(admin()), request('alice', { externalCustomerId: '' })));
  });

  test('nobody but the service changes or deletes a request; admins read, operators do not', async () => {
    await assertSucceeds(setDoc(ref(admin()), request()));
    await assertFails(updateDoc(ref(admin()), { status: 'done' }));
    await assertFails(deleteDoc(ref(admin())));
    await assertSucceeds(getDoc(ref(admin())));
    await assertFails(getDoc(ref(operator())));
    await assertFails(getDoc(ref(otherAdmin())));
  });
});

test("the console reads an erasure's audit and acknowledgement as an admin", async () => {
  const snap = await assertSucceeds(getDoc(doc(admin(), 'workspaces', WS, 'erasures', 'done-1')));
  expect(snap.data()).toMatchObject({ status: 'done', acknowledgedAt: 1 });
});

describe('settings/retention', () => {
  const ref = (db: Firestore, ws = WS) => doc(db, 'workspaces', ws, 'settings', 'retention');

  test('an admin sets 1..3650 days, changes and removes it; members read it', async () => {
    await assertSucceeds(setDoc(ref(admin()), { days: 1 }));
    await assertSucceeds(setDoc(ref(admin()), { days: 3650 }));
    await assertSucceeds(getDoc(ref(operator())));
    await assertSucceeds(deleteDoc(ref(admin())));
  });

  test('out of range, not an integer, extra fields, operators and other admins are refused', async () => {
    await assertFails(setDoc(ref(admin()), { days: 0 }));
    await assertFails(setDoc(ref(admin()), { days: 3651 }));
    await assertFails(setDoc(ref(admin()), { days: 1.5 }));
    await assertFails(setDoc(ref(admin()), { days: '30' }));
    await assertFails(setDoc(ref(admin()), { days: 30, note: 'x' }));
    await assertFails(setDoc(ref(operator()), { days: 30 }));
    await assertFails(setDoc(ref(otherAdmin()), { days: 30 }));
    await assertFails(setDoc(ref(otherAdmin(), OTHER_WS), { days: 30, extra: 1 }));
  });
});
