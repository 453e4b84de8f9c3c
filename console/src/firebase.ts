/**
 * The Firebase app of the console. Served from the local stack (127.0.0.1 / localhost) it uses the
 * emulators of the project the stack runs (baked in by scripts/build-console.mjs); anywhere else
 * it reads the deployed project's web config from Hosting's reserved /__/firebase/init.json.
 */
import { initializeApp, type FirebaseOptions } from 'firebase/app';
import { connectAuthEmulator, getAuth, type Auth } from 'firebase/auth';
import { connectFirestoreEmulator, getFirestore, type Firestore } from 'firebase/firestore';
import type { KeyPrefix } from './keys';

/** Replaced at build time (esbuild `define`) from .firebaserc and firebase.json. */
declare const __LOCAL_STACK__: { projectId: string; authPort: number; firestorePort: number; functionsPort: number; demoWorkspace: string };
/** The region of the service's functions (functions/src/platform/region.ts), baked in at build time. */
declare const __FUNCTIONS_REGION__: string;

export interface Services {
  auth: Auth;
  db: Firestore;
  /** Talking to the emulators of the local stack. */
  local: boolean;
  projectId: string;
  /** `sdk_test_` on emulator/demo projects, so that a leaked test key is recognisable (as the CLI does). */
  keyPrefix: KeyPrefix;
  /** Pre-filled workspace on the sign-in form of the local stack (the one `npm start` seeds). */
  defaultWorkspace: string;
  /** The URL of an HTTP function the console calls itself (the export download): the emulator's, or the deployed one. */
  functionUrl(name: string): string;
}

export async function connect(): Promise<Services> {
  const host = location.hostname;
  const local = host === '127.0.0.1' || host === 'localhost';
  let options: FirebaseOptions;
  if (local) {
    options = { projectId: __LOCAL_STACK__.projectId, apiKey: 'local-emulator-api-key', authDomain: host };
  } else {
    const res = await fetch('/__/firebase/init.json');
    if (!res.ok) throw new Error(`Cannot load the Firebase configuration (/__/firebase/init.json: HTTP ${res.status}).`);
    options = (await res.json()) as FirebaseOptions;
  }
  const app = initializeApp(options);
  const auth = getAuth(app);
  const db = getFirestore(app);
  if (local) {
    connectAuthEmulator(auth, `http://${host}:${__LOCAL_STACK__.authPort}`, { disableWarnings: true });
    connectFirestoreEmulator(db, host, __LOCAL_STACK__.firestorePort);
  }
  const projectId = options.projectId ?? '';
  return {
    auth,
    db,
    local,
    projectId,
    keyPrefix: local || projectId.startsWith('demo-') ? 'sdk_test_' : 'sdk_live_',
    defaultWorkspace: local ? __LOCAL_STACK__.demoWorkspace : '',
    functionUrl: (name) =>
      local ? `http://${host}:${__LOCAL_STACK__.functionsPort}/${projectId}/${__FUNCTIONS_REGION__}/${name}` : `https://${__FUNCTIONS_REGION__}-${projectId}.cloudfunctions.net/${name}`,
  };
}
