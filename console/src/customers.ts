/**
 * Who a conversation is with, by name: the customer document's `displayName` when the connector
 * gave one (docs/data-model.md, "Customers"), found by the service's deterministic id
 * (`"u_" + h(integrationId, externalId)`, docs/architecture.md) so the console needs no query.
 * Each customer is read once per page (members may read customers); a name that changes later
 * shows on the next visit.
 */
import { doc, type Firestore } from 'firebase/firestore';
import { meteredGet } from './read-meter';
import { customerDocId } from './format';

export { personLabel } from './format';

export class CustomerNames {
  readonly #names = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly db: Firestore,
    private readonly workspaceId: string,
  ) {}

  /** The display name of the customer `externalId` of `integrationId`, or undefined (none given, or unreadable). */
  displayName(integrationId: string, externalId: string): Promise<string | undefined> {
    const key = `${integrationId}\u0000${externalId}`;
    let name = this.#names.get(key);
    if (name === undefined) {
      name = customerDocId(integrationId, externalId)
        .then((id) => meteredGet('customer', doc(this.db, 'workspaces', this.workspaceId, 'customers', id)))
        .then(
          (snap) => {
            const value: unknown = snap.get('displayName');
            return typeof value === 'string' && value !== '' ? value : undefined;
          },
          () => undefined,
        );
      this.#names.set(key, name);
    }
    return name;
  }
}
