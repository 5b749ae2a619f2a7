// The benchmark's fixed mix: every v2 method of the spec (src/rpc/methods/) with realistic params —
// page 1 and a deep page, the biggest tick's holders, the busiest address, all transactions, the tick
// list under each sort — and, for each, the equivalent GraphQL request: the method's own document and the
// variables it would run with, posted to /graphql. Plus the GraphQL cursor at the position of the
// deepest holders page (offset 100,000), which only the GraphQL surface offers, and the biggest tick's
// holders at a past block height (atBlock: page 1, and a cursor page after its 1,000th holder then).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../../src/db/client.js';
import { encodeCursor } from '../../src/graphql/paging.js';
import { createRpcTables } from '../../src/rpc/tables.js';
import { decodeParams } from '../../src/rpc/declaration.js';

export type Surface = 'rpc' | 'graphql';
/** Which target of the issue a scenario is held to (section 3). */
export type Kind = 'page1' | 'deep' | 'holders-offset' | 'holders-cursor' | 'holders-history';

export interface Scenario {
  name: string;
  surface: Surface;
  kind: Kind;
  /** The v2 method (also for its GraphQL twin). */
  method: string;
  path: string;
  body: string;
  /** Scenarios that must run the same statements (an RPC call and its GraphQL twin) share a floor. */
  twin?: string;
}

/** What the mix needs from the data set: data-<scale>.json plus a few look-ups. */
export interface Fixture {
  scale: number | null;
  biggestTick: { id: string; chain: string; protocol: string; tick: string; holders: number };
  busiestAddress: string;
  /** (chain, deploy hash) of the ten ticks with most holders: an inds_getTickBriefs batch. */
  briefs: { chain: string; deploy_hash: string }[];
  /** The chain with most ticks (inds_getInscriptions narrows the list to one chain). */
  busiestChain: string;
  /** Cursor of the 100,000th holder of the biggest tick (balance desc, address desc). */
  holderCursor: string;
  deepHolderOffset: number;
  ticks: number;
  /** A past height of the biggest tick's chain: the median height of its balance changes (half its history). */
  pastHeight: string;
  /** Cursor of the 1,000th holder of the biggest tick at pastHeight (or its last, if fewer). */
  pastHolderCursor: string;
}

export const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));

interface DataFile {
  scale: number;
  database: string;
  finishedAt: string;
  rows: { ticks: number };
  shape: { biggestTick: { chain: string; protocol: string; tick: string }; busiestAddress: { address: string } };
}

/**
 * The data-<scale>.json the generator wrote for this database, if any: the latest one naming it whose
 * tick count is the database's (one database may have been loaded at several scales in turn).
 */
function dataFileFor(database: string, ticks: number): DataFile | null {
  const files = readdirSync(resultsDir).filter((f) => /^data-[\d.]+\.json$/.test(f));
  const matching = files
    .map((f) => JSON.parse(readFileSync(`${resultsDir}${f}`, 'utf8')) as DataFile)
    .filter((d) => d.database === database && d.rows?.ticks === ticks)
    .sort((a, b) => b.finishedAt.localeCompare(a.finishedAt));
  return matching[0] ?? null;
}

export async function loadFixture(sql: Sql, database: string, deepHolderOffset = 100_000): Promise<Fixture> {
  const [{ n: ticks } = { n: '0' }] = await sql<{ n: string }[]>`SELECT count(*)::text AS n FROM ticks`;
  const data = dataFileFor(database, Number(ticks));
  // Without the generator's record (a database loaded some other way) the fixture is read from the data.
  const [biggest] = data
    ? await sql<{ id: string; chain: string; protocol: string; tick: string; holders: string }[]>`
        SELECT id, chain, protocol, tick, holders FROM ticks
         WHERE chain = ${data.shape.biggestTick.chain} AND protocol = ${data.shape.biggestTick.protocol}
           AND tick = ${data.shape.biggestTick.tick}`
    : await sql<{ id: string; chain: string; protocol: string; tick: string; holders: string }[]>`
        SELECT id, chain, protocol, tick, holders FROM ticks ORDER BY holders DESC, id LIMIT 1`;
  if (!biggest) throw new Error(`${database}: no ticks`);
  let busiestAddress = data?.shape.busiestAddress.address;
  if (!busiestAddress) {
    const [row] = await sql<{ address: string }[]>`
      SELECT address FROM address_txs GROUP BY address ORDER BY count(*) DESC LIMIT 1`;
    busiestAddress = row!.address;
  }
  const briefs = await sql<{ chain: string; deploy_hash: string }[]>`
    SELECT chain, deploy_hash FROM ticks ORDER BY holders DESC, id LIMIT 10`;
  const [chain] = await sql<{ chain: string }[]>`SELECT chain FROM ticks GROUP BY chain ORDER BY count(*) DESC LIMIT 1`;
  const holders = Number(biggest.holders);
  const offset = Math.min(deepHolderOffset, Math.max(0, holders - 10));
  // the row just before the page at `offset`: its cursor continues exactly where offset `offset` starts
  const [row] = await sql<{ balance: string; address_key: string }[]>`
    SELECT balance::text AS balance, address_key FROM balances
     WHERE tick_id = ${biggest.id} AND balance > 0
     ORDER BY balance DESC, address_key DESC OFFSET ${Math.max(0, offset - 1)} LIMIT 1`;
  // the biggest tick's holders at the median height of its history: half its changes behind, half ahead
  const [past] = await sql<{ h: string }[]>`
    SELECT (percentile_disc(0.5) WITHIN GROUP (ORDER BY block_height))::text AS h FROM balance_history WHERE tick_id = ${biggest.id}`;
  const pastHeight = past?.h ?? '0';
  const [pastRow] = await sql<{ balance: string; address_key: string }[]>`
    SELECT balance::text AS balance, address_key FROM balance_history
     WHERE tick_id = ${biggest.id} AND balance > 0 AND block_height <= ${pastHeight}::bigint
       AND (valid_to IS NULL OR valid_to > ${pastHeight}::bigint)
     ORDER BY balance DESC, address_key DESC OFFSET 999 LIMIT 1`;
  return {
    pastHeight,
    pastHolderCursor: encodeCursor(pastRow ? [pastRow.balance, pastRow.address_key] : ['0', '']),
    scale: data?.scale ?? null,
    biggestTick: { ...biggest, holders },
    busiestAddress,
    briefs: [...briefs],
    busiestChain: chain!.chain,
    holderCursor: encodeCursor([row!.balance, row!.address_key]),
    deepHolderOffset: offset,
    ticks: Number(ticks),
  };
}

const paging = { defaultPageSize: 10, maxPageSize: 1_000 };
const v2Methods = createRpcTables().v2;
export const rpcBody = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** The GraphQL request a v2 call runs in-process: its document with the variables it decodes to. */
export function graphqlBody(method: string, params: unknown[]): string {
  const spec = v2Methods.find((m) => m.names.includes(method));
  if (!spec) throw new Error(`no v2 method ${method}`);
  const p = decodeParams(spec.layouts, params, paging);
  return JSON.stringify({ query: spec.document, variables: spec.variables(p) });
}

const tickSorts = ['id', 'deploy_time', 'progress', 'holders', 'tx_count'];

export function buildScenarios(f: Fixture): Scenario[] {
  const t = f.biggestTick;
  const a = f.busiestAddress;
  const deepTicks = Math.max(0, Math.min(5_000, f.ticks - 10));
  const calls: { label: string; kind: Kind; method: string; params: unknown[] }[] = [
    // the tick list under each sort (sort_mode 2 = descending, the clients' default), page 1
    ...tickSorts.map((s, i) => ({ label: `getTicks/${s}`, kind: 'page1' as Kind, method: 'inds_getTicks', params: [10, 0, '', '', '', '', i, 2] })),
    { label: `getTicks/holders@${deepTicks}`, kind: 'deep', method: 'inds_getTicks', params: [10, deepTicks, '', '', '', '', 3, 2] },
    { label: `getInscriptions/${f.busiestChain}`, kind: 'page1', method: 'inds_getInscriptions', params: [10, 0, f.busiestChain, '', '', '', 3, 2] },
    // the busiest address: its movement log and balances
    { label: 'getTransactionByAddress', kind: 'page1', method: 'inds_getTransactionByAddress', params: [10, 0, a, '', '', '', 0] },
    { label: 'getTransactionByAddress@4000', kind: 'deep', method: 'inds_getTransactionByAddress', params: [10, 4_000, a, '', '', '', 0] },
    { label: 'getBalancesByAddress', kind: 'page1', method: 'inds_getBalancesByAddress', params: [10, 0, a, '', '', '', '', 2] },
    { label: 'getBalancesByAddress@900', kind: 'deep', method: 'inds_getBalancesByAddress', params: [10, 900, a, '', '', '', '', 2] },
    // the biggest tick: its holders (page 1 and offset 100,000) and its detail
    { label: 'getHoldersByTick', kind: 'page1', method: 'inds_getHoldersByTick', params: [10, 0, t.chain, t.protocol, t.tick, 2] },
    { label: `getHoldersByTick@${f.deepHolderOffset}`, kind: 'holders-offset', method: 'inds_getHoldersByTick', params: [10, f.deepHolderOffset, t.chain, t.protocol, t.tick, 2] },
    { label: 'getInscriptionByTick', kind: 'page1', method: 'index_getInscriptionByTick', params: [t.chain, t.protocol, t.tick] },
    // all transactions (newest first), a deep page of them, and those of the busiest address
    { label: 'getTransactions', kind: 'page1', method: 'inds_getTransactions', params: [10, 0, '', '', '', '', 2] },
    { label: 'getTransactions@100000', kind: 'deep', method: 'inds_getTransactions', params: [10, 100_000, '', '', '', '', 2] },
    { label: 'getTransactions/address', kind: 'page1', method: 'inds_getTransactions', params: [10, 0, a, '', '', '', 2] },
    { label: 'getTickBriefs', kind: 'page1', method: 'inds_getTickBriefs', params: [f.briefs] },
    { label: 'getAllChains', kind: 'page1', method: 'inds_getAllChains', params: [[]] },
  ];
  const out: Scenario[] = [];
  for (const c of calls) {
    out.push({ name: `rpc ${c.label}`, surface: 'rpc', kind: c.kind, method: c.method, path: `/v2/rpc/${c.method}`, body: rpcBody(c.method, c.params) });
  }
  for (const c of calls) {
    out.push({
      name: `gql ${c.label}`, surface: 'graphql', kind: c.kind, method: c.method, path: '/graphql',
      body: graphqlBody(c.method, c.params), twin: `rpc ${c.label}`,
    });
  }
  // the GraphQL cursor at the position of offset 100,000: a keyset page
  out.push({
    name: `gql holders/after@${f.deepHolderOffset}`,
    surface: 'graphql',
    kind: 'holders-cursor',
    method: 'inds_getHoldersByTick',
    path: '/graphql',
    body: JSON.stringify({
      query: `query TickHoldersAfter($first: Int!, $after: String!, $chain: String!, $protocol: String!, $tick: String!,
          $direction: OrderDirection!) {
        tick(chain: $chain, protocol: $protocol, tick: $tick) {
          chainName protocol tick deployHash totalSupply
          holders(first: $first, after: $after, direction: $direction) {
            totalCount
            edges { node { address balance } }
            pageInfo { hasNextPage endCursor }
          }
        }
      }`,
      variables: { first: 10, after: f.holderCursor, chain: t.chain, protocol: t.protocol, tick: t.tick, direction: 'DESC' },
    }),
  });
  // the biggest tick's holders at a past height (balance_history), page 1 and a cursor page; no totalCount
  // (an exact count at a height reads every holder then)
  const atBlockQuery = `query TickHoldersAt($first: Int!, $after: String, $atBlock: BigInt!, $chain: String!, $protocol: String!,
      $tick: String!) {
    tick(chain: $chain, protocol: $protocol, tick: $tick) {
      chainName protocol tick
      holders(first: $first, after: $after, atBlock: $atBlock) {
        edges { node { address balance } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }`;
  for (const [label, after] of [['', null], ['/after@1000', f.pastHolderCursor]] as const) {
    out.push({
      name: `gql holders/atBlock${label}`,
      surface: 'graphql',
      kind: 'holders-history',
      method: 'inds_getHoldersByTick',
      path: '/graphql',
      body: JSON.stringify({
        query: atBlockQuery,
        variables: { first: 10, after, atBlock: f.pastHeight, chain: t.chain, protocol: t.protocol, tick: t.tick },
      }),
    });
  }
  return out;
}

