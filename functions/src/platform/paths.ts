/**
 * Every Firestore document path the service reads or writes, built in this one place
 * (docs/data-model.md describes the documents). The triggers' document patterns in index.ts stay
 * string literals: firebase-functions derives the type of each event's `params` from the literal. Ids are the service's own (platform/ids.ts) or
 * checked with `isStorableDocumentId` before they get here.
 */
const workspace = (workspaceId: string): string => `workspaces/${workspaceId}`;

export const paths = {
  /** A console user's membership: `{ role: "admin" | "operator" }` (written by the console). */
  member: (workspaceId: string, uid: string): string => `${workspace(workspaceId)}/members/${uid}`,
  integration: (workspaceId: string, integrationId: string): string => `${workspace(workspaceId)}/integrations/${integrationId}`,
  integrations: (workspaceId: string): string => `${workspace(workspaceId)}/integrations`,
  /** The integration's health for the console (deliveries/health-rollup.ts), beside it: writing the integration fires its trigger. */
  integrationHealth: (workspaceId: string, integrationId: string): string => `${workspace(workspaceId)}/integrationHealth/${integrationId}`,
  /** Idempotency record of one incoming event (TTL: `expireAt`). */
  event: (workspaceId: string, eventDocId: string): string => `${workspace(workspaceId)}/events/${eventDocId}`,
  customer: (workspaceId: string, customerId: string): string => `${workspace(workspaceId)}/customers/${customerId}`,
  conversations: (workspaceId: string): string => `${workspace(workspaceId)}/conversations`,
  conversation: (workspaceId: string, conversationId: string): string => `${workspace(workspaceId)}/conversations/${conversationId}`,
  /** A conversation's messages: inbound ones (written by the service) and operator replies (written by the console). */
  messages: (workspaceId: string, conversationId: string): string => `${workspace(workspaceId)}/conversations/${conversationId}/messages`,
  message: (workspaceId: string, conversationId: string, messageId: string): string => `${paths.messages(workspaceId, conversationId)}/${messageId}`,
  /** The records of the files members uploaded for replies (docs/data-model.md#attachment-uploads). */
  attachmentUploads: (workspaceId: string): string => `${workspace(workspaceId)}/attachmentUploads`,
  /** The record of one file a member uploaded for a reply (docs/data-model.md#attachment-uploads). */
  attachmentUpload: (workspaceId: string, attachmentId: string): string => `${workspace(workspaceId)}/attachmentUploads/${attachmentId}`,
  deliveries: (workspaceId: string): string => `${workspace(workspaceId)}/deliveries`,
  delivery: (workspaceId: string, deliveryId: string): string => `${paths.deliveries(workspaceId)}/${deliveryId}`,
  /** Per-conversation sequencing and ordering state (rules/ordering.ts). */
  deliveryQueue: (workspaceId: string, conversationId: string): string => `${workspace(workspaceId)}/deliveryQueues/${conversationId}`,
  /** Notifications waiting to be published: top-level so that the sweeper can scan it. */
  outbox: (): string => 'outbox',
  outboxEntry: (outboxId: string): string => `outbox/${outboxId}`,
  /** The next liveness check of each claimable delivery (deliveries/liveness.ts): top-level, sharded, for the sweeper. */
  deliveryChecks: (): string => 'deliveryChecks',
  /** The workspace's operations settings (docs/operations.md#operational-events): `{ topic }`, the service's `topicStatus`. */
  operationsSettings: (workspaceId: string): string => `${workspace(workspaceId)}/settings/operations`,
  deliveryCheck: (deliveryId: string): string => `deliveryChecks/${deliveryId}`,
  /** An admin's erasure request of one customer, and its audit (privacy/erasure.ts). */
  erasures: (workspaceId: string): string => `${workspace(workspaceId)}/erasures`,
  erasure: (workspaceId: string, erasureId: string): string => `${paths.erasures(workspaceId)}/${erasureId}`,
  /** An admin's export request of one customer, and its file's state (privacy/export.ts). */
  exportRequest: (workspaceId: string, exportId: string): string => `${workspace(workspaceId)}/exports/${exportId}`,
  /** The workspace's retention period `{ days }`, written by admins (privacy/retention.ts). */
  retentionSettings: (workspaceId: string): string => `${workspace(workspaceId)}/settings/retention`,
  /** Where the retention job's pass of the workspace is (service-only). */
  retentionState: (workspaceId: string): string => `${workspace(workspaceId)}/settings/retentionState`,
  customers: (workspaceId: string): string => `${workspace(workspaceId)}/customers`,
  /** Message events waiting for their target, one document per target (messages/event-store.ts; TTL: `expireAt`). */
  pendingEvents: (workspaceId: string): string => `${workspace(workspaceId)}/pendingEvents`,
  pendingEvent: (workspaceId: string, targetKey: string): string => `${workspace(workspaceId)}/pendingEvents/${targetKey}`,
  /** Which operator reply a provider message id names (messages/event-store.ts). */
  providerMessage: (workspaceId: string, key: string): string => `${workspace(workspaceId)}/providerMessages/${key}`,
  providerMessages: (workspaceId: string): string => `${workspace(workspaceId)}/providerMessages`,
  /** A member's request to start a conversation, answered on the same document (deliveries/starts.ts). */
  conversationStart: (workspaceId: string, startId: string): string => `${workspace(workspaceId)}/conversationStarts/${startId}`,
  conversationStarts: (workspaceId: string): string => `${workspace(workspaceId)}/conversationStarts`,
  /** The address book of starts: (integration, kind, value) -> customer and conversation (service only). */
  startAddress: (workspaceId: string, addressId: string): string => `${workspace(workspaceId)}/startAddresses/${addressId}`,
  startAddresses: (workspaceId: string): string => `${workspace(workspaceId)}/startAddresses`,
  /** Who is typing in a conversation (TTL: `expireAt`, one minute). */
  typing: (workspaceId: string, conversationId: string): string => `${workspace(workspaceId)}/typing/${conversationId}`,
  typingAll: (workspaceId: string): string => `${workspace(workspaceId)}/typing`,
};
