import { getApps, initializeApp } from 'firebase-admin/app';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';

let firestore: Firestore | undefined;

/**
 * The Admin SDK Firestore client, created on first use (not at module load: keeps cold starts light).
 *
 * Each deployed handler is its own bundle with its own copy of this module (scripts/bundle-functions.mjs),
 * and the emulator or a test may load two of them in one process. firebase-admin is shared, so
 * every copy gets the same default app and the same client from `getFirestore()`: this must not
 * configure that client. (`settings()` may be called only once per client, and it would throw in
 * the second copy.) The defaults are what we want: `ignoreUndefinedProperties` stays false, so an
 * `undefined` field is an error rather than silently dropped.
 */
export function db(): Firestore {
  if (!firestore) {
    // firebase-functions registers an internal named app of its own, so look for the default one.
    if (!getApps().some((app) => app.name === '[DEFAULT]')) initializeApp();
    firestore = getFirestore();
  }
  return firestore;
}
