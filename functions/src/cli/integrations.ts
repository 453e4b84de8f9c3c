/**
 * Admin CLI for integrations, for operators without the console:
 *   npm run integrations -- create --workspace W --name N [--topic projects/P/topics/T] [--id I] [--rate N]
 *   npm run integrations -- rotate --workspace W --integration I [--overlap-hours 24]
 *   npm run integrations -- deactivate|activate --workspace W --integration I
 *   npm run integrations -- erase --workspace W --integration I --customer C [--timeout-seconds 300]
 *   add --project P to target a real project (Application Default Credentials); under the
 *   emulators FIRESTORE_EMULATOR_HOST is honoured. A new key is printed exactly once, to stdout.
 */
import { parseArgs } from 'node:util';
import { initializeApp } from 'firebase-admin/app';
import { FieldValue, getFirestore, type Firestore } from 'firebase-admin/firestore';
import { randomUUID } from 'node:crypto';
import { createIntegration, rotateKey, setActive } from '../integrations/admin';
import type { KeyPrefix } from '../integrations/keys';
import { errorMessage } from '../platform/failures';

const USAGE = `usage: integrations <create|rotate|deactivate|activate> --workspace W [--integration I] [options]
  create      --name N [--topic projects/P/topics/T] [--id I] [--rate PER_MINUTE]
  rotate      --integration I [--overlap-hours H]   (default 24; 0 revokes the old key at once)
  deactivate  --integration I
  activate    --integration I
  erase       --integration I --customer EXTERNAL_ID [--timeout-seconds S]   (waits for the audit, prints it)
  common      [--project P] [--json]`;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      integration: { type: 'string' },
      id: { type: 'string' },
      name: { type: 'string' },
      topic: { type: 'string' },
      rate: { type: 'string' },
      project: { type: 'string' },
      'overlap-hours': { type: 'string' },
      customer: { type: 'string' },
      'timeout-seconds': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  const workspaceId = values.workspace;
  if (!workspaceId) throw new Error('--workspace is required');
  const projectId = values.project ?? process.env.GCLOUD_PROJECT ?? process.env.GOOGLE_CLOUD_PROJECT;
  initializeApp(projectId ? { projectId } : {});
  const db = getFirestore();
  const keyPrefix: KeyPrefix = (projectId ?? '').startsWith('demo-') || process.env.FIRESTORE_EMULATOR_HOST ? 'sdk_test_' : 'sdk_live_';
  const print = (result: object, human: string) => console.log(values.json ? JSON.stringify(result) : human);

  switch (command) {
    case 'create': {
      if (!values.name) throw new Error('--name is required');
      const rate = values.rate === undefined ? undefined : Number(values.rate);
      if (rate !== undefined && (!Number.isInteger(rate) || rate < 1)) throw new Error('--rate must be a positive integer');
      const issued = await createIntegration(db, {
        workspaceId,
        name: values.name,
        createdBy: 'cli',
        keyPrefix,
        ...(values.id ? { integrationId: values.id } : {}),
        ...(values.topic ? { topic: values.topic } : {}),
        ...(rate !== undefined ? { messagesPerMinute: rate } : {}),
      });
      print(issued, `integration ${issued.workspaceId}/${issued.integrationId} created\nkey (shown once, store it now): ${issued.key}`);
      return;
    }
    case 'rotate': {
      if (!values.integration) throw new Error('--integration is required');
      const hours = values['overlap-hours'] === undefined ? 24 : Number(values['overlap-hours']);
      if (!Number.isFinite(hours) || hours < 0) throw new Error('--overlap-hours must be >= 0');
      const issued = await rotateKey(db, workspaceId, values.integration, keyPrefix, hours * 3600 * 1000);
      const until = issued.previousKeyExpiresAt ? `the previous key works until ${new Date(issued.previousKeyExpiresAt).toISOString()}` : 'the previous key is revoked now';
      print(issued, `key rotated for ${workspaceId}/${values.integration}; ${until}\nnew key (shown once, store it now): ${issued.key}`);
      return;
    }
    case 'deactivate':
    case 'activate': {
      if (!values.integration) throw new Error('--integration is required');
      await setActive(db, workspaceId, values.integration, command === 'activate');
      print({ workspaceId, integrationId: values.integration, active: command === 'activate' }, `integration ${workspaceId}/${values.integration} ${command}d (takes effect within 30 s)`);
      return;
    }
    case 'erase': {
      if (!values.integration) throw new Error('--integration is required');
      if (!values.customer) throw new Error('--customer is required');
      const timeoutMs = Number(values['timeout-seconds'] ?? '300') * 1000;
      const audit = await erase(db, workspaceId, values.integration, values.customer, timeoutMs);
      const counts = audit.counts as Record<string, number> | undefined;
      print(audit, `erasure ${String(audit.erasureId)} of ${values.customer} in ${workspaceId}/${values.integration}: ${String(audit.status)}\n${JSON.stringify(counts ?? {})}`);
      if (audit.status !== 'done') process.exitCode = 2;
      return;
    }
    default:
      throw new Error(`unknown command '${command}'\n${USAGE}`);
  }
}

/**
 * Requests an erasure exactly as the console does (docs/privacy.md#erasure: the four fields) and waits
 * for the service's audit: `done` with its counts, or what it reached when the time is up.
 */
async function erase(db: Firestore, workspaceId: string, integrationId: string, externalCustomerId: string, timeoutMs: number): Promise<Record<string, unknown>> {
  if (!(await db.doc(`workspaces/${workspaceId}/integrations/${integrationId}`).get()).exists) throw new Error(`no integration ${workspaceId}/${integrationId}`);
  const erasureId = `cli-${randomUUID()}`;
  const ref = db.doc(`workspaces/${workspaceId}/erasures/${erasureId}`);
  await ref.create({ integrationId, externalCustomerId, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'cli' });
  const until = Date.now() + timeoutMs;
  for (;;) {
    const data = (await ref.get()).data() ?? {};
    if (data.status === 'done' || Date.now() > until) {
      // The audit only: status, counts, times (never content).
      return { erasureId, status: data.status ?? 'requested', counts: data.counts ?? null, startedAt: data.startedAt ?? null, finishedAt: data.finishedAt ?? null };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`integrations: ${errorMessage(err)}`);
  process.exitCode = 1;
});
