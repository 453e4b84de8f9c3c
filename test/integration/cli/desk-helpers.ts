/**
 * Running the desk CLI (`node scripts/desk.mjs ...`, docs/cli.md) as a child process against the
 * local stack, and the accounts it signs in as (on the Auth emulator), for the CLI's integration
 * suites (desk.test.ts, desk-start.test.ts).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { authHost } from '../helpers/auth-emulator';

export const ROOT = join(__dirname, '..', '..', '..');
const DESK = join(ROOT, 'scripts', 'desk.mjs');

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a child process with the stack's environment plus `env`. */
export function desk(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
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

