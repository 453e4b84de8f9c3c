/**
 * Firestore clients of a rules test (@firebase/rules-unit-testing), one per identity for the whole
 * file: every context is a Firebase app of its own with its own connection to the emulator, and
 * opening one per call cost most of each rules test's time. A cached client still asks the emulator
 * (the rules suites read with getDoc/getDocs, never from a listener's cache), so each assertion is
 * decided by the rules, as before; `env.cleanup()` closes them all.
 */
import { randomUUID } from 'node:crypto';
import type { RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectFirestoreEmulator, getFirestore, type Firestore } from 'firebase/firestore';

export interface RulesClients {
  /** The client signed in as `uid`. */
  as(uid: string): Firestore;
  /** The client signed in as nobody. */
  anonymous(): Firestore;
  /**
   * The client the rules do not apply to, for a test's setup: the emulator's `owner` token, the
   * one `withSecurityRulesDisabled` signs its context with. That call opens (and deletes) a
   * Firebase app each time, and a suite that seeds before each of its forty tests spent about 5
   * of its 12 CPU-s on it (test/integration/console/rules.test.ts, measured alone); this client is
   * opened once.
   */
  owner(): Firestore;
  /** Deletes the owner client's app (the others close with `env.cleanup()`). */
  close(): Promise<void>;
}

/** `env()` is read on first use (the environment is created in `beforeAll`). */
export function rulesClients(env: () => RulesTestEnvironment): RulesClients {
  const clients = new Map<string, Firestore>();
  const client = (key: string, open: () => Firestore): Firestore => {
    let db = clients.get(key);
    if (db === undefined) {
      db = open();
      clients.set(key, db);
    }
    return db;
  };
  let ownerApp: FirebaseApp | undefined;
  return {
    as: (uid) => client(`uid:${uid}`, () => env().authenticatedContext(uid).firestore() as unknown as Firestore),
    anonymous: () => client('anonymous', () => env().unauthenticatedContext().firestore() as unknown as Firestore),
    owner: () =>
      client('owner', () => {
        const { projectId, emulators } = env();
        if (emulators.firestore === undefined) throw new Error('the rules test environment has no Firestore emulator');
        ownerApp = initializeApp({ projectId }, `rules-owner-${randomUUID()}`);
        const db = getFirestore(ownerApp);
        connectFirestoreEmulator(db, emulators.firestore.host, emulators.firestore.port, { mockUserToken: 'owner' });
        return db;
      }),
    close: async () => {
      if (ownerApp !== undefined) await deleteApp(ownerApp);
      ownerApp = undefined;
      clients.delete('owner');
    },
  };
}
