import { getApps, initializeApp } from 'firebase-admin/app';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';

let firestore: Firestore | undefined;

/** The Admin SDK Firestore client, created on first use (not at module load: keeps cold starts light). */
export function db(): Firestore {
  if (!firestore) {
    if (getApps().length === 0) initializeApp();
    firestore = getFirestore();
    firestore.settings({ ignoreUndefinedProperties: false });
  }
  return firestore;
}
