import type { AddressChainTotalRow } from '../../db/lookups.js';
import type { TickRow } from '../../db/ticks.js';
import type { TransactionRow } from '../../db/transactions.js';
import { classifyKeyword, hashCandidates } from '../../domain/keyword.js';
import { builder } from '../builder.js';
import { badInput } from '../paging.js';
import { TickRef } from './tick.js';
import { TransactionRef } from './transaction.js';

// inds_search: one keyword, three kinds of answer told apart by the keyword's shape (src/domain/keyword.ts).

const maxResults = 100;
const maxKeywordLength = 256;

interface TickSearch { kind: 'TICK'; keyword: string; ticks: TickRow[]; total: number }
interface AddressSearch { kind: 'ADDRESS'; address: string; chains: AddressChainTotalRow[] }
interface TransactionSearch { kind: 'TX_HASH'; hash: string; transactions: TransactionRow[] }
type Search = TickSearch | AddressSearch | TransactionSearch;

const TickSearchResultRef = builder.objectRef<TickSearch>('TickSearchResult');
TickSearchResultRef.implement({
  description: 'Ticks whose name is the keyword or starts with it: the exact name first, then by holders.',
  isTypeOf: (v) => (v as Search).kind === 'TICK',
  fields: (t) => ({
    keyword: t.exposeString('keyword'),
    ticks: t.field({
      type: [TickRef], description: `At most ${maxResults}.`, complexity: { field: 1, multiplier: maxResults }, resolve: (s) => s.ticks,
    }),
    totalCount: t.int({ description: 'Number of all matching ticks.', resolve: (s) => s.total }),
  }),
});

const AddressChainTotalRef = builder.objectRef<AddressChainTotalRow>('AddressChainTotal');
AddressChainTotalRef.implement({
  description: "The sum of an address's positive balances of the ticks of one chain.",
  fields: (t) => ({
    chainName: t.exposeString('chain'),
    address: t.exposeString('address', { description: 'The address as stored.' }),
    balance: t.field({ type: 'Decimal', resolve: (r) => r.balance }),
  }),
});

const AddressSearchResultRef = builder.objectRef<AddressSearch>('AddressSearchResult');
AddressSearchResultRef.implement({
  description: "An address's holdings per chain, largest sum first (empty if it holds nothing).",
  isTypeOf: (v) => (v as Search).kind === 'ADDRESS',
  fields: (t) => ({
    address: t.exposeString('address', { description: 'The keyword.' }),
    chains: t.field({ type: [AddressChainTotalRef], resolve: (s) => s.chains }),
  }),
});

const TransactionSearchResultRef = builder.objectRef<TransactionSearch>('TransactionSearchResult');
TransactionSearchResultRef.implement({
  description: 'Transactions with the hash (one per chain that has it), in chain display order.',
  isTypeOf: (v) => (v as Search).kind === 'TX_HASH',
  fields: (t) => ({
    hash: t.exposeString('hash', { description: 'The keyword.' }),
    transactions: t.field({ type: [TransactionRef], resolve: (s) => s.transactions }),
  }),
});

const SearchResult = builder.unionType('SearchResult', {
  description: 'What a keyword found: ticks by name, an address, or transactions by hash.',
  types: [TickSearchResultRef, AddressSearchResultRef, TransactionSearchResultRef],
});

builder.queryFields((t) => ({
  search: t.field({
    type: SearchResult,
    description:
      'Searches by keyword. A 32-byte hex hash (with or without 0x) finds transactions; an EVM (0x + 40 hex) or ' +
      'btc address finds its holdings per chain; anything else finds ticks whose name starts with it.',
    args: {
      keyword: t.arg.string({ required: true }),
      chain: t.arg.string({ description: 'Only this chain.' }),
    },
    resolve: async (_root, args, ctx): Promise<Search> => {
      const { keyword } = args;
      if (keyword === '') throw badInput('keyword must not be empty');
      if (keyword.length > maxKeywordLength) throw badInput(`keyword must be at most ${maxKeywordLength} characters`);
      const chain = args.chain || null;
      switch (classifyKeyword(keyword)) {
        case 'TX_HASH':
          return { kind: 'TX_HASH', hash: keyword, transactions: await ctx.store.lookups.transactionsByHash(hashCandidates(keyword), chain, maxResults) };
        case 'ADDRESS':
          return { kind: 'ADDRESS', address: keyword, chains: await ctx.store.lookups.addressChainTotals(keyword, chain) };
        case 'TICK': {
          const { rows, total } = await ctx.store.lookups.byPrefix(keyword, chain, maxResults);
          rows.forEach(ctx.loaders.primeTick);
          return { kind: 'TICK', keyword, ticks: rows, total };
        }
      }
    },
  }),
}));
