import { describe, expect, it } from 'vitest';
import type { TickInput } from '../../src/db/load.js';
import { useGateway } from '../support/gateway.js';
import { alice, bob, carol, dave, fakeHash, Fixture } from '../support/fixtures.js';
import { call, post } from '../support/http.js';

// v2 value formats through every method that renders them, on real PostgreSQL:
// exact big and fractional decimals, minted_percent/status/progress at the edges, zero times, unix seconds.

const BIG = '340282366920938463463374607431768211455'; // 2^128 - 1
const TINY = '0.000000000000000001';
const ZERO_TIME = '0001-01-01T00:00:00Z';

const T: Record<string, TickInput> = {};

async function ok(method: string, params: unknown[]): Promise<any> {
  const reply = await call(gw.base, method, params);
  expect(reply.error, `${method} ${JSON.stringify(params)}`).toBeUndefined();
  return reply.result;
}

const brief = async (t: TickInput) => (await ok('inds_getTickBriefs', [[{ chain: t.chain, deploy_hash: t.deploy_hash }]])).inscriptions[0];
const listEntry = async (t: TickInput) => (await ok('inds_getTicks', [10, 0, t.chain, t.protocol, t.tick])).inscriptions[0];

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const tick = (tick: string, spec: Partial<TickInput> = {}) =>
      (T[tick] = f.tick({ chain: 'eth', protocol: 'erc-20', tick, total_supply: '1000', ...spec }));

    tick('big', { total_supply: BIG, limit_per_mint: BIG });
    f.mint(T.big!, alice, BIG);
    tick('dec', {
      chain: 'avalanche', protocol: 'asc-20', decimals: 18, total_supply: '21000000.000000000000000000', limit_per_mint: '1000.500',
      updated_at: '2024-02-27T15:12:23.789Z', deploy_time: '2024-01-02T03:04:05.999Z', created_at: '2024-01-02T03:04:06.001Z',
    });
    for (const [address, balance] of [[alice, TINY], [bob, '1.5'], [carol, '5.000'], [dave, '10']] as const) {
      f.data.balances.push({ chain: 'avalanche', protocol: 'asc-20', tick: 'dec', address, balance, available: balance });
    }
    f.data.movements.push({
      chain: 'avalanche', protocol: 'asc-20', tick: 'dec', address: alice, tx_hash: fakeHash(), amount: TINY, event: 2,
      operate: 'mint', created_at: '2024-03-01T00:00:00.999Z', updated_at: '2024-03-02T00:00:00.000Z',
    });
    f.data.transactions.push({
      chain: 'avalanche', protocol: 'asc-20', block_height: 2 ** 40, position_in_block: 7, block_time: '2024-03-01T00:00:00.999Z',
      tx_hash: fakeHash(), from_address: alice, to_address: alice, op: 'mint', tick: 'dec', amt: '1.50', gas: 22248, gas_price: 26500000000,
      status: 1, created_at: '2024-03-01T00:00:01.000Z', updated_at: '2024-03-01T00:00:02.500Z',
    });
    f.data.transactions.push({
      chain: 'avalanche', protocol: 'asc-20', block_height: 2 ** 40, position_in_block: 8, block_time: '2024-03-01T00:00:00Z',
      tx_hash: fakeHash(), from_address: bob, to_address: alice, op: 'transfer', tick: 'dec', amt: BIG, gas: 0, gas_price: 0,
      status: 0, created_at: '2024-03-01T00:00:00Z', updated_at: '2024-03-01T00:00:00Z',
    });

    tick('p0');
    tick('p50');
    f.mint(T.p50!, alice, '500');
    tick('p100', { transfer_type: 1 });
    f.mint(T.p100!, alice, '400').mint(T.p100!, bob, '600');
    tick('pover', { transfer_type: 2 });
    f.mint(T.pover!, alice, '1000').mint(T.pover!, bob, '500');
    tick('p9999', { total_supply: '100000' });
    f.mint(T.p9999!, alice, '99999');
    tick('pthird', { total_supply: '3' });
    f.mint(T.pthird!, alice, '1');
    tick('ptiny', { total_supply: BIG });
    f.mint(T.ptiny!, alice, '1');
    tick('pzero', { total_supply: '0' });

    f.block('eth', '19319706', '2024-02-27T15:12:23.456Z', '2024-02-27T15:14:28.999Z');
    f.block('arbitrum', '123456789012345678901234567890', '2024-02-23T11:44:17Z', '2024-02-23T11:44:22Z');
    await f.load(db.sql);
  },
});

describe('decimals: exact, plain notation, trailing zeros trimmed', () => {
  it('an amount above 2^64 round-trips exactly in every method that renders it', async () => {
    const t = await listEntry(T.big!);
    expect([t.total_supply, t.limit_per_mint, t.minted]).toEqual([BIG, BIG, BIG]);
    const holders = await ok('inds_getHoldersByTick', [10, 0, 'eth', 'erc-20', 'big']);
    expect(holders.holders[0]).toMatchObject({ address: alice, balance: BIG, total_supply: BIG });
    const balances = await ok('inds_getBalancesByAddress', [10, 0, alice, 'eth', '', 'big', '', 2]);
    expect(balances.inscriptions[0].balance).toBe(BIG);
    const moves = await ok('inds_getTransactionByAddress', [10, 0, alice, '', '', 'big', 2]);
    expect(moves.transactions[0].amount).toBe(BIG);
    expect((await brief(T.big!))).toMatchObject({ total_supply: BIG, limit_per_mint: BIG, minted: BIG });
    expect((await ok('index_getInscriptionByTick', ['eth', 'erc-20', 'big'])).total_supply).toBe(BIG);
    const txs = await ok('inds_getTransactions', [10, 0, bob, 'avalanche', '', '', 2]);
    expect(txs.data[0].amt).toBe(BIG);
    // and as text: a decimal string, never a JSON number
    const raw = await post(gw.base, { jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [10, 0, 'eth', 'erc-20', 'big'] });
    expect(raw.text).toContain(`"balance":"${BIG}"`);
  });

  it('18 decimals and trimming: "0.000000000000000001", "1.5", "5.000" → "5", "21000000.000…" → "21000000"', async () => {
    const h = await ok('inds_getHoldersByTick', [10, 0, 'avalanche', 'asc-20', 'dec', 1]);
    // numeric order, not text order ("10" after "5")
    expect(h.holders.map((x: any) => x.balance)).toEqual([TINY, '1.5', '5', '10']);
    expect(h.holders[0].total_supply).toBe('21000000');
    expect(h.total).toBe(4);
    const detail = await ok('index_getInscriptionByTick', ['avalanche', 'asc-20', 'dec']);
    expect([detail.total_supply, detail.limit_per_mint, detail.decimals]).toEqual(['21000000', '1000.5', 18]);
    const b = await ok('inds_getBalancesByAddress', [10, 0, carol, '', '', 'dec', '', 2]);
    expect(b.inscriptions[0].balance).toBe('5');
    expect((await ok('inds_getBalancesByAddress', [10, 0, alice, '', '', 'dec'])).inscriptions[0].balance).toBe(TINY);
    const m = await ok('inds_getTransactionByAddress', [10, 0, alice, 'avalanche', '', 'dec', 0]);
    expect(m.transactions[0].amount).toBe(TINY);
    const x = await ok('inds_getTransactions', [10, 0, '', 'avalanche', '', 'dec', 1]);
    expect(x.data.map((t: any) => t.amt)).toEqual(['1.5', BIG]);
  });

  it('no decimal anywhere has an exponent, a trailing zero after the point or a trailing dot', async () => {
    const decimalFields = new Set(['total_supply', 'minted', 'limit_per_mint', 'balance', 'amount', 'amt', 'progress', 'block_number']);
    const seen: string[] = [];
    const walk = (v: unknown, key = '') => {
      if (Array.isArray(v)) v.forEach((x) => walk(x));
      else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => walk(x, k));
      else if (decimalFields.has(key)) {
        expect(typeof v, key).toBe('string');
        expect(v, key).toMatch(/^(0|[1-9]\d*)(\.\d*[1-9])?$/);
        seen.push(v as string);
      }
    };
    walk(await ok('inds_getTicks', [100, 0]));
    walk(await ok('inds_getTickBriefs', [Object.values(T).map((t) => ({ chain: t.chain, deploy_hash: t.deploy_hash }))]));
    walk(await ok('inds_getTransactions', [100, 0]));
    for (const address of [alice, bob, carol, dave]) {
      walk(await ok('inds_getBalancesByAddress', [100, 0, address]));
      walk(await ok('inds_getTransactionByAddress', [100, 0, address]));
    }
    walk(await ok('inds_getAllChains', [[]]));
    expect(seen.length).toBeGreaterThan(80);
  });
});

describe('minted_percent, status and progress', () => {
  const cases: [string, string, number, string, string][] = [
    // tick, minted_percent, status, progress (briefs), minted
    ['p0', '0.0000', 1, '0', '0'],
    ['p50', '0.5000', 1, '0.5', '500'],
    ['p100', '1.0000', 2, '1', '1000'],
    ['pover', '1.0000', 2, '1', '1500'],
    ['p9999', '0.9999', 1, '0.99999', '99999'], // truncated: 1.0000 only ever means complete
    ['big', '1.0000', 2, '1', BIG],
  ];
  for (const [name, percent, status, progress, minted] of cases) {
    it(`${name}: minted_percent ${percent}, status ${status}, progress ${progress}`, async () => {
      const t = await listEntry(T[name]!);
      expect([t.minted_percent, t.status, t.minted]).toEqual([percent, status, minted]);
      const b = await brief(T[name]!);
      expect([b.progress, b.minted]).toEqual([progress, minted]);
    });
  }

  it('an over-minted tick: minted above total_supply, percent and progress capped at 1', async () => {
    const t = await listEntry(T.pover!);
    expect(BigInt(t.minted)).toBeGreaterThan(BigInt(t.total_supply));
  });

  it('ratios that do not terminate or are tiny: four truncated decimals, plain progress', async () => {
    const third = await listEntry(T.pthird!);
    expect([third.minted_percent, third.status]).toEqual(['0.3333', 1]);
    expect((await brief(T.pthird!)).progress).toMatch(/^0\.3333+$/);
    const tiny = await listEntry(T.ptiny!);
    expect([tiny.minted_percent, tiny.status, tiny.minted]).toEqual(['0.0000', 1, '1']);
    expect((await brief(T.ptiny!)).progress).toMatch(/^(0|0\.0{20,}[1-9]\d*)$/);
  });

  it('a zero supply: percent 0.0000, progress 0, and minted ≥ supply makes it complete', async () => {
    const t = await listEntry(T.pzero!);
    expect([t.minted_percent, t.status]).toEqual(['0.0000', 2]);
    expect((await brief(T.pzero!)).progress).toBe('0');
  });

  it('the progress sort (getTicks sort 2) follows these ratios', async () => {
    const r = await ok('inds_getTicks', [100, 0, 'eth', '', '', '', 2, 1]);
    const percents = r.inscriptions.map((t: any) => t.minted_percent);
    expect(percents).toEqual([...percents].sort());
    expect(r.inscriptions.at(-1).minted_percent).toBe('1.0000');
  });
});

describe('times', () => {
  it('briefs: ISO 8601 UTC to the second with Z; a never-updated tick has the zero time', async () => {
    const never = await brief(T.p50!);
    expect(never.updated_at).toBe(ZERO_TIME);
    expect(never.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const dec = await brief(T.dec!);
    expect([dec.deploy_time, dec.created_at, dec.updated_at]).toEqual(['2024-01-02T03:04:05Z', '2024-01-02T03:04:06Z', '2024-02-27T15:12:23Z']);
  });

  it('unix timestamps are integer seconds (fractions cut), 0 for a time that never happened', async () => {
    const detail = await ok('index_getInscriptionByTick', ['avalanche', 'asc-20', 'dec']);
    expect([detail.deploy_time, detail.created_at, detail.updated_at]).toEqual([1704164645, 1704164646, 1709046743]);
    const never = await ok('index_getInscriptionByTick', ['eth', 'erc-20', 'p50']);
    expect(never.updated_at).toBe(0);
    const list = await ok('inds_getTicks', [100, 0]);
    for (const t of list.inscriptions) expect(Number.isInteger(t.created_at)).toBe(true);
    expect((await listEntry(T.dec!)).created_at).toBe(1704164646);
    const m = await ok('inds_getTransactionByAddress', [10, 0, alice, 'avalanche', '', 'dec', 0]);
    expect([m.transactions[0].created_at, m.transactions[0].updated_at]).toEqual([1709251200, 1709337600]);
    const raw = await post(gw.base, { jsonrpc: '2.0', id: 1, method: 'index_getInscriptionByTick', params: ['avalanche', 'asc-20', 'dec'] });
    expect(raw.text).toContain('"deploy_time":1704164645,');
  });

  it('transactions: ISO times to the second, integer heights and gas', async () => {
    const x = await ok('inds_getTransactions', [10, 0, '', 'avalanche', '', 'dec', 1]);
    expect(x.data[0]).toMatchObject({
      block_height: 2 ** 40, position_in_block: 7, block_time: '2024-03-01T00:00:00Z', gas: 22248, gas_price: 26500000000,
      created_at: '2024-03-01T00:00:01Z', updated_at: '2024-03-01T00:00:02Z', status: 1,
    });
    expect(Number.isInteger(x.data[0].id)).toBe(true);
  });

  it('chains: block_number a decimal string of any size; zero times and "0" without an indexed block', async () => {
    const chains = await ok('inds_getAllChains', [['eth', 'arbitrum', 'btc']]);
    expect(chains.map((c: any) => [c.chain, c.block_number, c.block_time, c.timestamp])).toEqual([
      ['eth', '19319706', '2024-02-27T15:12:23Z', '2024-02-27T15:14:28Z'],
      ['arbitrum', '123456789012345678901234567890', '2024-02-23T11:44:17Z', '2024-02-23T11:44:22Z'],
      ['btc', '0', ZERO_TIME, ZERO_TIME],
    ]);
    for (const c of chains) expect([typeof c.chain_id, typeof c.network_id]).toEqual(['number', 'number']);
  });
});

describe('codes', () => {
  it('transfer_type 0, 1 and 2 as integers wherever a tick is rendered', async () => {
    for (const [name, code] of [['p50', 0], ['p100', 1], ['pover', 2]] as const) {
      const t = T[name]!;
      expect((await listEntry(t)).transfer_type, name).toBe(code);
      expect((await brief(t)).transfer_type, name).toBe(code);
      expect((await ok('index_getInscriptionByTick', [t.chain, t.protocol, t.tick])).transfer_type, name).toBe(code);
      expect((await ok('inds_getBalancesByAddress', [10, 0, alice, '', '', t.tick])).inscriptions[0].transfer_type, name).toBe(code);
    }
  });

  it('holders and tx_cnt are integers counted from the rows', async () => {
    const t = await listEntry(T.pover!);
    expect([t.holders, t.tx_cnt]).toEqual([2, 2]);
    const b = await brief(T.pover!);
    expect([b.holders, b.tx_cnt, typeof b.id]).toEqual([2, 2, 'number']);
  });
});
