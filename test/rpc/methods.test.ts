import { beforeAll, describe, expect, it } from 'vitest';
import type { MovementInput, TickInput, TransactionInput } from '../../src/db/load.js';
import type { TestDatabase } from '../support/db.js';
import { useDatabase, useGateway } from '../support/gateway.js';
import { alice, bob, carol, drained, fakeHash, Fixture, unix } from '../support/fixtures.js';
import { call } from '../support/http.js';

// Every v2 method against real PostgreSQL: each filter, sort, direction, paging edge, arity, alias and
// default. Expected answers are computed from the fixture's own rows (plain JS over the input), never
// from the database, except record ids, which only the database assigns.

let f: Fixture;

const deployer = '0xDeAd00000000000000000000000000000000dEaD';
const otherDeployer = '0xEeEe00000000000000000000000000000000eEeE';
// tie at 100: lower-case order is H2 < H1, byte order of the stored spelling is H1 < H2
const H1 = '0xF000000000000000000000000000000000000001';
const H2 = '0xe000000000000000000000000000000000000002';
const H3 = '0x3333000000000000000000000000000000000003';
const BTC_DEPLOYER = 'bc1qordideployer0000000000000000000000000';
const ORDI_HOLDER = 'bc1qOrdiHolder00000000000000000000000000';

const T: Record<string, TickInput> = {};
const keyTicks = ['a%b', 'a_b', 'a\\b', 'axb', 'aab'];
/** sort fixtures on fantom: [deploy second, minted of 1000, holders, tx_cnt] */
const sortSpec: Record<string, [number, string, number, number]> = {
  s1: [3, '500', 3, 10],
  s2: [1, '500', 1, 30],
  s3: [3, '1000', 3, 10],
  s4: [2, '0', 0, 0],
  s5: [1, '2000', 2, 30],
};
let tickIds: Map<string, number>; // "chain/protocol/tick" → id
let txIds: Map<string, number>; // tx_hash → id
let extraHeight = 30_000_000;

const tkey = (t: { chain: string; protocol: string; tick: string }) => `${t.chain}/${t.protocol}/${t.tick}`;
const lower = (s: string) => s.toLowerCase();
const upperHex = (address: string) => `0x${address.slice(2).toUpperCase()}`;

function deploy(t: TickInput, by: string) {
  const hash = t.deploy_hash;
  const at = unix(1_705_000_000 + extraHeight - 30_000_000);
  f.data.movements.push({
    chain: t.chain, protocol: t.protocol, tick: t.tick, address: by, tx_hash: hash, amount: '0', event: 1,
    operate: 'deploy', created_at: at, updated_at: at,
  });
  f.data.transactions.push(rawTx({ chain: t.chain, protocol: t.protocol, tick: t.tick, op: 'deploy', tx_hash: hash, from_address: by, to_address: by }));
}

function rawTx(spec: Partial<TransactionInput> & Pick<TransactionInput, 'chain'>): TransactionInput {
  const at = '2024-03-01T12:00:00Z';
  return {
    protocol: '', block_height: ++extraHeight, position_in_block: 0, block_time: at, tx_hash: fakeHash(),
    from_address: alice, to_address: bob, op: '', tick: '', amt: '0', gas: 21000, gas_price: 1, status: 1,
    created_at: at, updated_at: at, ...spec,
  };
}

async function ok(method: string, params: unknown[], url = main.base): Promise<any> {
  const reply = await call(url, method, params);
  expect(reply.error, `${method} ${JSON.stringify(params)}`).toBeUndefined();
  return reply.result;
}

async function fails(method: string, params: unknown[]): Promise<{ code: number; message: string; data?: any }> {
  const reply = await call(main.base, method, params);
  expect(reply.result).toBeUndefined();
  return reply.error;
}

/** The fixture's rows loaded into `db`, and the record ids the database assigned to them. */
async function loadRows(db: TestDatabase): Promise<void> {
  f = new Fixture();
  T.ethAlpha = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'alpha', deploy_by: deployer, total_supply: '1000000' });
  T.ethBeta = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'beta', deploy_by: otherDeployer, total_supply: '1000000' });
  T.avaxAlpha = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'alpha', deploy_by: alice, total_supply: '1000000' });
  T.avaxGamma = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'gamma', deploy_by: deployer, total_supply: '1000000' });
  T.ordi = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'ordi', deploy_by: BTC_DEPLOYER, deploy_hash: 'ab'.repeat(32) });
  for (const k of keyTicks) T[k] = f.tick({ chain: 'polygon', protocol: 'prc-20', tick: k, deploy_by: otherDeployer });
  for (const [name, [second, minted, holders, txCnt]] of Object.entries(sortSpec)) {
    T[name] = f.tick({
      chain: 'fantom', protocol: 'frc-20', tick: name, total_supply: '1000', deploy_time: unix(1_700_000_000 + second),
      stats: { minted, holders, tx_cnt: txCnt },
    });
  }

  deploy(T.ethAlpha!, deployer);
  deploy(T.ethBeta!, otherDeployer);
  deploy(T.avaxAlpha!, alice);
  deploy(T.avaxGamma!, deployer);
  deploy(T.ordi!, BTC_DEPLOYER);

  // eth alpha holders: carol 250, bob 160, alice 150, H1 100, H2 100, H3 40 (drained has 0: not a holder)
  f.mint(T.ethAlpha!, alice, '100').mint(T.ethAlpha!, bob, '100').mint(T.ethAlpha!, carol, '300');
  f.transfer(T.ethAlpha!, carol, alice, '50');
  f.mint(T.ethAlpha!, H1, '100').mint(T.ethAlpha!, H2, '100').mint(T.ethAlpha!, H3, '40');
  f.mint(T.ethAlpha!, drained, '60').transfer(T.ethAlpha!, drained, bob, '60');
  f.mint(T.avaxAlpha!, alice, '500').mint(T.avaxAlpha!, bob, '10').transfer(T.avaxAlpha!, alice, carol, '100'); // alice 400
  f.mint(T.avaxGamma!, alice, '150').mint(T.avaxGamma!, carol, '5');
  f.mint(T.ethBeta!, bob, '1000');
  f.mint(T.ordi!, ORDI_HOLDER, '1000');
  keyTicks.forEach((k, i) => f.mint(T[k]!, alice, k === 'aab' ? '150' : String((i + 1) * 10)));

  // raw transactions that are no inscription, with the address spelled in another case, and ties in
  // (block_height, position_in_block) that only the record id breaks
  f.data.transactions.push(rawTx({ chain: 'eth', from_address: upperHex(alice), to_address: otherDeployer, block_height: 50_000_000, position_in_block: 2 }));
  f.data.transactions.push(rawTx({ chain: 'eth', from_address: otherDeployer, to_address: lower(alice), block_height: 50_000_000, position_in_block: 1 }));
  f.data.transactions.push(rawTx({ chain: 'bsc', from_address: carol, to_address: otherDeployer, block_height: 50_000_000, position_in_block: 1 }));
  f.data.transactions.push(rawTx({ chain: 'bsc', from_address: otherDeployer, to_address: carol, block_height: 50_000_000, position_in_block: 1 }));

  f.block('eth', '19319706', '2024-02-27T15:12:23Z', '2024-02-27T15:14:28Z');
  f.block('avalanche', '42060612', '2024-02-24T00:11:02Z', '2024-02-27T15:20:53Z');
  await f.load(db.sql);

  const ticks = await db.sql<{ id: string; chain: string; protocol: string; tick: string }[]>`SELECT id, chain, protocol, tick FROM ticks`;
  tickIds = new Map(ticks.map((t) => [tkey(t), Number(t.id)]));
  const txs = await db.sql<{ id: string; tx_hash: string }[]>`SELECT id, tx_hash FROM transactions`;
  txIds = new Map(txs.map((t) => [t.tx_hash, Number(t.id)]));
}

const db = useDatabase({ load: loadRows });
const main = useGateway({ db });
const small = useGateway({ db, config: { MAX_PAGE_SIZE: 5 } });

// ---- oracles over the fixture rows ----

const idOf = (t: TickInput) => tickIds.get(tkey(t))!;
const allTicks = () => f.data.ticks;
const byIdDesc = (a: TickInput, b: TickInput) => idOf(b) - idOf(a);

function movementsOf(address: string, o: { chain?: string; protocol?: string; tick?: string; key?: string; events?: number[] } = {}) {
  return f.data.movements
    .map((m, i) => ({ m, i }))
    .filter(({ m }) =>
      lower(m.address) === lower(address) &&
      (!o.chain || m.chain === lower(o.chain)) &&
      (!o.protocol || m.protocol === lower(o.protocol)) &&
      (!o.tick || m.tick === lower(o.tick)) &&
      (!o.key || m.tick.includes(lower(o.key))) &&
      (!o.events || o.events.includes(m.event)))
    .sort((x, y) => y.i - x.i) // newest first = reverse log order
    .map(({ m }) => m);
}

const movementView = (m: MovementInput) => [m.chain, m.protocol, m.tick, m.tx_hash, m.event];
const resultMovementView = (m: any) => [m.chain, m.protocol, m.tick, m.tx_hash, m.event];

function transactionsOf(o: { address?: string; chain?: string; protocol?: string; tick?: string }, direction: 'ASC' | 'DESC') {
  const rows = f.data.transactions.filter((x) =>
    (!o.address || lower(x.from_address) === lower(o.address) || lower(x.to_address) === lower(o.address)) &&
    (!o.chain || x.chain === lower(o.chain)) &&
    (!o.protocol || x.protocol === lower(o.protocol)) &&
    (!o.tick || x.tick === lower(o.tick)));
  const cmp = (x: TransactionInput, y: TransactionInput) =>
    x.block_height - y.block_height || x.position_in_block - y.position_in_block || txIds.get(x.tx_hash)! - txIds.get(y.tx_hash)!;
  rows.sort(cmp);
  if (direction === 'DESC') rows.reverse();
  return rows.map((x) => x.tx_hash);
}

// ---- inds_getTicks / inds_getInscriptions ----

describe('inds_getTicks', () => {
  it('defaults (no params): limit 10, offset 0, deploy order (id) descending', async () => {
    const r = await ok('inds_getTicks', []);
    expect(r.total).toBe(allTicks().length);
    expect([r.limit, r.offset]).toEqual([10, 0]);
    const expected = [...allTicks()].sort(byIdDesc).slice(0, 10).map(tkey);
    expect(r.inscriptions.map(tkey)).toEqual(expected);
  });

  it('null params mean the default', async () => {
    const defaults = await ok('inds_getTicks', [10, 0, '', '', '', '', 0, 2]);
    expect(await ok('inds_getTicks', [null, null, null, null, null, null, null, null])).toEqual(defaults);
    expect(await ok('inds_getTicks', [null, 0])).toEqual(defaults);
  });

  it('filters chain, protocol and tick case-insensitively, deploy_by case-insensitively', async () => {
    const cases: [unknown[], (t: TickInput) => boolean][] = [
      [['ETH'], (t) => t.chain === 'eth'],
      [['', 'ASC-20'], (t) => t.protocol === 'asc-20'],
      [['', '', 'ALPHA'], (t) => t.tick === 'alpha'],
      [['', '', '', upperHex(deployer)], (t) => lower(t.deploy_by) === lower(deployer)],
      [['', '', '', lower(otherDeployer)], (t) => lower(t.deploy_by) === lower(otherDeployer)],
      [['Avalanche', 'asc-20', 'Alpha'], (t) => t.chain === 'avalanche' && t.tick === 'alpha'],
      [['eth', '', '', deployer], (t) => t.chain === 'eth' && t.deploy_by === deployer],
      [['polygon', 'prc-20'], (t) => t.chain === 'polygon'],
      [['', '', 'A_B'], (t) => t.tick === 'a_b'],
      [['', '', 'a%'], () => false], // exact match: no pattern characters
      [['nochain'], () => false],
      [['eth', 'asc-20'], () => false],
    ];
    for (const [filters, keep] of cases) {
      const r = await ok('inds_getTicks', [1000, 0, ...filters]);
      const expected = allTicks().filter(keep).sort(byIdDesc).map(tkey);
      expect(r.inscriptions.map(tkey), JSON.stringify(filters)).toEqual(expected);
      expect(r.total, JSON.stringify(filters)).toBe(expected.length);
    }
  });

  it('returns the canonical lower-case tick and full list entries', async () => {
    const r = await ok('inds_getTicks', [10, 0, 'ETH', 'ERC-20', 'ALPHA']);
    expect(r.inscriptions).toHaveLength(1);
    const t = r.inscriptions[0];
    expect(Object.keys(t)).toEqual([
      'chain', 'protocol', 'tick', 'deploy_by', 'deploy_hash', 'total_supply', 'minted_percent', 'limit_per_mint',
      'holders', 'transfer_type', 'status', 'minted', 'tx_cnt', 'created_at',
    ]);
    expect(t).toMatchObject({
      chain: 'eth', protocol: 'erc-20', tick: 'alpha', deploy_by: deployer, deploy_hash: T.ethAlpha!.deploy_hash,
      total_supply: '1000000', minted: '800', holders: 6, status: 1, minted_percent: '0.0008',
    });
    // deploy + 7 mints + 2 transfers
    expect(t.tx_cnt).toBe(f.data.transactions.filter((x) => x.chain === 'eth' && x.tick === 'alpha').length);
    expect(t.tx_cnt).toBe(10);
  });

  const orders: Record<number, string[]> = {
    // [ascending]; descending is the exact reverse because the id tie-break follows the direction
    0: ['s1', 's2', 's3', 's4', 's5'],
    1: ['s2', 's5', 's4', 's1', 's3'], // deploy time, ties (s2,s5) (s1,s3) by id
    2: ['s4', 's1', 's2', 's3', 's5'], // progress 0, .5, .5, 1, 1 (s5 is over-minted, capped at 1)
    3: ['s4', 's2', 's5', 's1', 's3'], // holders 0, 1, 2, 3, 3
    4: ['s4', 's1', 's3', 's2', 's5'], // tx_cnt 0, 10, 10, 30, 30
  };
  for (const sort of [0, 1, 2, 3, 4]) {
    for (const mode of [1, 2]) {
      it(`sort ${sort}, sort_mode ${mode}${mode === 1 ? ' (asc)' : ' (desc)'} with id tie-breaks, stable over pages`, async () => {
        const expected = mode === 1 ? orders[sort]! : [...orders[sort]!].reverse();
        const r = await ok('inds_getTicks', [10, 0, 'fantom', '', '', '', sort, mode]);
        expect(r.inscriptions.map((t: any) => t.tick)).toEqual(expected);
        expect(r.total).toBe(5);
        const paged: string[] = [];
        for (let offset = 0; offset < 5; offset += 2) {
          const page = await ok('inds_getTicks', [2, offset, 'FANTOM', '', '', '', sort, mode]);
          paged.push(...page.inscriptions.map((t: any) => t.tick));
        }
        expect(paged).toEqual(expected);
      });
    }
  }

  it('sort_mode other than 1 is descending; missing sort_mode is descending', async () => {
    const desc = (await ok('inds_getTicks', [10, 0, 'fantom', '', '', '', 3, 2])).inscriptions;
    for (const mode of [0, 3, 99]) {
      expect((await ok('inds_getTicks', [10, 0, 'fantom', '', '', '', 3, mode])).inscriptions).toEqual(desc);
    }
    expect((await ok('inds_getTicks', [10, 0, 'fantom', '', '', '', 3])).inscriptions).toEqual(desc);
  });

  it('inds_getInscriptions is the same method, with 7 params (no sort_mode) or 8', async () => {
    const seven = [10, 0, '', '', '', '', 3];
    expect(await ok('inds_getInscriptions', seven)).toEqual(await ok('inds_getTicks', seven));
    expect(await ok('inds_getInscriptions', seven)).toEqual(await ok('inds_getTicks', [...seven, 2]));
    const eight = [10, 0, 'fantom', '', '', '', 3, 1];
    const r = await ok('inds_getInscriptions', eight);
    expect(r).toEqual(await ok('inds_getTicks', eight));
    expect(r.inscriptions.map((t: any) => t.tick)).toEqual(orders[3]);
  });
});

// ---- paging edges, for every list method ----

interface ListMethod { method: string; key: string; params: (limit: number | null, offset: number | null) => unknown[] }
const listMethods: ListMethod[] = [
  { method: 'inds_getTicks', key: 'inscriptions', params: (l, o) => [l, o] },
  { method: 'inds_getTransactionByAddress', key: 'transactions', params: (l, o) => [l, o, alice, '', '', '', 0] },
  { method: 'inds_getBalancesByAddress', key: 'inscriptions', params: (l, o) => [l, o, alice, '', '', '', '', 2] },
  { method: 'inds_getHoldersByTick', key: 'holders', params: (l, o) => [l, o, 'eth', 'erc-20', 'alpha', 2] },
  { method: 'inds_getTransactions', key: 'data', params: (l, o) => [l, o, '', '', '', '', 2] },
];

describe.each(listMethods)('paging of $method', ({ method, key, params }) => {
  let full: unknown[];
  let total: number;
  beforeAll(async () => {
    const r = await ok(method, params(1000, 0));
    full = r[key];
    total = r.total;
  });

  it('the whole list fits one page: total is its length, more than the small maximum', () => {
    expect(full.length).toBe(total);
    expect(total).toBeGreaterThan(5);
  });

  it('limit 0: an empty list, the real total, limit 0 echoed', async () => {
    const r = await ok(method, params(0, 0));
    expect(r[key]).toEqual([]);
    expect([r.total, r.limit, r.offset]).toEqual([total, 0, 0]);
  });

  it('pages concatenate to the whole list; the last page is short', async () => {
    const pages: unknown[] = [];
    for (let offset = 0; offset < total; offset += 4) {
      const r = await ok(method, params(4, offset));
      expect([r.total, r.limit, r.offset]).toEqual([total, 4, offset]);
      expect(r[key].length).toBe(Math.min(4, total - offset));
      pages.push(...r[key]);
    }
    expect(pages).toEqual(full);
    const last = await ok(method, params(10, total - 1));
    expect(last[key]).toEqual(full.slice(-1));
  });

  it('offset at or past the end: [] with the real total', async () => {
    for (const offset of [total, total + 1, 1_000_000]) {
      const r = await ok(method, params(10, offset));
      expect(r[key]).toEqual([]);
      expect([r.total, r.limit, r.offset]).toEqual([total, 10, offset]);
    }
  });

  it('limit above MAX_PAGE_SIZE is clamped and the effective limit echoed', async () => {
    const r = await ok(method, params(100, 0), small.base);
    expect(r[key]).toEqual(full.slice(0, 5));
    expect([r.total, r.limit, r.offset]).toEqual([total, 5, 0]);
    const r2 = await ok(method, params(6, 1), small.base);
    expect(r2[key]).toEqual(full.slice(1, 6));
    expect(r2.limit).toBe(5);
  });

  it('missing and null limit/offset: 10 and 0', async () => {
    const r = await ok(method, params(null, null));
    expect(r[key]).toEqual(full.slice(0, 10));
    expect([r.limit, r.offset]).toEqual([10, 0]);
  });
});

// ---- inds_getTransactionByAddress ----

describe('inds_getTransactionByAddress', () => {
  it('lists the address movement log newest first, address compared case-insensitively', async () => {
    const expected = movementsOf(alice).map(movementView);
    for (const address of [alice, lower(alice), upperHex(alice)]) {
      const r = await ok('inds_getTransactionByAddress', [1000, 0, address, '', '', '', 0]);
      expect(r.transactions.map(resultMovementView)).toEqual(expected);
      expect(r.total).toBe(expected.length);
    }
    const r = await ok('inds_getTransactionByAddress', [1, 0, lower(alice), '', '', '', 0]);
    const m = movementsOf(alice)[0]!;
    expect(r.transactions[0]).toEqual({
      chain: m.chain, protocol: m.protocol, tick: m.tick, address: m.address, tx_hash: m.tx_hash, amount: m.amount,
      event: m.event, operate: m.operate, created_at: Date.parse(m.created_at) / 1000, updated_at: Date.parse(m.updated_at) / 1000,
    });
  });

  it('event filter: 0 all, 1 deploy, 2 mint, 3 transfer in and out', async () => {
    const sets: Record<number, number[] | undefined> = { 0: undefined, 1: [1], 2: [2], 3: [3, 4] };
    for (const [code, events] of Object.entries(sets)) {
      const expected = movementsOf(alice, { events }).map(movementView);
      expect(expected.length).toBeGreaterThan(0);
      const r = await ok('inds_getTransactionByAddress', [1000, 0, alice, '', '', '', Number(code)]);
      expect(r.transactions.map(resultMovementView), `event ${code}`).toEqual(expected);
      expect(r.total).toBe(expected.length);
    }
    // transfer covers both legs
    const transfers = (await ok('inds_getTransactionByAddress', [1000, 0, alice, '', '', '', 3])).transactions;
    expect(new Set(transfers.map((m: any) => m.event))).toEqual(new Set([3, 4]));
  });

  it('chain, protocol and tick filters (case-insensitive, tick exact), alone and combined with the event', async () => {
    const cases: [string, string, string, number][] = [
      ['ETH', '', '', 0], ['', 'ASC-20', '', 0], ['', '', 'ALPHA', 0], ['avalanche', 'asc-20', 'alpha', 0],
      ['', '', 'alpha', 2], ['avalanche', '', '', 3], ['', '', 'alp', 0], ['btc', '', '', 0], ['', '', 'a_b', 2],
    ];
    const eventSets: Record<number, number[] | undefined> = { 0: undefined, 2: [2], 3: [3, 4] };
    for (const [chain, protocol, tick, event] of cases) {
      const expected = movementsOf(alice, { chain, protocol, tick, events: eventSets[event] }).map(movementView);
      const r = await ok('inds_getTransactionByAddress', [1000, 0, alice, chain, protocol, tick, event]);
      expect(r.transactions.map(resultMovementView), JSON.stringify([chain, protocol, tick, event])).toEqual(expected);
      expect(r.total).toBe(expected.length);
    }
  });

  it('7 params (event at index 6) and 8 params (key at index 6, event at index 7)', async () => {
    const seven = await ok('inds_getTransactionByAddress', [1000, 0, alice, '', '', '', 2]);
    const eight = await ok('inds_getTransactionByAddress', [1000, 0, alice, '', '', '', '', 2]);
    expect(eight).toEqual(seven);
    for (const key of ['%', '_', '\\', 'A_B', 'ALP', 'xb']) {
      const expected = movementsOf(alice, { key }).map(movementView);
      const r = await ok('inds_getTransactionByAddress', [1000, 0, alice, '', '', '', key, 0]);
      expect(r.transactions.map(resultMovementView), key).toEqual(expected);
      expect(r.total).toBe(expected.length);
    }
    const minted = await ok('inds_getTransactionByAddress', [1000, 0, alice, '', '', '', 'a', 2]);
    expect(minted.transactions.map(resultMovementView)).toEqual(movementsOf(alice, { key: 'a', events: [2] }).map(movementView));
  });

  it('missing trailing params: no filters, event 0', async () => {
    const all = await ok('inds_getTransactionByAddress', [10, 0, alice, '', '', '', 0]);
    expect(await ok('inds_getTransactionByAddress', [10, 0, alice])).toEqual(all);
    expect(await ok('inds_getTransactionByAddress', [null, null, alice, null, null, null, null])).toEqual(all);
  });

  it('an unknown address: an empty list, total 0', async () => {
    expect(await ok('inds_getTransactionByAddress', [10, 0, '0x0000000000000000000000000000000000000bad', '', '', '', 0]))
      .toEqual({ transactions: [], total: 0, limit: 10, offset: 0 });
  });

  it('an empty or missing address (required): -32602 naming it', async () => {
    for (const params of [[10, 0, '', '', '', '', 0], [10, 0, null], [10, 0], []]) {
      const error = await fails('inds_getTransactionByAddress', params);
      expect(error, JSON.stringify(params)).toEqual({
        code: -32602,
        message: "Invalid params: parameter #3 'address' must not be empty",
        data: { reason: "parameter #3 'address' must not be empty", param: 'address', position: 3 },
      });
    }
  });
});

// ---- inds_getBalancesByAddress / inds_getBalanceByAddress ----

describe('inds_getBalancesByAddress', () => {
  // alice: ethAlpha 150, avaxAlpha 400, avaxGamma 150, a%b 10, a_b 20, a\b 30, axb 40, aab 150
  const ascending = ['polygon/prc-20/a%b', 'polygon/prc-20/a_b', 'polygon/prc-20/a\\b', 'polygon/prc-20/axb',
    'eth/erc-20/alpha', 'avalanche/asc-20/gamma', 'polygon/prc-20/aab', 'avalanche/asc-20/alpha'];

  it('sort 1 ascending, 2 descending (default) by balance; ties broken by the tick record', async () => {
    const asc = await ok('inds_getBalancesByAddress', [100, 0, alice, '', '', '', '', 1]);
    expect(asc.inscriptions.map(tkey)).toEqual(ascending);
    expect(asc.inscriptions.map((b: any) => b.balance)).toEqual(['10', '20', '30', '40', '150', '150', '150', '400']);
    const desc = await ok('inds_getBalancesByAddress', [100, 0, alice, '', '', '', '', 2]);
    expect(desc.inscriptions.map(tkey)).toEqual([...ascending].reverse());
    expect(await ok('inds_getBalancesByAddress', [100, 0, alice, '', '', '', ''])).toEqual(desc); // 7 params
    expect(await ok('inds_getBalancesByAddress', [100, 0, alice])).toEqual(desc);
    expect(await ok('inds_getBalancesByAddress', [100, 0, alice, null, null, null, null, null])).toEqual(desc);
    expect(asc.total).toBe(8);
  });

  it('entries carry the tick fields and only positive balances appear', async () => {
    const r = await ok('inds_getBalancesByAddress', [100, 0, lower(alice), 'ETH', 'ERC-20', 'ALPHA', '', 2]);
    expect(r.inscriptions).toEqual([{
      chain: 'eth', protocol: 'erc-20', tick: 'alpha', address: alice, balance: '150',
      deploy_hash: T.ethAlpha!.deploy_hash, transfer_type: 0,
    }]);
    const zero = await ok('inds_getBalancesByAddress', [100, 0, drained, '', '', '', '', 2]);
    expect(zero).toEqual({ inscriptions: [], total: 0, limit: 100, offset: 0 });
  });

  it('address, chain, protocol and tick filters are case-insensitive; the tick filter is exact', async () => {
    const keep = (o: { chain?: string; protocol?: string; tick?: string }) =>
      ascending.filter((k) => {
        const [chain, protocol, tick] = k.split('/');
        return (!o.chain || chain === lower(o.chain)) && (!o.protocol || protocol === lower(o.protocol)) && (!o.tick || tick === lower(o.tick));
      });
    const cases: { chain?: string; protocol?: string; tick?: string }[] = [
      { chain: 'AVALANCHE' }, { protocol: 'PRC-20' }, { tick: 'ALPHA' }, { chain: 'avalanche', tick: 'alpha' },
      { tick: 'alp' }, { chain: 'btc' }, { chain: 'eth', protocol: 'asc-20' },
    ];
    for (const c of cases) {
      for (const address of [alice, upperHex(alice)]) {
        const r = await ok('inds_getBalancesByAddress', [100, 0, address, c.chain ?? '', c.protocol ?? '', c.tick ?? '', '', 1]);
        expect(r.inscriptions.map(tkey), JSON.stringify(c)).toEqual(keep(c));
        expect(r.total).toBe(keep(c).length);
      }
    }
  });

  it('key: case-insensitive substring of the tick, with % _ and \\ matched literally', async () => {
    const cases: [string, string[]][] = [
      ['%', ['a%b']], ['_', ['a_b']], ['\\', ['a\\b']], ['A_B', ['a_b']], ['a%', ['a%b']], ['%b', ['a%b']],
      ['XB', ['axb']], ['AB', ['aab']], ['', keyTicks.concat(['alpha', 'gamma', 'alpha'])], ['alpha', ['alpha', 'alpha']],
      ['%%', []], ['.', []], ['*', []],
    ];
    for (const [key, ticks] of cases) {
      const r = await ok('inds_getBalancesByAddress', [100, 0, alice, '', '', '', key, 1]);
      expect(r.inscriptions.map((b: any) => b.tick).sort(), JSON.stringify(key)).toEqual([...ticks].sort());
      expect(r.total).toBe(ticks.length);
    }
    // key combines with the other filters
    const r = await ok('inds_getBalancesByAddress', [100, 0, alice, 'avalanche', '', '', 'a', 2]);
    expect(r.inscriptions.map(tkey)).toEqual(['avalanche/asc-20/alpha', 'avalanche/asc-20/gamma']);
  });

  it('inds_getBalanceByAddress is an alias, with 7 and 8 params', async () => {
    for (const params of [[100, 0, alice, '', '', '', ''], [100, 0, alice, '', '', '', '', 1], [3, 2, alice, '', 'prc-20', '', 'a', 1]]) {
      expect(await ok('inds_getBalanceByAddress', params)).toEqual(await ok('inds_getBalancesByAddress', params));
    }
  });
});

// ---- inds_getHoldersByTick ----

describe('inds_getHoldersByTick', () => {
  // eth alpha: carol 250, bob 160, alice 150, H1 100, H2 100, H3 40; ties by lower-case address (H2 0xe… < H1 0xf…)
  const ascending: [string, string][] = [[H3, '40'], [H2, '100'], [H1, '100'], [alice, '150'], [bob, '160'], [carol, '250']];

  it('sort 1 ascending, 2 descending (default) by balance; ties by address', async () => {
    const asc = await ok('inds_getHoldersByTick', [100, 0, 'eth', 'erc-20', 'alpha', 1]);
    expect(asc.holders.map((h: any) => [h.address, h.balance])).toEqual(ascending);
    const desc = await ok('inds_getHoldersByTick', [100, 0, 'eth', 'erc-20', 'alpha', 2]);
    expect(desc.holders.map((h: any) => [h.address, h.balance])).toEqual([...ascending].reverse());
    expect(await ok('inds_getHoldersByTick', [100, 0, 'eth', 'erc-20', 'alpha'])).toEqual(desc);
    expect(await ok('inds_getHoldersByTick', [100, 0, 'eth', 'erc-20', 'alpha', null])).toEqual(desc);
    expect(await ok('inds_getHoldersByTick', [100, 0, 'eth', 'erc-20', 'alpha', 7])).toEqual(desc);
    expect(asc.total).toBe(6); // drained (balance 0) is no holder
  });

  it("entries carry the tick's deploy_hash and total_supply; chain, protocol, tick case-insensitive", async () => {
    const r = await ok('inds_getHoldersByTick', [1, 0, 'ETH', 'ERC-20', 'Alpha', 2]);
    expect(r).toEqual({
      holders: [{
        chain: 'eth', protocol: 'erc-20', tick: 'alpha', deploy_hash: T.ethAlpha!.deploy_hash, address: carol, balance: '250',
        total_supply: '1000000',
      }],
      total: 6, limit: 1, offset: 0,
    });
  });

  it('a tick without holders: [] and total 0', async () => {
    expect(await ok('inds_getHoldersByTick', [10, 0, 'fantom', 'frc-20', 's4', 2]))
      .toEqual({ holders: [], total: 0, limit: 10, offset: 0 });
  });

  it('an unknown tick (or missing tick params) is -32603 Record not found', async () => {
    for (const params of [[10, 0, 'eth', 'erc-20', 'nope', 2], [10, 0, 'btc', 'erc-20', 'alpha'], [10, 0, 'eth', 'erc-20'], []]) {
      const e = await fails('inds_getHoldersByTick', params);
      expect(e.code).toBe(-32603);
      expect(e.message).toBe('Record not found');
    }
    const e = await fails('inds_getHoldersByTick', [10, 0, 'eth', 'erc-20', 'nope', 2]);
    expect(JSON.stringify(e.data)).toContain('nope');
  });
});

// ---- index_getInscriptionByTick ----

describe('index_getInscriptionByTick', () => {
  it('the tick detail, looked up case-insensitively', async () => {
    const t = T.ordi!;
    const expected = {
      chain: 'btc', protocol: 'brc-20', tick: 'ordi', name: 'ordi', limit_per_mint: '1000', deploy_by: BTC_DEPLOYER,
      total_supply: '21000000', deploy_hash: t.deploy_hash, deploy_time: Date.parse(t.deploy_time) / 1000, transfer_type: 0,
      created_at: Date.parse(t.created_at) / 1000, updated_at: 0, decimals: 0,
    };
    for (const params of [['btc', 'brc-20', 'ordi'], ['BTC', 'BRC-20', 'ORDI']]) {
      const r = await ok('index_getInscriptionByTick', params);
      expect(r).toEqual(expected);
      expect(Object.keys(r)).toEqual(Object.keys(expected));
    }
  });

  it('not found → -32603', async () => {
    for (const params of [['btc', 'brc-20', 'nope'], ['eth', 'brc-20', 'ordi'], ['btc', 'brc-20', 'ord'], ['btc', 'brc-20'], []]) {
      const e = await fails('index_getInscriptionByTick', params);
      expect([e.code, e.message]).toEqual([-32603, 'Record not found']);
    }
  });
});

// ---- inds_getTransactions ----

describe('inds_getTransactions', () => {
  it('sortmode 2 (default) newest first by (block_height, position_in_block), the id breaking ties; 1 oldest first', async () => {
    const desc = await ok('inds_getTransactions', [1000, 0, '', '', '', '', 2]);
    expect(desc.data.map((x: any) => x.tx_hash)).toEqual(transactionsOf({}, 'DESC'));
    const asc = await ok('inds_getTransactions', [1000, 0, '', '', '', '', 1]);
    expect(asc.data.map((x: any) => x.tx_hash)).toEqual(transactionsOf({}, 'ASC'));
    expect(await ok('inds_getTransactions', [1000, 0])).toEqual(desc);
    expect(await ok('inds_getTransactions', [1000, 0, null, null, null, null, null])).toEqual(desc);
    expect(await ok('inds_getTransactions', [1000, 0, '', '', '', '', 0])).toEqual(desc);
    expect(desc.total).toBe(f.data.transactions.length);
  });

  it('result members: data, total, limit, offset, code 0, msg 0; entries with real ids', async () => {
    const r = await ok('inds_getTransactions', [3, 1, '', '', '', '', 1]);
    expect(Object.keys(r)).toEqual(['data', 'total', 'limit', 'offset', 'code', 'msg']);
    expect([r.total, r.limit, r.offset, r.code, r.msg]).toEqual([f.data.transactions.length, 3, 1, 0, 0]);
    const hash = transactionsOf({}, 'ASC')[1]!;
    const x = f.data.transactions.find((t) => t.tx_hash === hash)!;
    expect(r.data[0]).toEqual({
      id: txIds.get(hash), chain: x.chain, protocol: x.protocol, block_height: x.block_height, position_in_block: x.position_in_block,
      block_time: x.block_time.replace(/\.\d{3}Z$/, 'Z'), tx_hash: x.tx_hash, from: x.from_address, to: x.to_address, op: x.op,
      tick: x.tick, amt: x.amt, gas: x.gas, gas_price: x.gas_price, status: x.status,
      created_at: x.created_at.replace(/\.\d{3}Z$/, 'Z'), updated_at: x.updated_at.replace(/\.\d{3}Z$/, 'Z'),
    });
  });

  it('address matches sender OR recipient, case-insensitively; every filter honoured; real total', async () => {
    const cases: { address?: string; chain?: string; protocol?: string; tick?: string }[] = [
      { address: alice }, { address: lower(alice) }, { address: upperHex(alice) }, { address: otherDeployer }, { address: carol, chain: 'BSC' },
      { chain: 'ETH' }, { protocol: 'ASC-20' }, { tick: 'ALPHA' }, { chain: 'eth', protocol: 'erc-20', tick: 'alpha' },
      { address: alice, tick: 'alpha' }, { address: bob, chain: 'avalanche', protocol: 'asc-20' }, { chain: 'btc' },
      { tick: 'a%b' }, { tick: 'a%' }, { chain: 'arbitrum' }, { address: '0x0000000000000000000000000000000000000bad' },
    ];
    for (const c of cases) {
      for (const mode of [1, 2]) {
        const expected = transactionsOf(c, mode === 1 ? 'ASC' : 'DESC');
        const r = await ok('inds_getTransactions', [1000, 0, c.address ?? '', c.chain ?? '', c.protocol ?? '', c.tick ?? '', mode]);
        expect(r.data.map((x: any) => x.tx_hash), JSON.stringify(c)).toEqual(expected);
        expect(r.total, JSON.stringify(c)).toBe(expected.length);
        expect([r.code, r.msg]).toEqual([0, 0]);
      }
    }
    // A is the recipient of one non-inscription transaction and the sender of another
    const a = await ok('inds_getTransactions', [1000, 0, alice, 'eth', '', '', 2]);
    expect(a.data.some((x: any) => lower(x.to) === lower(alice) && lower(x.from) !== lower(alice))).toBe(true);
    expect(a.data.some((x: any) => lower(x.from) === lower(alice) && lower(x.to) !== lower(alice))).toBe(true);
  });

  it('pages with filters keep the order and the total', async () => {
    const expected = transactionsOf({ chain: 'eth' }, 'ASC');
    const got: string[] = [];
    for (let offset = 0; offset < expected.length; offset += 3) {
      const r = await ok('inds_getTransactions', [3, offset, '', 'eth', '', '', 1]);
      expect(r.total).toBe(expected.length);
      got.push(...r.data.map((x: any) => x.tx_hash));
    }
    expect(got).toEqual(expected);
  });
});

// ---- inds_getTickBriefs ----

describe('inds_getTickBriefs', () => {
  it('one brief per matching selector, in selector order; unknown selectors left out; real ids', async () => {
    const selectors = [
      { chain: 'AVALANCHE', deploy_hash: T.avaxAlpha!.deploy_hash.toUpperCase().replace('0X', '0x') },
      { chain: 'eth', deploy_hash: '0xdeadbeef' },
      { chain: 'eth', deploy_hash: T.ordi!.deploy_hash }, // right hash, wrong chain
      { chain: 'btc', deploy_hash: T.ordi!.deploy_hash.toUpperCase() },
      { chain: 'eth', deploy_hash: T.ethAlpha!.deploy_hash },
    ];
    const r = await ok('inds_getTickBriefs', [selectors]);
    expect(Object.keys(r)).toEqual(['inscriptions']);
    expect(r.inscriptions.map(tkey)).toEqual(['avalanche/asc-20/alpha', 'btc/brc-20/ordi', 'eth/erc-20/alpha']);
    expect(r.inscriptions.map((b: any) => b.id)).toEqual([idOf(T.avaxAlpha!), idOf(T.ordi!), idOf(T.ethAlpha!)]);
    const brief = r.inscriptions[2];
    expect(Object.keys(brief)).toEqual([
      'id', 'chain', 'protocol', 'tick', 'name', 'limit_per_mint', 'deploy_by', 'total_supply', 'deploy_hash', 'deploy_time',
      'transfer_type', 'created_at', 'updated_at', 'decimals', 'holders', 'minted', 'tx_cnt', 'progress',
    ]);
    expect(brief).toMatchObject({ holders: 6, minted: '800', tx_cnt: 10, progress: '0.0008', deploy_by: deployer });
  });

  it('an empty selector list, missing params and no match: an empty list', async () => {
    expect(await ok('inds_getTickBriefs', [[]])).toEqual({ inscriptions: [] });
    expect(await ok('inds_getTickBriefs', [])).toEqual({ inscriptions: [] });
    expect(await ok('inds_getTickBriefs', [null])).toEqual({ inscriptions: [] });
    expect(await ok('inds_getTickBriefs', [[{ chain: 'eth', deploy_hash: '0x00' }]])).toEqual({ inscriptions: [] });
  });

  it('a selector repeated is answered each time, in place', async () => {
    const s = { chain: 'eth', deploy_hash: T.ethBeta!.deploy_hash };
    const o = { chain: 'btc', deploy_hash: T.ordi!.deploy_hash };
    const r = await ok('inds_getTickBriefs', [[s, o, s]]);
    expect(r.inscriptions.map((b: any) => b.tick)).toEqual(['beta', 'ordi', 'beta']);
  });
});

// ---- inds_getAllChains / inds_getAllChain ----

describe('inds_getAllChains', () => {
  const order = ['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc'];

  it('[] lists every chain in display order, as a bare array', async () => {
    const r = await ok('inds_getAllChains', [[]]);
    expect(Array.isArray(r)).toBe(true);
    expect(r.map((c: any) => c.chain)).toEqual(order);
    expect(await ok('inds_getAllChains', [])).toEqual(r);
    expect(await ok('inds_getAllChains', [null])).toEqual(r);
    expect(await ok('inds_getAllChain', [[]])).toEqual(r);
  });

  it('a named subset (case-insensitive, unknown names left out) keeps the display order', async () => {
    const r = await ok('inds_getAllChains', [['btc', 'ETH', 'nochain', 'Fantom']]);
    expect(r.map((c: any) => c.chain)).toEqual(['eth', 'fantom', 'btc']);
    expect(await ok('inds_getAllChain', [['btc', 'ETH', 'nochain', 'Fantom']])).toEqual(r);
    expect(await ok('inds_getAllChains', [['nochain']])).toEqual([]);
  });

  it('an indexed chain carries its block; one with no indexed block has "0" and zero times', async () => {
    const [eth, btc] = await ok('inds_getAllChains', [['eth', 'btc']]);
    expect(eth).toEqual({
      chain_id: 1, chain: 'eth', outer_chain: 'eth', name: 'Ethereum', logo: 'https://s3.indexs.io/chain/icon/eth.png',
      network_id: 1, ext: '', block_number: '19319706', block_time: '2024-02-27T15:12:23Z', timestamp: '2024-02-27T15:14:28Z',
    });
    expect(btc).toMatchObject({ chain: 'btc', chain_id: 0, block_number: '0', block_time: '0001-01-01T00:00:00Z', timestamp: '0001-01-01T00:00:00Z' });
    expect(Object.keys(btc)).toEqual(Object.keys(eth));
  });
});
