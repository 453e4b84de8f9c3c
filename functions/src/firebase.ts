import { getApps, initializeApp } from 'firebase-admin/app';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';

let firestore: Firestore | undefined;

/** The Admin SDK Firestore client, created on first use (not at module load: keeps cold starts light). */
export function db(): Firestore {
  if (!firestore) {
    // firebase-functions registers an internal named app of its own, so look for the default one.
    if (!getApps().some((app) => app.name === '[DEFAULT]')) initializeApp();
    firestore = getFirestore();
    firestore.settings({ ignoreUndefinedProperties: false });
  }
  return firestore;
}
