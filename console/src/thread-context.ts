/**
 * What the parts of a thread share (thread.ts builds it): the conversation, the media of its
 * messages, the clock and the capability of the time rules, and the way back to a render that
 * keeps the reader's place (thread-focus.ts).
 */
import type { ChannelTemplateView } from './integration-channel-format';
import type { LifecycleCapability } from './lifecycle';
import type { MediaCache } from './media';
import type { Session } from './session';
import type { FocusTarget } from './thread-focus';

export interface ThreadContext {
  readonly session: Session;
  readonly conversationId: string;
  readonly media: MediaCache;
  /**
   * The clock of the view's time rules (the edit and unsend windows, the typing indicator): the
   * browser's, so a test moves it with the browser's clock.
   */
  now(): number;
  /** The integration's `replies.lifecycle` (followed live with its attachments). */
  lifecycle(): LifecycleCapability | undefined;
  /** The channel's templates (followed live): a template reply shows its preview filled in. */
  templates(): readonly ChannelTemplateView[];
  /** Where keyboard focus goes at the next render: a reply, or one of its controls (`data-focus`). */
  focusAfterRender(target: FocusTarget): void;
  /** Renders the latest snapshot's messages again (with `focus`, focusAfterRender first): a refusal with its reason, a form opened or closed. */
  render(focus?: FocusTarget): void;
}
