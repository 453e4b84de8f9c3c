/**
 * What the delivery rules answer a connector, as plain types. The rules decide these; the
 * response schemas of functions/src/deliveries/schemas.ts (zod, for validation and the OpenAPI document)
 * are checked against them at compile time, not the other way round, so that the rules compile
 * without zod wherever they run (the SDK's test service compiles a copy of this folder).
 */
import type { AttachmentContentType, SkipReason, TargetOnlyLifecycleKind } from '../contract';
import type { ReplyTemplate } from '../contract/templates';
import type { DeliveryNotification } from './record';

/** Who the reply goes to. */
interface ClaimRecipient {
  externalConversationId: string;
  externalCustomerId: string;
}

/** One file of a reply as its claim hands it on (`name` shown safely, see contract/file-names.ts). */
interface ClaimAttachment {
  attachmentId: string;
  name: string;
  contentType: AttachmentContentType;
  size: number;
  sha256: string;
}

/** What an edit or unsend acts on: the reply's `sent` delivery and the provider ids its connector reported. */
export interface ClaimTarget {
  deliveryId: string;
  providerMessageIds: string[];
  parts?: Array<{ part: string; providerMessageIds: string[] }> | undefined;
}

interface ClaimSkip {
  status: 'skip';
  /** One of the contract's reasons; a later version may add others. */
  reason: SkipReason | (string & {});
}

interface ClaimReadySend {
  status: 'ready';
  leaseId: string;
  leaseExpiresAt: number;
  message: { text: string; recipient: ClaimRecipient; attachments?: ClaimAttachment[] | undefined; template?: ReplyTemplate | undefined };
}

interface ClaimReadyEdit {
  status: 'ready';
  kind: 'edit';
  leaseId: string;
  leaseExpiresAt: number;
  message: { text: string; recipient: ClaimRecipient };
  target: ClaimTarget;
}

/** Every kind but an edit (an unsend, ...): what it acts on and who it goes to, no text. */
interface ClaimReadyTargetOnly {
  status: 'ready';
  kind: TargetOnlyLifecycleKind;
  leaseId: string;
  leaseExpiresAt: number;
  message: { recipient: ClaimRecipient };
  target: ClaimTarget;
}

/** A template message as a claim carries it (its filled-in text is `message.text`). */
interface ClaimTemplate {
  name: string;
  language: string;
  params: Record<string, string>;
}

/** A conversation the desk starts: to an address, not a thread (its `complete` names the thread). */
interface ClaimReadyStart {
  status: 'ready';
  kind: 'start';
  leaseId: string;
  leaseExpiresAt: number;
  message: { text: string; template?: ClaimTemplate | undefined; recipient: { address: { kind: 'phone' | 'email' | 'handle'; value: string } } };
}

export type ClaimResponse = ClaimSkip | ClaimReadyEdit | ClaimReadyTargetOnly | ClaimReadyStart | ClaimReadySend;
export interface StartResponse {
  status: 'sending' | 'sent';
}
export interface ExtendResponse {
  leaseExpiresAt: number;
}
/*
 * `next` of complete and fail: the notification of the conversation's next delivery when their end
 * made it claimable (./plan.ts `nextClaimable`), so that the connector claims it at once instead of
 * waiting for that notification (which is still published: a second claim of it is harmless). Set
 * by the store after the plan (./state-machine.ts `answerOf`), never by the rule.
 */
export interface CompleteResponse {
  status: 'sent';
  next?: DeliveryNotification | undefined;
}
export interface FailResponse {
  status: 'queued' | 'failed' | 'unknown' | 'sent';
  next?: DeliveryNotification | undefined;
}
export interface ReceiptResponse {
  status: 'sent';
}
