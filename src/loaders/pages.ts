import DataLoader from 'dataloader';
import type { Page, PageRequest } from '../db/paging.js';
import type { Store } from '../db/store.js';
import type { TickSort } from '../db/ticks.js';
import type { TickRow } from '../db/ticks.js';

// Nested connections (a tick's holders, a tick's transactions, a chain's ticks) are batched per
// distinct page request: every parent asking for the same page shape is answered by one LATERAL
// statement, so a list of N parents costs one statement, not N. Such a statement may return up to
// N × the page size rows: `admit` refuses it before it is sent when that is more than the request's
// result may hold (src/graphql/result-budget.ts).

/** Throws if a statement returning up to `rows` rows may not be sent. */
export type AdmitRows = (rows: number) => void;

function pageLoaders<Parent, Row>(
  load: (parents: readonly Parent[], request: PageRequest & { extra?: string }) => Promise<Map<string, Page<Row>>>,
  parentKey: (p: Parent) => string,
  admit: AdmitRows,
) {
  const byRequest = new Map<string, DataLoader<Parent, Page<Row>, string>>();
  return (request: PageRequest & { extra?: string }) => {
    const key = JSON.stringify(request);
    let loader = byRequest.get(key);
    if (!loader) {
      loader = new DataLoader<Parent, Page<Row>, string>(
        async (parents) => {
          admit(parents.length * request.limit);
          const pages = await load(parents, request);
          return parents.map((p) => pages.get(parentKey(p)) ?? { rows: [], hasMore: false });
        },
        { cacheKeyFn: parentKey },
      );
      byRequest.set(key, loader);
    }
    return loader;
  };
}

export function createPageLoaders(store: Store, admit: AdmitRows = () => {}) {
  return {
    holdersOfTick: pageLoaders((ids: readonly string[], req) => store.balances.holdersOfTicks(ids, req), (id) => id, admit),
    /** Holders at a block height: `extra` is the height (one statement per height and page shape). */
    holdersOfTickAt: pageLoaders((ids: readonly string[], req) => store.history.holdersOfTicksAt(ids, req.extra!, req), (id) => id, admit),
    transactionsOfTick: pageLoaders(
      (ticks: readonly TickRow[], req) => store.transactions.ofTicks(ticks, req),
      (t) => t.id,
      admit,
    ),
    ticksOfChain: pageLoaders(
      (chains: readonly string[], req) => store.ticks.listOfChains(chains, (req.extra ?? 'ID') as TickSort, req),
      (c) => c,
      admit,
    ),
  };
}
