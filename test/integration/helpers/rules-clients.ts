/**
 * Firestore clients of a rules test (@firebase/rules-unit-testing), one per identity for the whole
 * file: every context is a Firebase app of its own with its own connection to the emulator, and
 * opening one per call cost most of each rules test's time. A cached client still asks the emulator
 * (the rules suites read with getDoc/getDocs, never from a listener's cache), so each assertion is
 * decided by the rules, as before; `env.cleanup()` closes them all.
 */
import type { RulesTestEnvironment } from '@firebase/rules-unit-testing';
import type { Firestore } from 'firebase/firestore';

export interface RulesClients {
  /** The client signed in as `uid`. */
  as(uid: string): Firestore;
  /** The client signed in as nobody. */
  anonymous(): Firestore;
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
  return {
    as: (uid) => client(`uid:${uid}`, () => env().authenticatedContext(uid).firestore() as unknown as Firestore),
    anonymous: () => client('anonymous', () => env().unauthenticatedContext().firestore() as unknown as Firestore),
  };
}
