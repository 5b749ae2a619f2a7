import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TickInput, TransactionInput } from '../../src/db/load.js';
import { CallDataError, decodeCallData, maxCallDataBytes } from '../../src/domain/calldata.js';
import { classifyKeyword } from '../../src/domain/keyword.js';
import { percentChange } from '../../src/graphql/types/activity.js';
import { createTestDatabase, createTestGateway, graphql, type TestDatabase } from '../support/db.js';
import { Fixture, fakeHash, unix } from '../support/fixtures.js';
import { call, listen } from '../support/http.js';

// The v2 methods beyond the eight of the spec (inds_getTick, inds_getLastBlockNumberIndexed,
// inds_getTickByCallData / inds_getInscriptionTxOperate, inds_getTransactionByHash, inds_getAddressBalance,
// inds_search, inds_chainInfo, inds_chainStat, inds_chainBlockStat) on real PostgreSQL: each one's happy
// path, not-found path and bad-input path, plus the documented exchanges of the examples file. Expected
// answers come from the fixture below (computed by hand from its rows), never from the database.

interface Documented { method: string; params: unknown[]; result: any; note?: string }
const documented: Documented[] = JSON.parse(readFileSync(new URL('../fixtures/v2-documented.json', import.meta.url), 'utf8'));
const doc = (method: string) => documented.find((e) => e.method === method)!;

/** Deep equality and the same key order (the wire format is compared as text). */
function expectExact(actual: unknown, expected: unknown) {
  expect(actual).toEqual(expected);
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
}

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

const crazydogDeployer = '0xF2f9D2575023D320475ed7875FCDCB9b52787E59';
const crazydogHash = '0x2f88df8669337ec739d8414df0f3ef32bf166cb73233c965e805b7fa54eef1f2';
const scripted = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';
const lobbyDeployer = '0x7a7b6Be7f5Ac593bcb262b52ae5a731aa1690ad4';
const lobbyHash = '0x947022fc38f5c1c3349d0b2f77c82917ea3663141c535d07d674c1e21fd0c601';
const tomrayHash = '0xed8e1bedf44d582849b31925e17d4379c2c42845c3a472f16a0b70e4bcdfeb52';
const satsHash = '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333';
const A = '0xAaAa00000000000000000000000000000000000A';
const B = '0xbBbB00000000000000000000000000000000000B';
const C = '0xCcCc00000000000000000000000000000000000C';
const Dd = '0xDdDd00000000000000000000000000000000000D';
const E = '0xEeEe00000000000000000000000000000000000E';
const Z = '0x2222000000000000000000000000000000000000'; // minted, then sent everything away
const BTC_HOLDER = 'bc1qhxzmcv4ffr9tvdw0s3jn54khce6mua7lqqqqqq'; // bech32 characters only

// fantom activity: windows end at T, the block time of the newest fantom transaction
const T = Date.UTC(2024, 2, 1, 12, 0, 0);
const at = (hoursBefore: number) => new Date(T - hoursBefore * 3_600_000).toISOString();

let db: TestDatabase;
let gw: ReturnType<typeof createTestGateway>;
let base: string;
let f: Fixture;
const ticks: Record<string, TickInput> = {};

async function rpc(method: string, params: unknown[], path = '/v2/rpc') {
  return call(base, method, params, path);
}
async function ok(method: string, params: unknown[]) {
  const reply = await rpc(method, params);
  expect(reply.error, JSON.stringify(reply.error)).toBeUndefined();
  return reply.result;
}
async function fails(method: string, params: unknown[], code: number) {
  const reply = await rpc(method, params);
  expect(reply.result).toBeUndefined();
  expect(reply.error?.code, JSON.stringify(reply)).toBe(code);
  return reply.error as { code: number; message: string; data?: any };
}

function rawTx(spec: Partial<TransactionInput> & Pick<TransactionInput, 'chain' | 'block_height' | 'block_time'>): TransactionInput {
  return {
    protocol: '', position_in_block: 0, tx_hash: fakeHash(), from_address: A, to_address: B, op: '', tick: '', amt: '0',
    gas: 21000, gas_price: 1, status: 1, created_at: spec.block_time, updated_at: spec.block_time, ...spec,
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  f = new Fixture();
  // avalanche: the documented records
  ticks.crazydog = f.tick({
    chain: 'avalanche', protocol: 'asc-20', tick: 'crazydog', name: 'crazydog', limit_per_mint: '21000000',
    deploy_by: crazydogDeployer, total_supply: '21000000', deploy_hash: crazydogHash, deploy_time: unix(1704152964),
    transfer_type: 1, created_at: unix(1704524337), updated_at: unix(1704524337),
  });
  f.mint(ticks.crazydog, crazydogDeployer, '5');
  ticks.tomray = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'tomray', total_supply: '1000', limit_per_mint: '1', transfer_type: 2, deploy_hash: tomrayHash });
  f.mint(ticks.tomray, scripted, '13');
  ticks.avas = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'avas' });
  f.mint(ticks.avas, scripted, '2000');
  for (let i = 0; i < 5; i++) f.mint(ticks.avas, C, '1'); // more avalanche blocks than inds_chainBlockStat lists
  ticks.lobby = f.tick({
    chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', name: 'Lobby', total_supply: '2100000', deploy_by: lobbyDeployer,
    deploy_hash: lobbyHash, transfer_type: 1, deploy_time: '2023-12-27T08:02:50.000Z', created_at: '2023-12-27T08:02:56.000Z',
    updated_at: '2024-02-09T11:48:00.000Z',
  });
  // the lobby deploy: a transaction and its movement (amount 0)
  f.data.transactions.push(rawTx({
    chain: 'avalanche', protocol: 'asc-20', op: 'deploy', tick: 'lobby', block_height: 39585640, position_in_block: 56,
    block_time: '2023-12-27T08:02:50.000Z', tx_hash: lobbyHash, from_address: lobbyDeployer, to_address: lobbyDeployer,
    gas: 40000, gas_price: 25000000000,
  }));
  f.data.movements.push({
    chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', address: lobbyDeployer, tx_hash: lobbyHash, amount: '0', event: 1,
    operate: 'deploy', created_at: '2023-12-27T08:02:56.000Z', updated_at: '2023-12-27T08:02:56.000Z',
  });
  f.mint(ticks.lobby, scripted, '600'); // avalanche total of scripted: 13 + 2000 + 600 = 2613
  f.mint(ticks.lobby, A, '50').transfer(ticks.lobby, A, B, '20'); // lobby: A 30, B 20 (A's UTXOs below)
  // bsc: 1000 + 140 = 1140 for scripted; Z minted then sent everything away (a zero balance row)
  ticks.bscs = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'bscs', transfer_type: 2 });
  ticks.cake = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'cake', transfer_type: 1 });
  f.mint(ticks.bscs, scripted, '1000').mint(ticks.cake, scripted, '140');
  f.mint(ticks.cake, Z, '7').transfer(ticks.cake, Z, A, '7');
  // names for the prefix search: "sat" exact, "satoshi" with the most holders, "sats" on btc; LIKE characters
  ticks.sats = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'sats', deploy_hash: satsHash, deploy_by: BTC_HOLDER });
  ticks.sat = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'sat' });
  ticks.satoshi = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'satoshi' });
  f.mint(ticks.sats, BTC_HOLDER, '10').mint(ticks.sats, 'bc1qsecond00000000000000000000000000000000', '10');
  for (const holder of [A, B, C]) f.mint(ticks.satoshi, holder, '1');
  ticks.gm_gm = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'gm_gm' });
  ticks.gmxgm = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'gmxgm' });
  // one name on two chains
  ticks.dupEth = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'dup' });
  ticks.dupBsc = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'dup' });
  // fantom: two ticks, two holders, and raw transactions at known times around T
  ticks.ftmx = f.tick({ chain: 'fantom', protocol: 'erc-20', tick: 'ftmx' });
  ticks.ftmy = f.tick({ chain: 'fantom', protocol: 'erc-20', tick: 'ftmy' });
  f.mint(ticks.ftmx, A, '100').mint(ticks.ftmx, B, '50');
  const ftm = (height: number, hoursBefore: number, from: string, to: string, op: string, tick: string, position = 0) =>
    f.data.transactions.push(rawTx({
      chain: 'fantom', protocol: tick ? 'erc-20' : '', block_height: 50_000_000 + height, position_in_block: position,
      block_time: at(hoursBefore), from_address: from, to_address: to, op, tick,
    }));
  ftm(1000, 0, A, B, 'mint', 'ftmx'); //      current window (T-24h, T]
  ftm(999, 1, A, A, 'transfer', 'ftmx');
  ftm(990, 23, C, Dd, '', '');
  ftm(990, 23, B, C, 'transfer', 'ftmy', 1);
  ftm(980, 24, A, B, 'mint', 'ftmx'); //      previous window (T-48h, T-24h]
  ftm(970, 47, E, E, 'deploy', 'ftmx');
  ftm(960, 48, A, A, 'mint', 'ftmx'); //      older
  ftm(950, 100, A, A, 'mint', 'ftmx');
  // indexed blocks: avalanche as documented; polygon has indexed nothing
  f.block('avalanche', '40433785', '2024-01-16T10:18:46Z', '2024-01-16T10:19:00Z');
  f.block('btc', '830439', '2024-02-14T15:33:22Z', '2024-02-14T15:55:39Z');
  await f.load(db.sql);
  // transferable UTXOs of lobby (transfer_type 1) for A: two unspent, one spent
  await db.sql`
    INSERT INTO utxos (tick_id, address, root_hash, amount, status, created_at, updated_at)
    SELECT t.id, u.address, u.root_hash, u.amount::numeric, u.status::smallint, now(), now()
      FROM ticks t, (VALUES (${A}, ${fakeHash(9001)}, '10', 1), (${A}, ${fakeHash(9002)}, '20', 1),
                            (${A}, ${fakeHash(9003)}, '5', 2)) AS u (address, root_hash, amount, status)
     WHERE t.chain = 'avalanche' AND t.tick = 'lobby'`;
  gw = createTestGateway(db);
  base = await listen(gw.gateway);
});

afterAll(async () => {
  await gw?.gateway.close();
  await db?.close();
});

describe('inds_getTick', () => {
  const detail = (t: TickInput, stats: { minted: string; holders: number; tx_cnt: number; progress: string }) => ({
    chain: t.chain, protocol: t.protocol, tick: t.tick, name: t.name, limit_per_mint: t.limit_per_mint, deploy_by: t.deploy_by,
    total_supply: t.total_supply, deploy_hash: t.deploy_hash, deploy_time: Date.parse(t.deploy_time) / 1000,
    transfer_type: t.transfer_type, created_at: Date.parse(t.created_at) / 1000,
    updated_at: t.updated_at ? Date.parse(t.updated_at) / 1000 : 0, decimals: t.decimals, ...stats,
  });
  const lobbyStats = { minted: '650', holders: 3, tx_cnt: 4, progress: '0.0003095238095238095238' };

  it('by chain, protocol and tick: the detail with live stats', async () => {
    const result = await ok('inds_getTick', ['avalanche', 'asc-20', 'lobby', '']);
    expect(result.progress).toMatch(/^0\.0003095/);
    expectExact(result, detail(ticks.lobby!, { ...lobbyStats, progress: result.progress }));
  });

  it('by deploy hash alone (any chain, case-insensitive), and by every identifier at once', async () => {
    const bySats = await ok('inds_getTick', ['', '', '', satsHash.toUpperCase()]);
    expect(bySats.progress).toMatch(/^0\.00000095238/); // 20 of 21000000
    expectExact(bySats, detail(ticks.sats!, { minted: '20', holders: 2, tx_cnt: 2, progress: bySats.progress }));
    const all = await ok('inds_getTick', ['AVALANCHE', 'ASC-20', 'LOBBY', lobbyHash.toUpperCase().replace('0X', '0x')]);
    expect(all.tick).toBe('lobby');
  });

  it('not found: -32603, also when the identifiers contradict each other', async () => {
    await fails('inds_getTick', ['avalanche', 'asc-20', 'nope', ''], -32603);
    await fails('inds_getTick', ['bsc', '', '', lobbyHash], -32603);
    await fails('inds_getTick', ['avalanche', 'asc-20', 'crazydog', lobbyHash], -32603);
  });

  it('bad input: nothing to look up, an ambiguous name, wrong types, too many params', async () => {
    expect((await fails('inds_getTick', ['avalanche', 'asc-20', '', ''], -32602)).message).toMatch(/tick or a deploy hash/);
    expect((await fails('inds_getTick', [], -32602)).message).toMatch(/tick or a deploy hash/);
    expect((await fails('inds_getTick', ['', '', 'dup', ''], -32602)).message).toMatch(/several ticks match/);
    expect((await ok('inds_getTick', ['bsc', '', 'dup', ''])).chain).toBe('bsc');
    await fails('inds_getTick', ['avalanche', 'asc-20', 7, ''], -32602);
    await fails('inds_getTick', ['avalanche', 'asc-20', 'lobby', '', ''], -32602);
  });
});

describe('inds_getLastBlockNumberIndexed', () => {
  it('reproduces the documented exchange', async () => {
    const e = doc('inds_getLastBlockNumberIndexed');
    expectExact(await ok(e.method, e.params), e.result);
  });

  it('an empty list: every chain in display order; a chain with no indexed block answers "0" and zero times', async () => {
    const result = await ok('inds_getLastBlockNumberIndexed', [[]]);
    expect(result.map((r: any) => r.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
    expectExact(result.find((r: any) => r.chain === 'polygon'), {
      chain: 'polygon', block_number: '0', block_time: '0001-01-01 00:00:00 +0000 UTC', timestamp: 0,
    });
    expectExact(result.at(-1), {
      chain: 'btc', block_number: '830439', block_time: '2024-02-14 15:33:22 +0000 UTC', timestamp: Date.parse('2024-02-14T15:33:22Z') / 1000,
    });
    expect(await ok('inds_getLastBlockNumberIndexed', [])).toEqual(result);
  });

  it('names are case-insensitive', async () => {
    expect((await ok('inds_getLastBlockNumberIndexed', [['AVALANCHE']]))[0].block_number).toBe('40433785');
  });

  it('not found: an unknown chain is -32603 naming it', async () => {
    const error = await fails('inds_getLastBlockNumberIndexed', [['avalanche', 'nochain', 'other']], -32603);
    expect(error.message).toBe('Record not found');
    expect(error.data).toEqual({ reason: 'unknown chains: nochain, other', chains: ['nochain', 'other'] });
  });

  it('bad input: not an array of strings', async () => {
    await fails('inds_getLastBlockNumberIndexed', ['avalanche'], -32602);
    await fails('inds_getLastBlockNumberIndexed', [[1]], -32602);
    await fails('inds_getLastBlockNumberIndexed', [[], []], -32602);
  });
});

describe('inds_getTickByCallData and inds_getInscriptionTxOperate', () => {
  const tomrayMint = '646174613a2c7b2270223a226173632d3230222c226f70223a226d696e74222c227469636b223a22746f6d726179222c22616d74223a2231227d';

  it('reproduce the documented exchanges (given without 0x; deploy_hash added, as the existing service does)', async () => {
    for (const method of ['inds_getTickByCallData', 'inds_getInscriptionTxOperate']) {
      const e = doc(method);
      expectExact(await ok(method, e.params), { ...e.result, deploy_hash: tomrayHash });
    }
  });

  it('with 0x, upper-case hex, and the other accepted media types', async () => {
    const expected = { operate: 'mint', protocol: 'asc-20', tick: 'tomray', deploy_hash: tomrayHash };
    expectExact(await ok('inds_getTickByCallData', ['avalanche', `0x${tomrayMint}`]), expected);
    expectExact(await ok('inds_getTickByCallData', ['avalanche', `0X${tomrayMint.toUpperCase()}`]), expected);
    for (const prefix of ['data:application/json,', 'data:text/plain,', 'data:text/plain;charset=utf-8, ']) {
      const data = hex(`${prefix}{"p":"ASC-20","op":"Mint","tick":"TomRay","amt":"1"}`);
      expectExact(await ok('inds_getTickByCallData', ['AVALANCHE', data]), expected);
    }
  });

  it('deploy_hash is "" when the tick is not deployed on that chain', async () => {
    expectExact(await ok('inds_getTickByCallData', ['bsc', tomrayMint]), { operate: 'mint', protocol: 'asc-20', tick: 'tomray', deploy_hash: '' });
    const deployOfNew = hex('data:,{"p":"asc-20","op":"deploy","tick":"newone","max":"1000","lim":"1"}');
    expectExact(await ok('inds_getTickByCallData', ['avalanche', deployOfNew]), { operate: 'deploy', protocol: 'asc-20', tick: 'newone', deploy_hash: '' });
  });

  it('not found: hex that holds no inscription is -32603', async () => {
    const notInscriptions = [
      'a9059cbb000000000000000000000000aaaa00000000000000000000000000000000000a', // an ERC-20 transfer call
      'ff', // not UTF-8
      hex('data:,{"p":"asc-20","op":"mint"}'), // no tick
      hex('data:,{"p":"asc-20","op":"mint","tick":7}'), // tick not a string
      hex('data:,["asc-20","mint","tomray"]'), // not an object
      hex('data:,{"p":"asc-20","op":"mint","tick":"tomray"'), // truncated JSON
      hex('data:image/png,{"p":"asc-20","op":"mint","tick":"tomray"}'), // another media type
      hex('data:;base64,eyJwIjoiYXNjLTIwIn0='), // base64
      hex('{"p":"asc-20","op":"mint","tick":"tomray"}'), // no data URL
    ];
    for (const data of notInscriptions) {
      const error = await fails('inds_getTickByCallData', ['avalanche', data], -32603);
      expect(error.message).toBe('Record not found');
    }
  });

  it('bad input: not hex, odd length, empty, too long, wrong types', async () => {
    for (const data of ['0xzz', 'abc', '', '0x', 'data:,{}']) await fails('inds_getTickByCallData', ['avalanche', data], -32602);
    await fails('inds_getTickByCallData', ['avalanche', 'ab'.repeat(513)], -32602); // 1026 characters: above the param limit
    await fails('inds_getTickByCallData', ['avalanche', 12], -32602);
    await fails('inds_getInscriptionTxOperate', [['avalanche'], tomrayMint], -32602);
  });
});

describe('decodeCallData (pure)', () => {
  it('decodes, lower-cases names, keeps the amount as written', () => {
    expect(decodeCallData(hex('data:,{"p":"BRC-20","op":"Transfer","tick":"ORDI","amt":"1.50"}'))).toEqual({
      protocol: 'brc-20', operation: 'transfer', tick: 'ordi', amount: '1.50', payload: '{"p":"BRC-20","op":"Transfer","tick":"ORDI","amt":"1.50"}',
    });
    expect(decodeCallData(hex('data:,{"p":"asc-20","op":"mint","tick":"x","amt":5}'))?.amount).toBe('5');
    expect(decodeCallData(hex('data:,{"p":"asc-20","op":"mint","tick":"x"}'))?.amount).toBeNull();
  });

  it('is bounded: more than the maximum is refused before any decoding', () => {
    expect(() => decodeCallData('00'.repeat(maxCallDataBytes + 1))).toThrow(CallDataError);
    expect(decodeCallData('00'.repeat(maxCallDataBytes))).toBeNull();
  });

  it('never throws anything but CallDataError on junk', () => {
    const junk = ['', '0x', 'zz', '0', '😀', '\u0000'.repeat(10), hex('data:'), hex('data:,'), hex('data:,null'), hex('data:,1e999'),
      hex(`data:,${'['.repeat(5_000)}`), hex('data:,{"p":"","op":"mint","tick":"x"}'), hex('data:,{"__proto__":{"p":"x"}}')];
    for (const input of junk) {
      try {
        expect(decodeCallData(input)).toBeNull();
      } catch (error) {
        expect(error).toBeInstanceOf(CallDataError);
      }
    }
  });
});

describe('inds_getTransactionByHash', () => {
  it('the transaction, the tick it touched, its movements and the decoded operation (documented fields carried over)', async () => {
    const e = doc('inds_getTransactionByHash');
    const result = await ok(e.method, e.params);
    expect(Object.keys(result)).toEqual(['is_inscription', 'transaction', 'inscriptions', 'address', 'data']);
    // the documented (older) shape's members, where they live now
    const old = e.result.transaction;
    expect(result.is_inscription).toBe(e.result.is_inscription);
    expect([result.transaction.protocol, result.transaction.tick, result.transaction.from, result.transaction.to])
      .toEqual([old.protocol, old.tick, old.from, old.to]);
    expect(result.inscriptions.deploy_hash).toBe(old.deploy_hash);
    expect(result.data.amt).toBe(old.amount);
    const tx = f.data.transactions.find((x) => x.tx_hash === lobbyHash)!;
    const [row] = await db.sql<{ id: string }[]>`SELECT id FROM transactions WHERE tx_hash = ${lobbyHash}`;
    expectExact(result.transaction, {
      id: Number(row!.id), chain: 'avalanche', protocol: 'asc-20', block_height: 39585640, position_in_block: 56,
      block_time: '2023-12-27T08:02:50Z', tx_hash: lobbyHash, from: lobbyDeployer, to: lobbyDeployer, op: 'deploy', tick: 'lobby',
      amt: '0', gas: tx.gas, gas_price: tx.gas_price, status: 1, created_at: '2023-12-27T08:02:50Z', updated_at: '2023-12-27T08:02:50Z',
    });
    expectExact(result.address, [{
      chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', address: lobbyDeployer, tx_hash: lobbyHash, amount: '0', event: 1,
      operate: 'deploy', created_at: Date.parse('2023-12-27T08:02:56Z') / 1000, updated_at: Date.parse('2023-12-27T08:02:56Z') / 1000,
    }]);
    expectExact(result.data, { p: 'asc-20', op: 'deploy', tick: 'lobby', amt: '0' });
    expect(result.inscriptions.tick).toBe('lobby');
    expect(result.inscriptions.holders).toBe(3);
  });

  it('a transfer lists both legs; the hash is found without 0x and in upper case', async () => {
    const transfer = f.data.transactions.find((x) => x.tick === 'lobby' && x.op === 'transfer')!;
    const result = await ok('inds_getTransactionByHash', ['Avalanche', transfer.tx_hash.slice(2).toUpperCase()]);
    expect(result.transaction.tx_hash).toBe(transfer.tx_hash);
    expect(result.address.map((m: any) => [m.address, m.event, m.amount])).toEqual([[A, 4, '20'], [B, 3, '20']]);
    expectExact(result.data, { p: 'asc-20', op: 'transfer', tick: 'lobby', amt: '20' });
  });

  it('a transaction that is no inscription: is_inscription false, no tick, no legs', async () => {
    const plain = f.data.transactions.find((x) => x.chain === 'fantom' && x.op === '')!;
    const result = await ok('inds_getTransactionByHash', ['fantom', plain.tx_hash]);
    expect(Object.keys(result)).toEqual(['is_inscription', 'transaction', 'address', 'data']);
    expect(result.is_inscription).toBe(false);
    expect(result.address).toEqual([]);
    expectExact(result.data, { p: '', op: '', tick: '', amt: '0' });
  });

  it('not found: an unknown hash, or a known hash on another chain', async () => {
    await fails('inds_getTransactionByHash', ['avalanche', fakeHash(123456)], -32603);
    await fails('inds_getTransactionByHash', ['bsc', lobbyHash], -32603);
  });

  it('bad input: not a 32-byte hex hash, an empty chain or hash, wrong types', async () => {
    await fails('inds_getTransactionByHash', ['avalanche', '0x1234'], -32602);
    await fails('inds_getTransactionByHash', ['avalanche', `0x${'g'.repeat(64)}`], -32602);
    await fails('inds_getTransactionByHash', ['', lobbyHash], -32602);
    await fails('inds_getTransactionByHash', ['avalanche', ''], -32602);
    await fails('inds_getTransactionByHash', ['avalanche'], -32602);
    await fails('inds_getTransactionByHash', ['avalanche', 5], -32602);
  });
});

describe('inds_getAddressBalance', () => {
  it('reproduces the documented exchange ("5.0" is a documentation slip: the decimal rule gives "5")', async () => {
    const e = doc('inds_getAddressBalance');
    expectExact(await ok(e.method, e.params), { tick: 'crazydog', balance: '5', transfer_type: 1, deploy_hash: crazydogHash, available: '5' });
  });

  it('a tick transferred by UTXO hash lists the unspent UTXOs, newest first, in the documented key order', async () => {
    expectExact(await ok('inds_getAddressBalance', [A.toLowerCase(), 'AVALANCHE', 'ASC-20', 'Lobby']), {
      tick: 'lobby', balance: '30', transfer_type: 1,
      utxos: [{ tick: 'lobby', amount: '20', root_hash: fakeHash(9002) }, { tick: 'lobby', amount: '10', root_hash: fakeHash(9001) }],
      deploy_hash: lobbyHash, available: '30',
    });
    // B holds lobby but has no UTXO recorded: no utxos member
    expect(Object.keys(await ok('inds_getAddressBalance', [B, 'avalanche', 'asc-20', 'lobby']))).toEqual(
      ['tick', 'balance', 'transfer_type', 'deploy_hash', 'available']);
  });

  it('by balance: no utxos member; an address that never held the tick has "0"', async () => {
    expectExact(await ok('inds_getAddressBalance', [scripted, 'avalanche', 'asc-20', 'tomray']),
      { tick: 'tomray', balance: '13', transfer_type: 2, deploy_hash: tomrayHash, available: '13' });
    expectExact(await ok('inds_getAddressBalance', [E, 'avalanche', 'asc-20', 'tomray']),
      { tick: 'tomray', balance: '0', transfer_type: 2, deploy_hash: tomrayHash, available: '0' });
    // a zero balance row (everything sent away)
    expect((await ok('inds_getAddressBalance', [Z, 'bsc', 'bsc-20', 'cake'])).balance).toBe('0');
  });

  it('not found: an unknown tick is -32603', async () => {
    await fails('inds_getAddressBalance', [scripted, 'avalanche', 'asc-20', 'nope'], -32603);
    await fails('inds_getAddressBalance', [scripted, 'bsc', 'asc-20', 'tomray'], -32603);
  });

  it('bad input: empty or missing params, wrong types', async () => {
    const error = await fails('inds_getAddressBalance', ['', 'avalanche', 'asc-20', 'tomray'], -32602);
    expect(error.data).toMatchObject({ position: 1, param: 'address' });
    await fails('inds_getAddressBalance', [scripted, 'avalanche', 'asc-20'], -32602);
    await fails('inds_getAddressBalance', [scripted, 'avalanche', 'asc-20', ['tomray']], -32602);
    await fails('inds_getAddressBalance', [scripted, 'avalanche', 'asc-20', 'tomray', 'x'], -32602);
  });
});

describe('inds_search', () => {
  it('reproduces the documented exchange: an address, per-chain sums largest first', async () => {
    const e = doc('inds_search');
    expectExact(await ok(e.method, e.params), e.result);
  });

  it('an address: the chain filter, any case, zero balances left out, nothing held = an empty list', async () => {
    expectExact(await ok('inds_search', [scripted.toLowerCase(), 'BSC']), { type: 'Address', data: [{ chain: 'bsc', address: scripted, balance: '1140' }] });
    expectExact(await ok('inds_search', [Z, '']), { type: 'Address', data: [] });
    expectExact(await ok('inds_search', [E, '']), { type: 'Address', data: [] });
    expectExact(await ok('inds_search', [BTC_HOLDER, '']), { type: 'Address', data: [{ chain: 'btc', address: BTC_HOLDER, balance: '10' }] });
  });

  it('a tick prefix: the exact name first, then by holders; the tick list shape of the existing service', async () => {
    const result = await ok('inds_search', ['SAT', '']);
    expect(result.type).toBe('Inscription');
    expect(Object.keys(result.data)).toEqual(['inscriptions', 'total', 'limit', 'offset']);
    expect(result.data.inscriptions.map((t: any) => [t.chain, t.tick, t.holders])).toEqual([
      ['btc', 'sat', 0], ['bsc', 'satoshi', 3], ['btc', 'sats', 2],
    ]);
    expect([result.data.total, result.data.limit, result.data.offset]).toEqual([3, 100, 0]);
    expect(Object.keys(result.data.inscriptions[0])).toEqual(['chain', 'protocol', 'tick', 'deploy_by', 'deploy_hash', 'total_supply',
      'minted_percent', 'limit_per_mint', 'holders', 'transfer_type', 'status', 'minted', 'tx_cnt', 'created_at']);
    expect((await ok('inds_search', ['sa', 'btc'])).data.inscriptions.map((t: any) => t.tick)).toEqual(['sats', 'sat']);
  });

  it('pattern characters in a keyword are plain text', async () => {
    expect((await ok('inds_search', ['gm_', ''])).data.inscriptions.map((t: any) => t.tick)).toEqual(['gm_gm']);
    expect((await ok('inds_search', ['%', ''])).data.total).toBe(0);
    expect((await ok('inds_search', ["o'k", ''])).data.total).toBe(0);
  });

  it('a transaction hash (with or without 0x): the transactions with it, across chains or on one', async () => {
    const result = await ok('inds_search', [lobbyHash.slice(2), '']);
    expect(result.type).toBe('TxHash');
    expect(result.data.map((x: any) => [x.chain, x.tx_hash, x.op])).toEqual([['avalanche', lobbyHash, 'deploy']]);
    expectExact(await ok('inds_search', [lobbyHash, 'bsc']), { type: 'TxHash', data: [] });
  });

  it('not found: an empty typed result, not an error', async () => {
    expectExact(await ok('inds_search', ['zzzz', '']), { type: 'Inscription', data: { inscriptions: [], total: 0, limit: 100, offset: 0 } });
    expectExact(await ok('inds_search', [fakeHash(424242), '']), { type: 'TxHash', data: [] });
  });

  it('bad input: an empty keyword, a too long one, wrong types', async () => {
    await fails('inds_search', ['', ''], -32602);
    await fails('inds_search', [], -32602);
    await fails('inds_search', ['x'.repeat(257), ''], -32602);
    await fails('inds_search', [42, ''], -32602);
    await fails('inds_search', ['sat', null, 1], -32602);
  });

  it('classifies keywords by shape', () => {
    expect(classifyKeyword(scripted)).toBe('ADDRESS');
    expect(classifyKeyword(BTC_HOLDER)).toBe('ADDRESS');
    expect(classifyKeyword('1BoatSLRHtKNngkdXEeobR76b53LETtpyT')).toBe('ADDRESS');
    expect(classifyKeyword(lobbyHash)).toBe('TX_HASH');
    expect(classifyKeyword(satsHash)).toBe('TX_HASH');
    expect(classifyKeyword('ordi')).toBe('TICK');
    expect(classifyKeyword('0x1234')).toBe('TICK');
  });
});

describe('inds_chainInfo', () => {
  it('the chain record and its totals computed from the read model', async () => {
    expectExact(await ok('inds_chainInfo', ['Fantom']), {
      chain_id: 250, chain: 'fantom', outer_chain: 'FTM', name: 'Fantom Opera', logo: 'https://s3.indexs.io/chain/icon/fantom.png',
      network_id: 250, ext: '', block_number: '0', block_time: '0001-01-01T00:00:00Z', timestamp: '0001-01-01T00:00:00Z',
      // ftmx, ftmy; holders A and B; 8 raw transactions (1 deploy, 4 mints, 2 transfers, 1 plain) + 2 fixture mints
      tick_count: 2, address_count: 2, deploy_count: 1, mint_count: 6, transfer_count: 2, transaction_count: 10,
    });
    const avalanche = await ok('inds_chainInfo', ['avalanche']);
    expect([avalanche.block_number, avalanche.block_time, avalanche.tick_count]).toEqual(['40433785', '2024-01-16T10:18:46Z', 4]);
  });

  it('a chain with nothing indexed: zeros', async () => {
    const result = await ok('inds_chainInfo', ['polygon']);
    expect([result.tick_count, result.address_count, result.transaction_count]).toEqual([0, 0, 0]);
  });

  it('not found: an unknown chain is -32603 naming it', async () => {
    expect((await fails('inds_chainInfo', ['nochain'], -32603)).data).toEqual({ reason: 'unknown chain: nochain', chains: ['nochain'] });
  });

  it('bad input: empty, missing, wrong type', async () => {
    await fails('inds_chainInfo', [''], -32602);
    await fails('inds_chainInfo', [], -32602);
    await fails('inds_chainInfo', [['fantom']], -32602);
  });
});

describe('inds_chainStat', () => {
  it('the last 24 h against the 24 h before, ending at the newest indexed transaction', async () => {
    const [fantom] = await ok('inds_chainStat', [['fantom']]);
    expectExact(fantom, {
      chain_id: 250, chain: 'fantom', name: 'Fantom Opera', logo: 'https://s3.indexs.io/chain/icon/fantom.png',
      window_end: '2024-03-01T12:00:00Z',
      // current: 4 transactions; A, B, C, Dd; ftmx, ftmy — previous: 2 transactions (the one at exactly T-24h included); A, B, E; ftmx
      address_24h: 4, address_24h_previous: 3, address_24h_change: '33.33',
      tick_24h: 2, tick_24h_previous: 1, tick_24h_change: '100.00',
      transaction_24h: 4, transaction_24h_previous: 2, transaction_24h_change: '100.00',
    });
  });

  it('an empty list means every chain; a chain with no transactions has zeros and no change', async () => {
    const result = await ok('inds_chainStat', [[]]);
    expect(result.map((r: any) => r.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
    expectExact(result.find((r: any) => r.chain === 'polygon'), {
      chain_id: 137, chain: 'polygon', name: 'Polygon Mainnet', logo: 'https://s3.indexs.io/chain/icon/polygon.png',
      window_end: '0001-01-01T00:00:00Z', address_24h: 0, address_24h_previous: 0, address_24h_change: null,
      tick_24h: 0, tick_24h_previous: 0, tick_24h_change: null, transaction_24h: 0, transaction_24h_previous: 0, transaction_24h_change: null,
    });
  });

  it('not found: an unknown chain is -32603 naming it', async () => {
    expect((await fails('inds_chainStat', [['fantom', 'nochain']], -32603)).data.chains).toEqual(['nochain']);
  });

  it('bad input: not an array of strings', async () => {
    await fails('inds_chainStat', ['fantom'], -32602);
    await fails('inds_chainStat', [[null]], -32602);
  });

  it('percent change: two decimals, half away from zero, null without a previous window', () => {
    expect([percentChange(4, 3), percentChange(2, 3), percentChange(1, 8), percentChange(0, 5), percentChange(5, 0)])
      .toEqual(['33.33', '-33.33', '-87.50', '-100.00', null]);
    expect([percentChange(1, 200), percentChange(1, 3), percentChange(2, 2)]).toEqual(['-99.50', '-66.67', '0.00']);
  });
});

describe('inds_chainBlockStat', () => {
  it('per-block activity of the newest blocks, newest first', async () => {
    const result = await ok('inds_chainBlockStat', ['fantom']);
    expect(result).toHaveLength(9); // 7 raw blocks + 2 fixture mints: fewer than 10
    expectExact(result.slice(0, 3), [
      { block_height: 50_001_000, block_time: '2024-03-01T12:00:00Z', tick_count: 1, transaction_count: 1, address_count: 2 },
      { block_height: 50_000_999, block_time: '2024-03-01T11:00:00Z', tick_count: 1, transaction_count: 1, address_count: 1 },
      { block_height: 50_000_990, block_time: '2024-02-29T13:00:00Z', tick_count: 1, transaction_count: 2, address_count: 3 },
    ]);
    const heights = result.map((b: any) => b.block_height);
    expect(heights).toEqual([...heights].sort((a: number, b: number) => b - a));
  });

  it('at most 10 blocks', async () => {
    // avalanche: every fixture transaction is its own block, more than 10 of them
    const result = await ok('inds_chainBlockStat', ['avalanche']);
    expect(result).toHaveLength(10);
    const heights = f.data.transactions.filter((x) => x.chain === 'avalanche').map((x) => x.block_height).sort((a, b) => b - a);
    expect(result.map((b: any) => b.block_height)).toEqual(heights.slice(0, 10));
  });

  it('a chain without transactions: an empty list', async () => {
    expect(await ok('inds_chainBlockStat', ['polygon'])).toEqual([]);
  });

  it('not found and bad input', async () => {
    await fails('inds_chainBlockStat', ['nochain'], -32603);
    await fails('inds_chainBlockStat', [''], -32602);
    await fails('inds_chainBlockStat', [1], -32602);
  });
});

describe('inds_getInscriptions (alias of inds_getTicks)', () => {
  it('answers as inds_getTicks with 8 params and with 7 (no sort_mode = descending)', async () => {
    const eight = [10, 0, '', '', '', '', 3, 2];
    const ticksResult = await ok('inds_getTicks', eight);
    expectExact(await ok('inds_getInscriptions', eight), ticksResult);
    expectExact(await ok('inds_getInscriptions', eight.slice(0, 7)), ticksResult);
    await fails('inds_getInscriptions', [...eight, 1], -32602);
  });
});

describe('GraphQL fields behind the methods', () => {
  it('decodeCallData, search (a union), findTick, transaction { movements }, chain { figures activity recentBlocks }', async () => {
    const res = await graphql(gw.gateway, `query($data: String!, $hash: String!) {
      decodeCallData(chain: "avalanche", data: $data) { protocol operation tickName amount tick { deployHash } }
      ticks: search(keyword: "sat") { __typename ... on TickSearchResult { totalCount ticks { tick } } }
      address: search(keyword: "${scripted}") { __typename ... on AddressSearchResult { chains { chainName balance } } }
      findTick(tick: "crazydog") { chainName stats { holders } balanceOf(address: "${crazydogDeployer}") { balance } }
      transaction(chain: "avalanche", hash: $hash) { op movements { address event } }
      chain(name: "fantom") { figures { tickCount } activity { windowEnd current { transactions } change { addresses } } recentBlocks(last: 2) { height } }
    }`, { data: hex('data:,{"p":"asc-20","op":"mint","tick":"tomray","amt":"1"}'), hash: lobbyHash });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      decodeCallData: { protocol: 'asc-20', operation: 'mint', tickName: 'tomray', amount: '1', tick: { deployHash: tomrayHash } },
      ticks: { __typename: 'TickSearchResult', totalCount: 3, ticks: [{ tick: 'sat' }, { tick: 'satoshi' }, { tick: 'sats' }] },
      address: { __typename: 'AddressSearchResult', chains: [{ chainName: 'avalanche', balance: '2613' }, { chainName: 'bsc', balance: '1140' }] },
      findTick: { chainName: 'avalanche', stats: { holders: 1 }, balanceOf: { balance: '5' } },
      transaction: { op: 'deploy', movements: [{ address: lobbyDeployer, event: 'DEPLOY' }] },
      chain: { figures: { tickCount: 2 }, activity: { windowEnd: '2024-03-01T12:00:00Z', current: { transactions: 4 }, change: { addresses: '33.33' } }, recentBlocks: [{ height: '50001000' }, { height: '50000999' }] },
    });
  });

  it('bad input surfaces as BAD_USER_INPUT', async () => {
    const res = await graphql(gw.gateway, '{ decodeCallData(chain: "avalanche", data: "0xzz") { protocol } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const none = await graphql(gw.gateway, '{ decodeCallData(chain: "avalanche", data: "0xa9059cbb") { protocol } }');
    expect(none.errors).toBeUndefined();
    expect(none.data).toEqual({ decodeCallData: null });
  });
});
