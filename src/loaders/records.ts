import DataLoader from 'dataloader';
import type { MovementRow } from '../db/movements.js';
import type { Store } from '../db/store.js';
import type { TransactionRow } from '../db/transactions.js';

// Records looked up by their record id: what Relay's node(id)/nodes(ids) resolve a global id of a
// Transaction or an AddressTransaction to (one statement per type for all the ids of a request).
const byId = <Row extends { id: string }>(load: (ids: readonly string[]) => Promise<Row[]>) =>
  new DataLoader<string, Row | null>(async (ids) => {
    const rows = await load(ids);
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => map.get(id) ?? null);
  });

export function createRecordLoaders(store: Store) {
  return {
    transactionById: byId<TransactionRow>((ids) => store.transactions.byIds(ids)),
    movementById: byId<MovementRow>((ids) => store.movements.byIds(ids)),
  };
}
