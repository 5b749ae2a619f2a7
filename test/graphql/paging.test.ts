import { describe, expect, it } from 'vitest';
import type { TransactionInput } from '../../src/db/load.js';
import { useDatabase, useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { alice, fakeHash, Fixture } from '../support/fixtures.js';

// Relay connections: cursor walks in both directions, offsets, page-size limits, page info, argument
// errors, and totalCount against real counts.

const addr = (n: number) => `0x${n.toString(16).padStart(4, '0')}Ab${'0'.repeat(34)}`;
const H = Array.from({ length: 7 }, (_, i) => addr(0x100 + i));
const E = Array.from({ length: 6 }, (_, i) => addr(0x200 + i));
const D1 = '0xD1d1000000000000000000000000000000000001';
const D2 = '0xd2D2000000000000000000000000000000000002';
const chains4 = ['eth', 'bsc', 'avalanche', 'polygon'];

let f: Fixture;

const db = useDatabase({
  load: async (db) => {
    f = new Fixture();
    const base = Date.UTC(2024, 0, 1) / 1000;
    const ticks = Array.from({ length: 24 }, (_, i) => f.tick({
      chain: chains4[i % 4]!, protocol: i % 3 === 0 ? 'x-20' : 'y-20', tick: `t${i}`, deploy_by: i % 2 ? D1 : D2,
      total_supply: '1000', limit_per_mint: '100',
      // groups of three ticks share a deploy time
      deploy_time: new Date((base + Math.floor(i / 3) * 3600) * 1000).toISOString(),
    }));
    const dupEth = f.tick({ chain: 'eth', protocol: 'x-20', tick: 'dup' });
    const dupBsc = f.tick({ chain: 'bsc', protocol: 'y-20', tick: 'dup' });
    const wide = f.tick({ chain: 'eth', protocol: 'y-20', tick: 'wide', total_supply: '100000' });
    ticks.forEach((t, i) => {
      for (let j = 0; j < i % 5; j++) f.mint(t, H[(i + j) % 7]!, String(10 * (j + 1)));
      if (i < 15) f.mint(t, alice, String(5 * ((i % 4) + 1)));
      if (i < 15 && i % 4 === 1) f.transfer(t, alice, H[0]!, '1');
    });
    f.mint(dupEth, alice, '7').mint(dupBsc, H[1]!, '7');
    // 13 holders of one tick, in groups of equal balances
    [...H, ...E].forEach((a, k) => f.mint(wide, a, String(100 * ((k % 4) + 1))));
    f.transfer(wide, H[2]!, alice, '50');
    const raw = (spec: Partial<TransactionInput> & Pick<TransactionInput, 'chain' | 'block_height' | 'position_in_block'>) => {
      const at = '2024-02-01T00:00:00.000Z';
      f.data.transactions.push({
        protocol: '', tick: '', op: '', amt: '0', block_time: at, tx_hash: fakeHash(), from_address: alice, to_address: H[1]!,
        gas: 21000, gas_price: 1, status: 1, created_at: at, updated_at: at, ...spec,
      });
    };
    raw({ chain: 'eth', block_height: 1_000_010, position_in_block: 2 });
    raw({ chain: 'bsc', block_height: 1_000_010, position_in_block: 2, from_address: H[0]!, to_address: alice });
    raw({ chain: 'eth', block_height: 900_000, position_in_block: 0, from_address: H[2]!, to_address: H[3]! });
    await f.load(db.sql);
  },
});
const gw = useGateway({ db });
const gwSmall = useGateway({ db, config: { MAX_PAGE_SIZE: 5 } });

// ---- helpers ----------------------------------------------------------------------------------

interface Conn {
  totalCount?: number;
  edges: { cursor: string; node: any }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

interface ListSpec {
  name: string;
  /** A document with the paging arguments spliced in where `ARGS` stands. */
  doc: string;
  pick: (data: any) => Conn;
  key: (node: any) => string;
  hasTotal: boolean;
}

const VARS = '$first: Int, $after: String, $last: Int, $before: String, $offset: Int';
const ARGS = 'first: $first, after: $after, last: $last, before: $before, offset: $offset';
const PAGE = 'edges { cursor node { ...N } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

function list(name: string, body: string, path: string[], fragment: string, key: (n: any) => string, hasTotal = true): ListSpec {
  const conn = `${hasTotal ? 'totalCount ' : ''}${PAGE}`;
  return {
    name,
    doc: `query(${VARS}) { ${body.replace('ARGS', ARGS).replace('CONN', conn)} } ${fragment}`,
    pick: (data) => path.reduce((o, p) => o[p], data),
    key,
    hasTotal,
  };
}

interface PageArgs { first?: number | null; after?: string | null; last?: number | null; before?: string | null; offset?: number | null }

async function page(spec: ListSpec, args: PageArgs, base = gw.base): Promise<Conn> {
  const res = await gqlJson(base, spec.doc, { first: null, after: null, last: null, before: null, offset: null, ...args });
  expect(res.errors, `${spec.name} ${JSON.stringify(args)}`).toBeUndefined();
  return spec.pick(res.data);
}

async function errorOf(spec: ListSpec, args: PageArgs) {
  const res = await gqlJson(gw.base, spec.doc, { first: null, after: null, last: null, before: null, offset: null, ...args });
  expect(res.errors, `${spec.name} ${JSON.stringify(args)} should fail`).toBeDefined();
  return res.errors![0]!;
}

const keysOf = (spec: ListSpec, c: Conn) => c.edges.map((e) => spec.key(e.node));

async function full(spec: ListSpec) {
  const c = await page(spec, { first: 1000 });
  expect(c.pageInfo.hasNextPage).toBe(false);
  expect(c.pageInfo.hasPreviousPage).toBe(false);
  const keys = keysOf(spec, c);
  expect(new Set(keys).size, `${spec.name}: keys are unique`).toBe(keys.length);
  if (spec.hasTotal) expect(c.totalCount).toBe(keys.length);
  return { conn: c, keys };
}

async function walkForward(spec: ListSpec, size: number, expected: string[]) {
  const seen: string[] = [];
  let after: string | null = null;
  for (let n = 0; n < 1000; n++) {
    const c = await page(spec, { first: size, after });
    if (spec.hasTotal) expect(c.totalCount).toBe(expected.length);
    expect(c.pageInfo.hasPreviousPage, `${spec.name} page ${n}`).toBe(n > 0);
    expect(c.pageInfo.startCursor).toBe(c.edges[0]?.cursor ?? null);
    expect(c.pageInfo.endCursor).toBe(c.edges.at(-1)?.cursor ?? null);
    seen.push(...keysOf(spec, c));
    if (!c.pageInfo.hasNextPage) {
      expect(c.edges.length).toBeLessThanOrEqual(size);
      break;
    }
    expect(c.edges).toHaveLength(size);
    after = c.pageInfo.endCursor;
  }
  expect(seen, `${spec.name}: forward walk by ${size}`).toEqual(expected);
}

async function walkBackward(spec: ListSpec, size: number, expected: string[]) {
  const seen: string[] = [];
  let before: string | null = null;
  for (let n = 0; n < 1000; n++) {
    const c = await page(spec, { last: size, before });
    if (spec.hasTotal) expect(c.totalCount).toBe(expected.length);
    expect(c.pageInfo.hasNextPage, `${spec.name} page -${n}`).toBe(n > 0);
    expect(c.pageInfo.startCursor).toBe(c.edges[0]?.cursor ?? null);
    expect(c.pageInfo.endCursor).toBe(c.edges.at(-1)?.cursor ?? null);
    seen.unshift(...keysOf(spec, c));
    if (!c.pageInfo.hasPreviousPage) break;
    expect(c.edges).toHaveLength(size);
    before = c.pageInfo.startCursor;
  }
  expect(seen, `${spec.name}: backward walk by ${size}`).toEqual(expected);
}

const tickOrders = ['ID', 'DEPLOY_TIME', 'PROGRESS', 'HOLDERS', 'TX_COUNT'];
const tickList = (order: string, direction: string, filter = '') =>
  list(`ticks ${order} ${direction} ${filter}`, `ticks(ARGS, orderBy: ${order}, direction: ${direction} ${filter}) { CONN }`,
    ['ticks'], 'fragment N on Tick { id: recordId }', (n) => n.id);

const lists: ListSpec[] = [
  ...tickOrders.flatMap((o) => ['ASC', 'DESC'].map((d) => tickList(o, d))),
  tickList('HOLDERS', 'DESC', ', chain: "ETH"'),
  tickList('DEPLOY_TIME', 'ASC', ', protocol: "y-20"'),
  list('transactions DESC', 'transactions(ARGS) { CONN }', ['transactions'], 'fragment N on Transaction { id: recordId }', (n) => n.id),
  list('transactions ASC', 'transactions(ARGS, direction: ASC) { CONN }', ['transactions'], 'fragment N on Transaction { id: recordId }', (n) => n.id),
  list('transactions of W', `transactions(ARGS, address: "${alice.toLowerCase()}") { CONN }`, ['transactions'], 'fragment N on Transaction { id: recordId }', (n) => n.id),
  list('balances of W', `balances(ARGS, address: "${alice}") { CONN }`, ['balances'], 'fragment N on Balance { tick { id: recordId } }', (n) => n.tick.id),
  list('balances of W ASC', `balances(ARGS, address: "${alice}", direction: ASC) { CONN }`, ['balances'], 'fragment N on Balance { tick { id: recordId } }', (n) => n.tick.id),
  list('movements of W', `addressTransactions(ARGS, address: "${alice}") { CONN }`, ['addressTransactions'], 'fragment N on AddressTransaction { id: recordId }', (n) => n.id),
  list('movements of H0 ASC', `addressTransactions(ARGS, address: "${H[0]}", direction: ASC) { CONN }`, ['addressTransactions'], 'fragment N on AddressTransaction { id: recordId }', (n) => n.id),
  list('holders of wide', 'tick(chain: "eth", protocol: "y-20", tick: "wide") { holders(ARGS) { CONN } }', ['tick', 'holders'], 'fragment N on Holder { address }', (n) => n.address),
  list('holders of wide ASC', 'tick(chain: "eth", protocol: "y-20", tick: "wide") { holders(ARGS, direction: ASC) { CONN } }', ['tick', 'holders'], 'fragment N on Holder { address }', (n) => n.address),
  list('transactions of wide', 'tick(chain: "eth", protocol: "y-20", tick: "wide") { transactions(ARGS) { CONN } }', ['tick', 'transactions'], 'fragment N on Transaction { id: recordId }', (n) => n.id),
  list('ticks of eth by holders', 'chain(name: "eth") { ticks(ARGS, orderBy: HOLDERS) { CONN } }', ['chain', 'ticks'], 'fragment N on Tick { id: recordId }', (n) => n.id),
  list('ticks of bsc by deploy time', 'chain(name: "bsc") { ticks(ARGS, orderBy: DEPLOY_TIME, direction: ASC) { CONN } }', ['chain', 'ticks'], 'fragment N on Tick { id: recordId }', (n) => n.id),
];

// ---- walks ------------------------------------------------------------------------------------

describe('cursor walks', () => {
  for (const spec of lists) {
    it(`${spec.name}: first/after and last/before walk the whole list`, async () => {
      const { keys } = await full(spec);
      expect(keys.length, 'the list has several pages').toBeGreaterThan(6);
      // page sizes that divide the list and ones that do not; single rows only where the list is short
      for (const size of keys.length <= 30 ? [1, 4] : [3, 7]) {
        await walkForward(spec, size, keys);
        await walkBackward(spec, size, keys);
      }
      // an exact multiple of the page size: the last page still says there is nothing after it
      await walkForward(spec, keys.length, keys);
      await walkBackward(spec, keys.length, keys);
    });
  }

  it('cursors of a backward page continue forwards and vice versa', async () => {
    const spec = tickList('HOLDERS', 'DESC');
    const { keys } = await full(spec);
    const tail = await page(spec, { last: 5 });
    expect(keysOf(spec, tail)).toEqual(keys.slice(-5));
    const mid = await page(spec, { first: 3, after: (await page(spec, { first: 4 })).pageInfo.endCursor });
    expect(keysOf(spec, mid)).toEqual(keys.slice(4, 7));
    const back = await page(spec, { last: 2, before: mid.pageInfo.startCursor });
    expect(keysOf(spec, back)).toEqual(keys.slice(2, 4));
    expect(back.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const fwd = await page(spec, { first: 2, after: back.pageInfo.endCursor });
    expect(keysOf(spec, fwd)).toEqual(keys.slice(4, 6));
  });
});

// ---- offsets and sizes ------------------------------------------------------------------------

describe('offset and page sizes', () => {
  const ticksById = tickList('ID', 'ASC');
  const txs = lists.find((l) => l.name === 'transactions DESC')!;
  const holders = lists.find((l) => l.name === 'holders of wide')!;

  for (const spec of [ticksById, txs, holders]) {
    it(`${spec.name}: offset alone skips rows from the start`, async () => {
      const { keys } = await full(spec);
      const c = await page(spec, { first: 5, offset: 7 });
      expect(keysOf(spec, c)).toEqual(keys.slice(7, 12));
      expect(c.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: keys.length > 12 });
      if (spec.hasTotal) expect(c.totalCount).toBe(keys.length);
      const rest = await page(spec, { first: 1000, offset: keys.length - 2 });
      expect(keysOf(spec, rest)).toEqual(keys.slice(-2));
      expect(rest.pageInfo.hasNextPage).toBe(false);
      const beyond = await page(spec, { first: 5, offset: keys.length + 10 });
      expect(beyond.edges).toEqual([]);
      expect(beyond.pageInfo).toMatchObject({ hasNextPage: false, startCursor: null, endCursor: null });
      const zero = await page(spec, { first: 5, offset: 0 });
      expect(keysOf(spec, zero)).toEqual(keys.slice(0, 5));
      expect(zero.pageInfo.hasPreviousPage).toBe(false);
    });

    it(`${spec.name}: offset after a cursor skips rows after that cursor`, async () => {
      const { conn, keys } = await full(spec);
      const c = await page(spec, { first: 4, after: conn.edges[3]!.cursor, offset: 2 });
      expect(keysOf(spec, c)).toEqual(keys.slice(6, 10));
      expect(c.pageInfo.hasPreviousPage).toBe(true);
      // walking on from there continues without gaps
      const next = await page(spec, { first: 3, after: c.pageInfo.endCursor });
      expect(keysOf(spec, next)).toEqual(keys.slice(10, 13));
    });

    it(`${spec.name}: first: 0 gives no edges but the right totalCount`, async () => {
      const { keys } = await full(spec);
      const c = await page(spec, { first: 0 });
      expect(c.edges).toEqual([]);
      expect(c.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null });
      if (spec.hasTotal) expect(c.totalCount).toBe(keys.length);
    });
  }

  it('first: 0 on an empty list has no next page', async () => {
    const res = await gqlJson(gw.base, `{ ticks(first: 0, chain: "fantom") { totalCount edges { cursor } pageInfo { hasNextPage hasPreviousPage } } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data.ticks).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false } });
  });

  it('without first/last the default page size applies', async () => {
    const { keys } = await full(ticksById);
    const c = await page(ticksById, {});
    expect(keysOf(ticksById, c)).toEqual(keys.slice(0, 10));
    expect(c.pageInfo.hasNextPage).toBe(true);
  });

  it('first/last above MAX_PAGE_SIZE are clamped to it (top level and nested)', async () => {
    for (const spec of [ticksById, txs, holders, lists.find((l) => l.name === 'ticks of eth by holders')!]) {
      const { keys } = await full(spec);
      const c = await page(spec, { first: 50 }, gwSmall.base);
      expect(keysOf(spec, c), spec.name).toEqual(keys.slice(0, 5));
      expect(c.pageInfo.hasNextPage).toBe(true);
      if (spec.hasTotal) expect(c.totalCount).toBe(keys.length);
      const back = await page(spec, { last: 50 }, gwSmall.base);
      expect(keysOf(spec, back), spec.name).toEqual(keys.slice(-5));
      expect(back.pageInfo.hasPreviousPage).toBe(true);
      // the default page size (10) is clamped too
      const dflt = await page(spec, {}, gwSmall.base);
      expect(keysOf(spec, dflt), spec.name).toEqual(keys.slice(0, 5));
      // walking with the clamped size still covers the list exactly
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const p = await page(spec, { first: 1000, after }, gwSmall.base);
        seen.push(...keysOf(spec, p));
        if (!p.pageInfo.hasNextPage) break;
        expect(p.edges).toHaveLength(5);
        after = p.pageInfo.endCursor;
      }
      expect(seen).toEqual(keys);
    }
  });
});

// ---- argument errors --------------------------------------------------------------------------

describe('argument errors', () => {
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  const ticksHolders = tickList('HOLDERS', 'DESC');
  const ticksDeploy = tickList('DEPLOY_TIME', 'ASC');
  const ticksId = tickList('ID', 'DESC');
  const ticksProgress = tickList('PROGRESS', 'DESC');
  const txs = lists.find((l) => l.name === 'transactions DESC')!;
  const balances = lists.find((l) => l.name === 'balances of W')!;
  const holders = lists.find((l) => l.name === 'holders of wide')!;
  const chainTicks = lists.find((l) => l.name === 'ticks of eth by holders')!;

  const expectBadInput = async (spec: ListSpec, args: PageArgs) => {
    const error = await errorOf(spec, args);
    expect(error.extensions?.code, `${spec.name} ${JSON.stringify(args)}: ${error.message}`).toBe('BAD_USER_INPUT');
    return error;
  };

  it('a page reads one way: first goes with after, last with before', async () => {
    const first = await page(ticksId, { first: 2 });
    const cursor = first.edges[1]!.cursor;
    expect((await expectBadInput(ticksId, { first: 2, before: cursor })).message).toMatch(/before.*last/);
    expect((await expectBadInput(ticksId, { last: 2, after: cursor })).message).toMatch(/after.*first/);
  });

  it('a backward page skipped by offset knows rows follow it', async () => {
    const all = await page(ticksId, { first: 1000 });
    const back = await page(ticksId, { last: 2, offset: 1 });
    expect(back.edges.map((e) => e.cursor)).toEqual(all.edges.slice(-3, -1).map((e) => e.cursor));
    expect(back.pageInfo.hasNextPage).toBe(true);
  });

  it('malformed cursors are BAD_USER_INPUT', async () => {
    for (const spec of [ticksHolders, txs, balances, holders, chainTicks]) {
      for (const cursor of ['not a cursor!', '', b64('not json'), b64({ a: 1 }), b64([]), b64([1, 2]), b64(null), b64(['x', 'y', 'z', 'w'])]) {
        await expectBadInput(spec, { first: 2, after: cursor });
        await expectBadInput(spec, { last: 2, before: cursor });
      }
    }
  });

  it('cursors with values out of their type\'s range are BAD_USER_INPUT', async () => {
    await expectBadInput(ticksId, { first: 2, after: b64(['9999999999999999999']) }); // > bigint
    await expectBadInput(ticksHolders, { first: 2, after: b64(['1', '-9999999999999999999']) });
    await expectBadInput(txs, { first: 2, after: b64(['1', '99999999999999999999', '1']) }); // position > bigint (sql/019)
    await expectBadInput(ticksDeploy, { first: 2, after: b64(['2024-13-45T99:00:00.000Z', '1']) });
    await expectBadInput(ticksDeploy, { first: 2, after: b64(['Tue Mar 01 2001', '1']) });
  });

  it('a cursor of another order or list is BAD_USER_INPUT', async () => {
    const cursorOf = async (spec: ListSpec) => (await page(spec, { first: 3 })).pageInfo.endCursor!;
    const id = await cursorOf(ticksId);
    const holdersOrder = await cursorOf(ticksHolders);
    const deploy = await cursorOf(ticksDeploy);
    const progress = await cursorOf(ticksProgress);
    const tx = await cursorOf(txs);
    const holder = await cursorOf(holders);
    await expectBadInput(ticksHolders, { first: 2, after: id }); // one value where two are needed
    await expectBadInput(ticksId, { first: 2, after: holdersOrder }); // two values where one is needed
    await expectBadInput(ticksHolders, { first: 2, after: deploy }); // a time where a count is needed
    await expectBadInput(ticksHolders, { first: 2, after: progress }); // a fraction where a count is needed
    await expectBadInput(ticksDeploy, { first: 2, after: holdersOrder }); // a count where a time is needed
    await expectBadInput(ticksDeploy, { first: 2, after: progress });
    await expectBadInput(ticksId, { first: 2, after: tx }); // another list
    await expectBadInput(txs, { first: 2, after: id });
    await expectBadInput(balances, { first: 2, after: holder }); // an address where a tick id is needed
    await expectBadInput(chainTicks, { last: 2, before: deploy });
  });

  it('negative first, last or offset are BAD_USER_INPUT', async () => {
    for (const spec of [ticksId, txs, balances, holders, chainTicks]) {
      await expectBadInput(spec, { first: -1 });
      await expectBadInput(spec, { last: -1 });
      await expectBadInput(spec, { first: 2, offset: -1 });
      await expectBadInput(spec, { offset: -5 });
    }
  });

  it('first and last together, or after and before together, are errors', async () => {
    const { conn } = await full(ticksId);
    for (const spec of [ticksId, txs, holders]) {
      const e = await expectBadInput(spec, { first: 2, last: 2 });
      expect(e.message).toMatch(/first.*last/);
    }
    await expectBadInput(ticksId, { first: 2, after: conn.edges[1]!.cursor, before: conn.edges[5]!.cursor });
  });

  it('an error in a nested connection is BAD_USER_INPUT at its path', async () => {
    const res = await gqlJson(gw.base, `{ ticks(first: 2) { edges { node { tick holders(first: -1) { totalCount } } } } }`);
    expect(res.errors?.length).toBeGreaterThan(0);
    for (const e of res.errors!) expect(e.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors!.map((e: any) => e.path)).toContainEqual(['ticks', 'edges', 0, 'node', 'holders']);
  });
});

// ---- totals -----------------------------------------------------------------------------------

describe('totalCount equals the real count', () => {
  const lit = (v: string | null) => (v === null ? 'null' : JSON.stringify(v));
  /** Runs many fields as aliases c0, c1, … a few per document (the gateway limits aliases and tokens). */
  async function inChunks(fields: string[], size = 14) {
    const data: Record<string, any> = {};
    for (let start = 0; start < fields.length; start += size) {
      const doc = fields.slice(start, start + size).map((field, k) => `c${start + k}: ${field}`).join('\n');
      const res = await gqlJson(gw.base, `{ ${doc} }`);
      expect(res.errors, doc).toBeUndefined();
      Object.assign(data, res.data);
    }
    return { data };
  }

  it('for every filter combination of ticks', async () => {
    const combos: [string | null, string | null, string | null, string | null][] = [];
    for (const chain of [null, 'eth', 'BSC', 'polygon', 'fantom', 'nope'])
      for (const protocol of [null, 'x-20', 'Y-20', 'nope'])
        for (const tick of [null, 't1', 'T6', 'dup', 'nope'])
          for (const deployBy of [null, D1, D2.toUpperCase().replace('0X', '0x'), 'nope']) combos.push([chain, protocol, tick, deployBy]);
    const res = await inChunks(combos.map(([c, p, t, d]) =>
      `ticks(first: 1, chain: ${lit(c)}, protocol: ${lit(p)}, tick: ${lit(t)}, deployBy: ${lit(d)}) { totalCount edges { node { recordId } } }`));
    const rows = combos.map(([chain, protocol, tick, deploy_by], i) => ({ i, chain, protocol, tick, deploy_by }));
    const counts = await db.sql<{ i: number; n: string }[]>`
      SELECT c.i, (SELECT count(*) FROM ticks
                    WHERE (c.chain IS NULL OR chain = lower(c.chain)) AND (c.protocol IS NULL OR protocol = lower(c.protocol))
                      AND (c.tick IS NULL OR tick = lower(c.tick)) AND (c.deploy_by IS NULL OR lower(deploy_by) = lower(c.deploy_by))) AS n
        FROM jsonb_to_recordset(${db.sql.json(rows as never)}::jsonb) AS c (i int, chain text, protocol text, tick text, deploy_by text)
       ORDER BY c.i`;
    expect(counts).toHaveLength(combos.length);
    let nonZero = 0;
    for (const { i, n } of counts) {
      const got = res.data[`c${i}`];
      expect(got.totalCount, JSON.stringify(combos[i])).toBe(Number(n));
      expect(got.edges.length).toBe(Math.min(1, Number(n)));
      if (Number(n) > 0) nonZero++;
    }
    expect(nonZero, 'many combinations match something').toBeGreaterThan(40);
  });

  it('for every filter combination of transactions', async () => {
    const combos: [string | null, string | null, string | null, string | null][] = [];
    for (const address of [null, alice, H[0]!.toUpperCase().replace('0X', '0x'), 'nope'])
      for (const chain of [null, 'eth', 'BSC', 'fantom'])
        for (const protocol of [null, 'x-20', 'Y-20', '', 'nope'])
          for (const tick of [null, 't1', 'DUP', 'wide', '', 'nope']) combos.push([address, chain, protocol, tick]);
    const res = await inChunks(combos.map(([a, c, p, t]) =>
      `transactions(first: 1, address: ${lit(a)}, chain: ${lit(c)}, protocol: ${lit(p)}, tick: ${lit(t)}) { totalCount edges { node { recordId } } }`));
    const rows = combos.map(([address, chain, protocol, tick], i) => ({ i, address, chain, protocol, tick }));
    const counts = await db.sql<{ i: number; n: string }[]>`
      SELECT c.i, (SELECT count(*) FROM transactions
                    WHERE (c.address IS NULL OR lower(from_address) = lower(c.address) OR lower(to_address) = lower(c.address))
                      AND (c.chain IS NULL OR chain = lower(c.chain)) AND (c.protocol IS NULL OR protocol = lower(c.protocol))
                      AND (c.tick IS NULL OR tick = lower(c.tick))) AS n
        FROM jsonb_to_recordset(${db.sql.json(rows as never)}::jsonb) AS c (i int, address text, chain text, protocol text, tick text)
       ORDER BY c.i`;
    expect(counts).toHaveLength(combos.length);
    let nonZero = 0;
    for (const { i, n } of counts) {
      const got = res.data[`c${i}`];
      expect(got.totalCount, JSON.stringify(combos[i])).toBe(Number(n));
      expect(got.edges.length).toBe(Math.min(1, Number(n)));
      if (Number(n) > 0) nonZero++;
    }
    expect(nonZero, 'many combinations match something').toBeGreaterThan(30);
  });

  it('for nested connections and the other lists', async () => {
    const res = await gqlJson(gw.base, `query($w: String!) {
      chains { chain ticks(first: 1) { totalCount } }
      ticks(first: 100) { edges { node { id: recordId holders(first: 1) { totalCount } transactions(first: 1) { totalCount } } } }
      balances(address: $w, first: 1) { totalCount }
      addressTransactions(address: $w, first: 1) { totalCount }
      mints: addressTransactions(address: $w, first: 1, event: MINT) { totalCount }
    }`, { w: alice.toUpperCase().replace('0X', '0x') });
    expect(res.errors).toBeUndefined();
    for (const c of res.data.chains) {
      const [row] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM ticks WHERE chain = ${c.chain}`;
      expect(c.ticks.totalCount, c.chain).toBe(Number(row!.n));
    }
    for (const { node } of res.data.ticks.edges) {
      const [h] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM balances WHERE tick_id = ${node.id} AND balance > 0`;
      const [x] = await db.sql<{ n: string }[]>`
        SELECT count(*) AS n FROM transactions x JOIN ticks t ON (t.chain, t.protocol, t.tick) = (x.chain, x.protocol, x.tick)
         WHERE t.id = ${node.id}`;
      expect(node.holders.totalCount).toBe(Number(h!.n));
      expect(node.transactions.totalCount).toBe(Number(x!.n));
    }
    const [b] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM balances WHERE lower(address) = lower(${alice}) AND balance > 0`;
    const [m] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM address_txs WHERE lower(address) = lower(${alice})`;
    const [mm] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM address_txs WHERE lower(address) = lower(${alice}) AND event = 2`;
    expect(res.data.balances.totalCount).toBe(Number(b!.n));
    expect(res.data.addressTransactions.totalCount).toBe(Number(m!.n));
    expect(res.data.mints.totalCount).toBe(Number(mm!.n));
  });
});
