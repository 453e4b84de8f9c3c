/**
 * The integration's channel in Firestore (docs/data-model.md, `integrations/{id}.channel`): read and
 * replaced in the caller's transaction. What an update does is ../rules/channel.ts's.
 */
import type { DocumentReference, Transaction } from 'firebase-admin/firestore';
import { applyChannelUpdate, type Channel, type ChannelUpdate } from '../rules/channel';
import { templateIndexOf } from '../contract/templates';
import { parseChannel } from './model';

/**
 * Applies a validated update to the integration's stored channel in `tx` and returns the channel
 * as stored. The same update again writes nothing (its `updatedAt` stays), so a retry is free.
 */
export async function storeChannelUpdate(tx: Transaction, integration: DocumentReference, update: ChannelUpdate, now: number): Promise<Channel> {
  const snap = await tx.get(integration);
  const { channel, changed } = applyChannelUpdate(parseChannel(snap.get('channel')), update, now);
  // `update`, not `set`: the integration exists (its key just authenticated the call), and only these
  // fields are the service's to write here. `templateIndex` is what firestore.rules check a template
  // reply against (rules cannot search a list): each template's `name:language` to its param names.
  if (changed) tx.update(integration, { channel, templateIndex: templateIndexOf(channel.templates) });
  return channel;
}
