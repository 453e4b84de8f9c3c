/**
 * What the parts of the Integrations view share (integrations.ts builds it): the session, whether
 * the member may change integrations, and the panel that shows a freshly minted key once.
 */
import type { IssuedKey } from './keys';
import type { Session } from './session';

/** Why a write of the Integrations view was refused, when the rules say no more. */
export const ADMINS_ONLY = 'only workspace admins may create or change integrations, and only the fields the contract lists';

export interface IntegrationsContext {
  readonly session: Session;
  readonly isAdmin: boolean;
  /** Shows a freshly minted key once (integration-key.ts). */
  showKey(title: string, issued: IssuedKey): void;
  /** Integrations whose Deactivate waits for its in-place confirmation (kept across the cards' re-renders). */
  readonly confirmingDeactivation: Set<string>;
  /** Renders the cards again (after a change of `confirmingDeactivation`). */
  rerender(): void;
}
