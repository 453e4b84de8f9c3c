import type { PubSub } from '@google-cloud/pubsub';

let client: PubSub | undefined;

/**
 * The Pub/Sub client, created on first use. @google-cloud/pubsub is loaded then, never at module
 * load: the HTTP functions share this codebase and must not pay for it in their cold start.
 */
export async function pubsub(): Promise<PubSub> {
  if (!client) {
    const { PubSub: PubSubClass } = await import('@google-cloud/pubsub');
    client = new PubSubClass();
  }
  return client;
}
