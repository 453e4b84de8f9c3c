/**
 * Running the desk CLI (docs/cli.md) against the local stack, for the CLI's integration suites
 * (desk.test.ts, desk-start.test.ts), and the accounts it signs in as (on the Auth emulator).
 *
 * `desk` runs a command line in this process, through the CLI's own `main` (console/cli/desk.ts)
 * with the stack's addresses from the environment as the launcher reads them (`stackAddresses`):
 * the same command code, rules and output, without a process, an esbuild bundle and a load of the
 * Firebase SDK per command (about 0.5 CPU-s each, dozens per suite). Except a command that waits
 * for the service's answer through a snapshot listener (`WAITING_COMMANDS`, unless `--no-wait`):
 * that one runs as a process, as a real run of the CLI does, with a Firebase client of its own.
 * (A `resend` whose listener got no update for its whole 60 s was first seen in-process; a later
 * fresh-clone run showed the same as a process, so the CLI's waits now open their listener again
 * every 10 s: console/cli/commands.ts `RELISTEN_MS`.)
 * `deskProcess` runs the launcher itself (`node scripts/desk.mjs ...`, what `npm run desk` runs),
 * also for what only a process shows (the bundle, the exit status, the output streams).
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { authHost } from '../helpers/auth-emulator';
import { apiBaseUrl, functionsUrl } from '../helpers/stack';

export const ROOT = join(__dirname, '..', '..', '..');
const DESK = join(ROOT, 'scripts', 'desk.mjs');

/**
 * What the suites use of console/cli/desk.ts. Declared here, and the module loaded by a path the
 * type checker does not follow: the CLI imports the console's browser modules (`window`,
 * `location`), which type-check only in the console's programs (console/cli/tsconfig.json), not in
 * the root one of the tests. A change to these signatures fails every run of the suites.
 */
interface StackAddresses {
  projectId: string;
  authHost: string;
  firestoreHost: string;
  baseUrl: string;
  functionsUrl: string;
}
type DemoAccounts = Record<'admin' | 'operator', { email: string; password: string }>;
interface DeskCli {
  main(argv: readonly string[], stack: StackAddresses, demo: DemoAccounts, env: Readonly<Record<string, string | undefined>>, io: { out(text: string): void; err(text: string): void }): Promise<number>;
  stackAddresses(env: Readonly<Record<string, string | undefined>>, defaults: StackAddresses): StackAddresses;
}
const DESK_MODULE = join(ROOT, 'console', 'cli', 'desk.ts');
let cli: Promise<DeskCli> | undefined;

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

let demoUsersRead: Array<{ email: string; password: string; role: string }> | undefined;
/** The demo accounts the stack seeds (scripts/lib/seed.mjs `DEMO.users`), read from the script itself (once per file). */
export function demoUsers(): Array<{ email: string; password: string; role: string }> {
  if (demoUsersRead === undefined) {
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', "import { DEMO } from './scripts/lib/seed.mjs'; console.log(JSON.stringify(DEMO.users));"], { cwd: ROOT, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`cannot read the demo accounts: ${result.stderr}`);
    demoUsersRead = JSON.parse(result.stdout) as Array<{ email: string; password: string; role: string }>;
  }
  return demoUsersRead;
}

/** The demo accounts by role, as the launcher hands them to `main`. */
const demo = (): DemoAccounts => Object.fromEntries(demoUsers().map((u) => [u.role, { email: u.email, password: u.password }])) as DemoAccounts;

/** The commands that wait for the service's answer unless given `--no-wait` (console/cli/args.ts, `--wait-seconds`). */
const WAITING_COMMANDS = new Set(['start', 'reply', 'cancel', 'resend', 'edit', 'unsend', 'erase']);

/**
 * Runs one command line of the CLI with the stack's environment plus `env`: in this process, or as
 * a process when the command waits for the service (see above).
 */
export async function desk(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  if (WAITING_COMMANDS.has(args[0] ?? '') && !args.includes('--no-wait')) return deskProcess(args, env);
  const merged = { ...process.env, ...env };
  const firestoreHost = merged['FIRESTORE_EMULATOR_HOST'];
  if (firestoreHost === undefined) throw new Error('FIRESTORE_EMULATOR_HOST is not set: run the suite through npm test');
  cli ??= import(DESK_MODULE) as Promise<DeskCli>;
  const { main, stackAddresses } = await cli;
  const stack = stackAddresses(merged, { projectId: merged['GCLOUD_PROJECT'] ?? '', authHost: authHost(), firestoreHost, baseUrl: apiBaseUrl(), functionsUrl: functionsUrl() });
  let stdout = '';
  let stderr = '';
  // The launcher's streams: each call writes its text and a newline.
  const status = await main(args, stack, demo(), merged, { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`) });
  return { status, stdout, stderr };
}

/** Runs the CLI's launcher as a child process (`node scripts/desk.mjs ...`) with the stack's environment plus `env`. */
export function deskProcess(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DESK, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Asserts the exit status, with the output in the failure message. */
export function expectExit(run: Run, status: number): void {
  // The output goes into the failure message: a matcher such as expect.any(String) would print only its own name.
  if (run.status !== status) throw new Error(`expected exit ${status}, got ${String(run.status)}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
}

export function json<T>(run: Run): T {
  expectExit(run, 0);
  return JSON.parse(run.stdout) as T;
}

/** An account on the Auth emulator (created, or signed in when it exists, as scripts/lib/seed.mjs does); its uid. */
export async function account(email: string, password: string): Promise<string> {
  const call = async (op: string) => {
    const res = await fetch(`http://${authHost()}/identitytoolkit.googleapis.com/v1/accounts:${op}?key=fake-api-key`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password, returnSecureToken: true }),
    });
    return { ok: res.ok, body: (await res.json()) as { localId?: string; error?: { message?: string } } };
  };
  let result = await call('signUp');
  if (!result.ok && result.body.error?.message === 'EMAIL_EXISTS') result = await call('signInWithPassword');
  if (!result.ok || result.body.localId === undefined) throw new Error(`cannot provision ${email}: ${JSON.stringify(result.body)}`);
  return result.body.localId;
}

