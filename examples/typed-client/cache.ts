// Client cache configuration for the gateway's schema.
//
// Every record type implements Relay's Node (an `id` unique across types), so Apollo's InMemoryCache and
// urql's graphcache normalise them with their defaults (`__typename` + `id`). The types below have no
// identity of their own (connections, edges, page info, figures): they are parts of their parent, so
// - Apollo merges two answers for the same field instead of replacing one with the other (`merge: true`;
//   otherwise selecting different fields of `Query.balances` in two queries loses data and warns
//   "Cache data may be lost when replacing the balances field of a Query object");
// - urql embeds them in their parent (`keys: () => null`; otherwise it warns for each).
// test/clients/caches.test.ts checks this list against schema/schema.graphql.

export const embeddedTypes = [
  'ActivityChange', 'ActivityWindow', 'AddressChainTotal', 'AddressSearchResult', 'AddressTransactionConnection',
  'AddressTransactionEdge', 'BalanceConnection', 'BalanceEdge', 'BlockActivity', 'CallDataOperation', 'ChainActivity',
  'ChainFigures', 'HolderConnection', 'HolderEdge', 'IndexedBlock', 'LiveBlock', 'PageInfo', 'TickActivity',
  'TickConnection', 'TickEdge', 'TickSearchResult', 'TransactionConnection', 'TransactionEdge', 'TransactionSearchResult',
] as const;

/** The implementations of the schema's interfaces and unions (fragments on `Node` and `SearchResult`). */
export const possibleTypes = {
  Node: ['AddressTransaction', 'Balance', 'Chain', 'Holder', 'Tick', 'TickStats', 'Transaction'],
  SearchResult: ['AddressSearchResult', 'TickSearchResult', 'TransactionSearchResult'],
};

/** Apollo Client: `new InMemoryCache({ typePolicies, possibleTypes })`. */
export const typePolicies = Object.fromEntries(embeddedTypes.map((name) => [name, { merge: true }]));

/** urql graphcache: `cacheExchange({ keys: graphcacheKeys })`. */
export const graphcacheKeys = Object.fromEntries(embeddedTypes.map((name) => [name, () => null]));
