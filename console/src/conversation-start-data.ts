/**
 * Firestore access of New conversation (conversation-start.ts): the member's start request
 * (`conversationStarts/{startId}`) and the service's answer on the same document. No DOM. The
 * write is exactly what firestore.rules accept (docs/data-model.md, "Conversation starts"): the
 * document id, Firestore's auto id, is the start's idempotency key.
 */
import { collection, doc, onSnapshot, serverTimestamp, setDoc, type Unsubscribe } from 'firebase/firestore';
import type { Session } from './session';
import type { AddressKind } from './start-format';
import type { TemplateChoice } from './template-format';

/** What the member asks for: the integration, the address, and a text or a template (exactly one). */
export interface StartRequest {
  integrationId: string;
  to: { kind: AddressKind; value: string };
  first: { text: string } | { template: TemplateChoice };
}

/** The service's answer: the conversation to open (an existing one when `reused`), or its refusal. */
export type StartAnswer = { kind: 'result'; conversationId: string; reused: boolean } | { kind: 'error'; code: string; message: string | undefined };

function startsCol(session: Session) {
  return collection(session.services.db, 'workspaces', session.workspaceId, 'conversationStarts');
}

/** Writes the start request; resolves to its id once the server accepted it. */
export async function requestStart(session: Session, request: StartRequest): Promise<string> {
  const ref = doc(startsCol(session));
  await setDoc(ref, { integrationId: request.integrationId, to: { kind: request.to.kind, value: request.to.value }, ...request.first, uid: session.user.uid, requestedAt: serverTimestamp() });
  return ref.id;
}

/** The service's answer on the start document, live; `undefined` until it answered. */
export function subscribeStartAnswer(session: Session, startId: string, onAnswer: (answer: StartAnswer | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    doc(startsCol(session), startId),
    (snap) => {
      const result = snap.get('result') as { conversationId?: unknown; reused?: unknown } | undefined;
      const error = snap.get('error') as { code?: unknown; message?: unknown } | undefined;
      if (result !== undefined && typeof result.conversationId === 'string') onAnswer({ kind: 'result', conversationId: result.conversationId, reused: result.reused === true });
      else if (error !== undefined && typeof error.code === 'string') onAnswer({ kind: 'error', code: error.code, message: typeof error.message === 'string' ? error.message : undefined });
      else onAnswer(undefined);
    },
    onError,
  );
}
