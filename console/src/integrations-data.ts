/**
 * Firestore access of the Integrations view (integrations.ts): the live list, each integration's
 * health roll-up (`integrationHealth/{integrationId}`), the workspace's operations topic, and the
 * writes an admin makes. No DOM: what is read comes back as plain shapes with epoch milliseconds.
 * Writes are exactly what firestore.rules accept (docs/data-model.md, "Integrations").
 */
import { collection, deleteField, doc, onSnapshot, serverTimestamp, setDoc, updateDoc, type DocumentData, type Unsubscribe } from 'firebase/firestore';
import { readCapability, type AttachmentCapability } from './attachments';
import { timestampMillis, type HealthProblem, type HealthStatus } from './format';
import { readLifecycle, type LifecycleCapability } from './lifecycle';
import { readChannel, type IntegrationChannel } from './integration-channel-format';
import { issueKey, type IssuedKey } from './keys';
import type { Session } from './session';
import { readStartKinds, type AddressKind } from './start-format';

/** One integration as the view shows it. */
export interface Integration {
  id: string;
  /** The integration's name, or its id when it has none. */
  name: string;
  active: boolean;
  /** The current key's display prefix (`''` when none is stored). */
  keyPrefix: string;
  /** A CLI rotation's previous key, still accepted until `expiresAt` (epoch ms). */
  previousKey: { prefix?: string; expiresAt?: number } | undefined;
  /** Set by the service when it revoked the key (a leak report). */
  keyRevoked: { reason?: string } | undefined;
  /** `sourceEnabled: false`: incoming messages are refused. */
  sourcePaused: boolean;
  replies: { enabled?: boolean; topic?: string | null; topicStatus?: string; topicMessage?: string };
  /** `replies.attachments`, when replies may carry files. */
  attachments: AttachmentCapability | undefined;
  /** `replies.lifecycle`, when sent replies may be edited or unsent on the channel. */
  lifecycle: LifecycleCapability | undefined;
  /** `channel`: what the connector declared of its channel (PUT /v1/channel), read-only here. */
  channel: IntegrationChannel | undefined;
  /** `conversations.start.addressKinds`: members may start conversations to these kinds of address. */
  startKinds: AddressKind[] | undefined;
}

/** The roll-up's document (docs/data-model.md, "Integration health"), times in epoch ms. */
export interface IntegrationHealth {
  computedAtMs: number | undefined;
  counts: Partial<Record<HealthStatus, number>>;
  total: number | undefined;
  oldestClaimable: { ageSeconds: number | undefined; sinceMs: number | undefined } | null;
  lastSent: { atMs: number | undefined } | null;
  lastError: { atMs: number | undefined; status: string | undefined; code: string | undefined } | null;
  /** false: a quiet integration, recomputed every 10 minutes. */
  active: boolean | undefined;
  /** The open problems (docs/operations.md#operational-events): empty when healthy. */
  problems: HealthProblem[];
  /** Present while unhealthy (a truthy `unhealthySince`); its time may still be unknown. */
  unhealthy: { sinceMs: number | undefined } | undefined;
}

/** The workspace's operations settings (`settings/operations`): the topic and the service's check of it. */
interface OperationsSettings {
  topic?: string | null;
  topicStatus?: string;
  topicMessage?: string;
}

function integrationsCol(session: Session) {
  return collection(session.services.db, 'workspaces', session.workspaceId, 'integrations');
}

function integrationRef(session: Session, integrationId: string) {
  return doc(integrationsCol(session), integrationId);
}

function toIntegration(id: string, d: DocumentData): Integration {
  const replies = (d.replies ?? {}) as Integration['replies'] & { attachments?: unknown };
  return {
    id,
    name: typeof d.name === 'string' ? d.name : id,
    active: d.active === true,
    keyPrefix: String(d.keyPrefix ?? ''),
    previousKey: d.previousKey ? (d.previousKey as Integration['previousKey']) : undefined,
    keyRevoked: d.keyRevoked ? (d.keyRevoked as Integration['keyRevoked']) : undefined,
    sourcePaused: d.sourceEnabled === false,
    replies,
    attachments: readCapability((d.replies as { attachments?: unknown } | undefined)?.attachments),
    lifecycle: readLifecycle((d.replies as { lifecycle?: unknown } | undefined)?.lifecycle),
    channel: readChannel(d.channel),
    startKinds: readStartKinds(d.conversations),
  };
}

/**
 * Integration names by id, followed live (the conversation list and a thread's header name the
 * integration, not its id): `label` answers the name once known, the id until then or if the
 * list cannot be read. `onChange` runs when names arrive or change.
 */
export function integrationNames(session: Session, onChange: () => void): { label(integrationId: string): string; destroy(): void } {
  const names = new Map<string, string>();
  const unsubscribe = subscribeIntegrations(
    session,
    (rows) => {
      names.clear();
      for (const row of rows) if (row.name !== '') names.set(row.id, row.name);
      onChange();
    },
    () => undefined, // the ids stay: the list itself says when integrations cannot be read
  );
  return { label: (integrationId) => names.get(integrationId) ?? integrationId, destroy: unsubscribe };
}

/** The workspace's integrations, live, newest first. */
export function subscribeIntegrations(session: Session, onList: (integrations: Integration[]) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    integrationsCol(session),
    (snap) => {
      const rows = snap.docs.map((d) => ({ id: d.id, data: d.data({ serverTimestamps: 'estimate' }) }));
      rows.sort((a, b) => (timestampMillis(b.data.createdAt) ?? 0) - (timestampMillis(a.data.createdAt) ?? 0));
      onList(rows.map((r) => toIntegration(r.id, r.data)));
    },
    onError,
  );
}

function toHealth(d: DocumentData): IntegrationHealth {
  const oldest = (d.oldestClaimable ?? null) as { since?: unknown; ageSeconds?: number } | null;
  const lastSent = (d.lastSent ?? null) as { at?: unknown } | null;
  const lastError = (d.lastError ?? null) as { at?: unknown; status?: string; code?: string } | null;
  return {
    computedAtMs: timestampMillis(d.computedAt),
    counts: (d.counts ?? {}) as IntegrationHealth['counts'],
    total: d.total as number | undefined,
    oldestClaimable: oldest === null ? null : { ageSeconds: oldest.ageSeconds, sinceMs: timestampMillis(oldest.since) },
    // Present but without a time still counts as sent (shown as a dash), as the roll-up wrote it.
    lastSent: lastSent ? { atMs: timestampMillis(lastSent.at) } : null,
    lastError: lastError === null ? null : { atMs: timestampMillis(lastError.at), status: lastError.status, code: lastError.code },
    active: d.active as boolean | undefined,
    problems: (d.problems ?? []) as HealthProblem[],
    unhealthy: d.unhealthySince ? { sinceMs: timestampMillis(d.unhealthySince) } : undefined,
  };
}

/** One integration's health roll-up, live; `undefined` until the roll-up first wrote it. */
export function subscribeHealth(session: Session, integrationId: string, onHealth: (health: IntegrationHealth | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    doc(session.services.db, 'workspaces', session.workspaceId, 'integrationHealth', integrationId),
    (snap) => onHealth(snap.exists() ? toHealth(snap.data()) : undefined),
    onError,
  );
}

/**
 * Creates an integration with a key minted in the browser (keys.ts); only its hash is written.
 * `topic` is the replies topic, or `''` for none (replies disabled). Resolves to the key, to be
 * shown once.
 */
export async function createIntegration(session: Session, name: string, topic: string): Promise<IssuedKey> {
  const issued = await issueKey(session.services.keyPrefix);
  await setDoc(doc(integrationsCol(session)), {
    name,
    active: true,
    sourceEnabled: true,
    keyHash: issued.keyHash,
    keyPrefix: issued.keyPrefix,
    replies: topic === '' ? { enabled: false, topic: null } : { enabled: true, topic },
    createdAt: serverTimestamp(),
    createdBy: session.user.uid,
  });
  return issued;
}

/** Activates or deactivates an integration. */
export async function setIntegrationActive(session: Session, integrationId: string, active: boolean): Promise<void> {
  await updateDoc(integrationRef(session, integrationId), { active, updatedAt: serverTimestamp() });
}

/** Replaces the integration's key (the old one stops working within 30 s); resolves to the new key. */
export async function rekeyIntegration(session: Session, integrationId: string): Promise<IssuedKey> {
  const issued = await issueKey(session.services.keyPrefix);
  await updateDoc(integrationRef(session, integrationId), { keyHash: issued.keyHash, keyPrefix: issued.keyPrefix, updatedAt: serverTimestamp() });
  return issued;
}

/** Ends a CLI rotation's overlap now: removes `previousKey`. */
export async function endKeyOverlap(session: Session, integrationId: string): Promise<void> {
  await updateDoc(integrationRef(session, integrationId), { previousKey: deleteField(), updatedAt: serverTimestamp() });
}

/** Sets what files replies may carry (`replies.attachments`), or, with `undefined`, makes replies text only. */
export async function setReplyAttachments(session: Session, integrationId: string, capability: AttachmentCapability | undefined): Promise<void> {
  await updateDoc(integrationRef(session, integrationId), { 'replies.attachments': capability ?? deleteField(), updatedAt: serverTimestamp() });
}

/**
 * Sets which requests may follow a reply's sending (`replies.lifecycle`: edits, unsends, each with
 * the channel's window), or, with `undefined`, removes the field: no edits or unsends, as before.
 */
export async function setReplyLifecycle(session: Session, integrationId: string, capability: LifecycleCapability | undefined): Promise<void> {
  await updateDoc(integrationRef(session, integrationId), { 'replies.lifecycle': capability ?? deleteField(), updatedAt: serverTimestamp() });
}

/**
 * Lets members start conversations to the given kinds of address (`conversations.start`), or, with
 * `undefined`, removes the field: no starts, as before.
 */
export async function setStartKinds(session: Session, integrationId: string, kinds: readonly AddressKind[] | undefined): Promise<void> {
  await updateDoc(integrationRef(session, integrationId), { conversations: kinds === undefined ? deleteField() : { start: { addressKinds: [...kinds] } }, updatedAt: serverTimestamp() });
}

function operationsRef(session: Session) {
  return doc(session.services.db, 'workspaces', session.workspaceId, 'settings', 'operations');
}

/** The operations settings, live (admins only); `undefined` while none are stored. */
export function subscribeOperations(session: Session, onSettings: (settings: OperationsSettings | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(operationsRef(session), (snap) => onSettings(snap.data() as OperationsSettings | undefined), onError);
}

/** Saves the operations topic (`''`: none, no events). */
export async function saveOperationsTopic(session: Session, topic: string): Promise<void> {
  // A new document replaces the service's status fields (they were about the old topic).
  await setDoc(operationsRef(session), { topic: topic === '' ? null : topic });
}
