import { tickOrders } from '../../domain/codes.js';
import { rpcErrors } from '../errors.js';
import { integer, isoTime, transferTypeCode } from '../format.js';
import { direction, filter, limit, list, method, offset, paging, text, type MethodSpec, type ParamSpec } from '../declaration.js';
import { avasHash, notFoundTick, satsHash } from './demo-records.js';
import { tickDetailEntry, tickDetailFields, tickEntry, tickListEntry, tickListFields } from './entries.js';
import { array, object, page, ref } from './schemas.js';

// The tick methods: lists, one tick, its holders, briefs by deploy hash.

const sort: ParamSpec<'sort', 'int'> = {
  name: 'sort', type: 'int', default: 0, oneOf: [0, 1, 2, 3, 4],
  description: '0 = default (record id), 1 = deploy time, 2 = mint progress, 3 = holders, 4 = transaction count.',
};
const getTicksLayout = [
  limit, offset, text('chain'), text('protocol'), text('tick'), text('deploy_by'), sort,
  direction('sort_mode'),
];

const getTickLayout = [
  text('chain', { description: 'Chain name; "" = any.' }),
  text('protocol', { description: 'Protocol; "" = any.' }),
  text('tick', { description: 'Tick; "" = any.' }),
  text('deploy_hash', { description: 'Deploy transaction hash; "" = any.' }),
];

export const tickMethods: MethodSpec[] = [
  method({
    names: ['inds_getTicks', 'inds_getInscriptions'],
    layouts: [getTicksLayout],
    document: `query InscriptionTicks($first: Int!, $offset: Int!, $chain: String, $protocol: String, $tick: String,
        $deployBy: String, $orderBy: TickOrderField!, $direction: OrderDirection!) {
      ticks(first: $first, offset: $offset, chain: $chain, protocol: $protocol, tick: $tick, deployBy: $deployBy,
            orderBy: $orderBy, direction: $direction) {
        totalCount
        edges { node { ${tickListFields} } }
      }
    }`,
    variables: (p) => ({
      ...paging(p), chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick), deployBy: filter(p.deploy_by),
      orderBy: tickOrders[p.sort], direction: p.sort_mode,
    }),
    reshape: (d, p) => ({ inscriptions: list(d.ticks).map(tickListEntry), total: d.ticks.totalCount, limit: p.limit, offset: p.offset }),
    doc: {
      summary: 'List ticks.',
      description: 'Exact-match filters; sort 0 = deploy order (record id), 1 = deploy time, 2 = mint progress, 3 = holders, ' +
        '4 = transaction count; the record id breaks ties. Also sent with 7 params (no sort_mode = descending).',
      result: ref('TickList'),
      examples: [{ name: 'most-holders', summary: 'The two ticks with the most holders.', params: [2, 0, '', '', '', '', 3, 2] }],
    },
    aliases: {
      inds_getInscriptions: {
        summary: 'Alias of inds_getTicks.',
        examples: [{ name: 'avalanche-by-holders', summary: 'The documented 7-param form (no sort_mode).', params: [2, 0, 'avalanche', '', '', '', 3] }],
      },
    },
  }),

  method({
    names: ['inds_getHoldersByTick'],
    layouts: [[limit, offset, text('chain'), text('protocol'), text('tick'), direction('sort')]],
    document: `query TickHolders($first: Int!, $offset: Int!, $chain: String!, $protocol: String!, $tick: String!,
        $direction: OrderDirection!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) {
        chainName protocol tick deployHash totalSupply
        holders(first: $first, offset: $offset, direction: $direction) {
          totalCount
          edges { node { address balance } }
        }
      }
    }`,
    variables: (p) => ({ ...paging(p), chain: p.chain, protocol: p.protocol, tick: p.tick, direction: p.sort }),
    reshape: (d, p) => {
      const t = d.tick;
      if (!t) throw rpcErrors.notFound(`no tick ${p.tick} of ${p.protocol} on ${p.chain}`);
      return {
        holders: list(t.holders).map((h) => ({
          chain: t.chainName,
          protocol: t.protocol,
          tick: t.tick,
          deploy_hash: t.deployHash,
          address: h.address,
          balance: h.balance,
          total_supply: t.totalSupply,
        })),
        total: t.holders.totalCount,
        limit: p.limit,
        offset: p.offset,
      };
    },
    doc: {
      summary: 'Holders of a tick, by balance; the address breaks ties.',
      result: page('holders', ref('HolderEntry')),
      notFound: notFoundTick,
      examples: [{ name: 'tomray', params: [3, 0, 'avalanche', 'asc-20', 'tomray', 2] }],
    },
  }),

  method({
    names: ['index_getInscriptionByTick'],
    layouts: [[text('chain'), text('protocol'), text('tick')]],
    document: `query InscriptionByTick($chain: String!, $protocol: String!, $tick: String!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) {
        chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType
        createdAt updatedAt decimals
      }
    }`,
    variables: (p) => ({ chain: p.chain, protocol: p.protocol, tick: p.tick }),
    reshape: (d, p) => {
      const t = d.tick;
      if (!t) throw rpcErrors.notFound(`no tick ${p.tick} of ${p.protocol} on ${p.chain}`);
      return tickEntry(t);
    },
    doc: {
      summary: 'Tick detail by (chain, protocol, tick).',
      result: ref('TickDetail'),
      notFound: notFoundTick,
      examples: [{ name: 'crazydog', params: ['avalanche', 'asc-20', 'crazydog'] }],
    },
  }),

  method({
    names: ['inds_getTickBriefs'],
    layouts: [[{ name: 'selectors', type: 'selectors' } satisfies ParamSpec<'selectors', 'selectors'>]],
    document: `query TickBriefs($selectors: [TickSelector!]!) {
      ticksByDeployHash(selectors: $selectors) {
        id: recordId chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType
        createdAt updatedAt decimals stats { holders minted txCount progress }
      }
    }`,
    variables: (p) => ({ selectors: p.selectors }),
    reshape: (d) => ({
      inscriptions: d.ticksByDeployHash.map((t) => ({
        id: integer(t.id),
        chain: t.chainName,
        protocol: t.protocol,
        tick: t.tick,
        name: t.name,
        limit_per_mint: t.limitPerMint,
        deploy_by: t.deployBy,
        total_supply: t.totalSupply,
        deploy_hash: t.deployHash,
        deploy_time: isoTime(t.deployTime),
        transfer_type: transferTypeCode(t.transferType),
        created_at: isoTime(t.createdAt),
        updated_at: isoTime(t.updatedAt),
        decimals: t.decimals,
        holders: t.stats.holders,
        minted: t.stats.minted,
        tx_cnt: t.stats.txCount,
        progress: t.stats.progress,
      })),
    }),
    doc: {
      summary: 'Tick briefs by (chain, deploy hash), in selector order; unknown selectors are left out.',
      result: object({ inscriptions: array(ref('TickBrief')) }),
      examples: [{ name: 'avas', params: [[{ chain: 'avalanche', deploy_hash: avasHash }]] }],
    },
  }),

  method({
    // any identifier may be empty; the ones given must pick exactly one tick
    names: ['inds_getTick'],
    layouts: [getTickLayout],
    document: `query Tick($chain: String, $protocol: String, $tick: String, $deployHash: String) {
      findTick(chain: $chain, protocol: $protocol, tick: $tick, deployHash: $deployHash) { ${tickDetailFields} }
    }`,
    variables: (p) => ({ chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick), deployHash: filter(p.deploy_hash) }),
    reshape: (d, p) => {
      if (!d.findTick) {
        const given = getTickLayout.filter((s) => p[s.name] !== '').map((s) => `${s.name} ${p[s.name]}`);
        throw rpcErrors.notFound(`no tick with ${given.join(', ')}`);
      }
      return tickDetailEntry(d.findTick);
    },
    doc: {
      summary: 'Tick detail with its live stats, by any of chain, protocol, tick and deploy hash.',
      description: 'Empty params are not used; the ones given must pick exactly one tick: at least a tick or a deploy hash, ' +
        'and -32602 if several ticks match (add the chain or the protocol). -32603 if none does.',
      result: ref('TickDetailWithStats'),
      notFound: 'no tick matches',
      examples: [
        { name: 'by-name', params: ['avalanche', 'asc-20', 'lobby', ''] },
        { name: 'by-deploy-hash', summary: 'The deploy hash alone (btc, stored without 0x).', params: ['', '', '', satsHash] },
      ],
    },
  }),
];
