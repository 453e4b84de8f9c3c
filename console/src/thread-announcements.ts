/**
 * A thread's announcements in the page's live region: a reply's new status, the outcome of a
 * cancel (it says more than the status it brings, or keeps), and each step of an edit's or
 * unsend's delivery, which the reply's own status does not show (lifecycle.ts lifecycleChanges).
 * Only changes are announced: the first render records what it shows and says nothing.
 */
import { announce } from './dom';
import { cancelOutcomeLabel, statusLabel } from './format';
import { lifecycleChanges, requestStatusLabel, type LifecycleMarks } from './lifecycle';
import type { OutboundMessage } from './thread-data';

export class ReplyAnnouncer {
  private readonly status = new Map<string, string>();
  private readonly cancel = new Map<string, string>();
  private readonly lifecycle = new Map<string, LifecycleMarks>();

  /** Announces what changed on reply `m` since it was last seen; `quiet` (the first render) only records it. */
  observe(m: OutboundMessage, quiet: boolean): void {
    const status = m.delivery?.status ?? 'pending';
    const cancel = m.delivery?.cancel ?? '';
    const quoted = `Reply “${m.text.slice(0, 40)}”`;
    if (!quiet && cancel !== '' && this.cancel.get(m.id) !== cancel) announce(`${quoted}: ${cancelOutcomeLabel(cancel)}`);
    else if (!quiet && this.status.get(m.id) !== status) announce(`${quoted}: ${statusLabel(status)}`);
    this.status.set(m.id, status);
    this.cancel.set(m.id, cancel);
    const lifecycle = lifecycleChanges(quiet ? undefined : this.lifecycle.get(m.id), m);
    if (lifecycle.changed.length > 0) announce(lifecycle.changed.map(({ kind, entry }) => `${quoted}, ${kind}: ${requestStatusLabel(entry)}`).join('; '));
    this.lifecycle.set(m.id, lifecycle.marks);
  }
}
