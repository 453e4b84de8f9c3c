/**
 * The desk CLI (`npm run desk -- <command> ...`, docs/cli.md): the operator's and admin's side of
 * the local stack from a terminal. It is a console client: it signs in through the Auth emulator
 * with the Firebase web SDK and reads and writes Firestore under firestore.rules exactly as the
 * console does, through the console's own data modules (console/src/thread-data.ts and its
 * siblings), never with admin rights. scripts/desk.mjs bundles this module with esbuild and
 * calls `main`.
 */
import { deleteApp, initializeApp, setLogLevel as setAppLogLevel, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from 'firebase/auth';
import { connectFirestoreEmulator, getFirestore, setLogLevel as setFirestoreLogLevel } from 'firebase/firestore';
import { describeError, errorCode } from '../src/errors';
import type { Services } from '../src/firebase';
import { loadMembership, type Session } from '../src/session';
import { parseArgs, usage, type DemoRole, type Identity } from './args';
import { runCommand, DeskError, type Io } from './commands';

/** Where the local stack listens (firebase.json, or the emulator variables the test runner sets). */
export interface StackAddresses {
  projectId: string;
  /** `host:port` of the Auth emulator. */
  authHost: string;
  /** `host:port` of the Firestore emulator. */
  firestoreHost: string;
  /** The Hosting emulator's base URL: the API and the console endpoints. */
  baseUrl: string;
  /** The Functions emulator's base URL of the project and region (`http://host:port/<project>/<region>`). */
  functionsUrl: string;
}

/**
 * The stack's addresses from the environment: the emulator variables the test runner and
 * `firebase emulators:exec` set, else `defaults` (firebase.json and .firebaserc, read by the
 * launcher, scripts/desk.mjs).
 */
export function stackAddresses(env: Readonly<Record<string, string | undefined>>, defaults: StackAddresses): StackAddresses {
  return {
    projectId: env['GCLOUD_PROJECT'] ?? defaults.projectId,
    authHost: env['FIREBASE_AUTH_EMULATOR_HOST'] ?? defaults.authHost,
    firestoreHost: env['FIRESTORE_EMULATOR_HOST'] ?? defaults.firestoreHost,
    baseUrl: (env['API_BASE_URL'] ?? defaults.baseUrl).replace(/\/+$/, ''),
    functionsUrl: env['FUNCTIONS_URL'] ?? defaults.functionsUrl,
  };
}

/** The demo accounts `npm start` seeds (scripts/lib/seed.mjs `DEMO.users`). */
export type DemoAccounts = Record<DemoRole, { email: string; password: string }>;

/** Whether something answers HTTP at `host:port` (any status: the emulators answer their root differently). */
async function answers(hostPort: string): Promise<boolean> {
  try {
    await fetch(`http://${hostPort}/`, { signal: AbortSignal.timeout(3000) });
    return true;
  } catch {
    return false;
  }
}

function accountOf(identity: Identity, demo: DemoAccounts): { email: string; password: string; demo: boolean } {
  return identity.kind === 'demo' ? { ...demo[identity.role], demo: true } : { email: identity.email, password: identity.password, demo: false };
}

/** Runs of `main` in this process so far (each names its Firebase app by it). */
let runs = 0;

/**
 * Runs one command line; resolves to the exit status (0 done, 1 refused or failed, 2 usage). All
 * output goes through `io`; the Firebase app is deleted before it resolves, so the process can exit.
 */
export async function main(argv: readonly string[], stack: StackAddresses, demo: DemoAccounts, env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  const parsed = parseArgs(argv, env);
  if (!parsed.ok) {
    io.err(`desk: ${parsed.error}\n`);
    io.err(usage(parsed.command));
    return 2;
  }
  const { command, identity, workspaceId, json } = parsed.invocation;
  if (command.name === 'help') {
    io.out(usage(command.topic));
    return 0;
  }
  const fail = (message: string, code: string, status: number): number => {
    io.err(`desk: ${message}`);
    if (json) io.out(JSON.stringify({ error: { code, message } }, null, 2));
    return status;
  };

  // Before the SDK retries in silence for a minute: say plainly that the stack is not running.
  const down = (await Promise.all([stack.authHost, stack.firestoreHost].map(async (h) => ((await answers(h)) ? undefined : h)))).filter((h) => h !== undefined);
  if (down.length > 0) {
    return fail(`the local stack is not running: nothing answers at ${down.join(' and ')} (the ${down.map((h) => (h === stack.authHost ? 'Auth' : 'Firestore')).join(' and ')} emulator${down.length === 1 ? '' : 's'} of the local stack). Start it with \`npm start\` in another terminal, then run this again.`, 'stack_not_running', 1);
  }

  // The SDK's own logging would repeat, less clearly, what each command reports.
  setAppLogLevel('silent');
  setFirestoreLogLevel('silent');
  // A name of its own per run: more than one run may share a process (the CLI's integration suites call `main` in theirs).
  const app: FirebaseApp = initializeApp({ projectId: stack.projectId, apiKey: 'local-emulator-api-key', authDomain: 'localhost' }, `desk-${process.pid}-${++runs}`);
  try {
    const auth = getAuth(app);
    connectAuthEmulator(auth, `http://${stack.authHost}`, { disableWarnings: true });
    const db = getFirestore(app);
    const [firestoreHost, firestorePort] = stack.firestoreHost.split(':');
    connectFirestoreEmulator(db, firestoreHost ?? '127.0.0.1', Number(firestorePort));

    const account = accountOf(identity, demo);
    let user;
    try {
      user = (await signInWithEmailAndPassword(auth, account.email, account.password)).user;
    } catch (err) {
      const hint = account.demo ? ' The demo accounts exist once `npm start` has seeded the stack; give another account with --email and --password.' : '';
      return fail(`cannot sign in as ${account.email}: ${describeError(err, 'sign-in refused')}${hint}`, errorCode(err) ?? 'sign_in_failed', 1);
    }
    const services: Services = {
      auth,
      db,
      local: true,
      projectId: stack.projectId,
      keyPrefix: 'sdk_test_',
      defaultWorkspace: workspaceId,
      functionUrl: (name) => `${stack.functionsUrl}/${name}`,
    };
    // The console's own membership check: a user who is not a member is refused before anything else.
    const membership = await loadMembership(services, user, workspaceId);
    if (!membership.ok) return fail(membership.reason, 'not_a_member', 1);
    const session: Session = { services, user, workspaceId, role: membership.role };
    try {
      await runCommand(command, session, { baseUrl: stack.baseUrl, json }, io);
      return 0;
    } catch (err) {
      if (err instanceof DeskError) return fail(err.message, err.code, err.exitStatus);
      return fail(describeError(err, 'the workspace rules refused it'), errorCode(err) ?? 'failed', 1);
    }
  } finally {
    await deleteApp(app);
  }
}
