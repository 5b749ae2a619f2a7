import { doc } from '../support/documented.js';
import { describe, expect, it } from 'vitest';
import type { TickInput } from '../../src/db/load.js';
import { CallDataError, decodeCallData, maxCallDataBytes } from '../../src/domain/calldata.js';
import { classifyKeyword } from '../../src/domain/keyword.js';
import { alice, bob, drained, erin, fakeHash } from '../support/fixtures.js';
import { useGateway } from '../support/gateway.js';
import { crazydogHash, lobbyDeployer, lobbyHash, tomrayHash } from '../support/documented.js';
import { BTC_HOLDER, loadRecords, type Records, satsHash, scripted } from '../support/records.js';
import { expectExact, rpcCalls } from '../support/rpc.js';

// The v2 lookups beyond the eight methods of the spec, on real PostgreSQL: inds_getTick,
// inds_getTickByCallData / inds_getInscriptionTxOperate (and decodeCallData itself), inds_getTransactionByHash,
// inds_getAddressBalance, inds_search and the inds_getInscriptions alias, each one's happy, not-found and
// bad-input path and its documented exchange. Expected answers come from the records of
// test/support/records.ts (computed by hand from its rows), never from the database.

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

let records: Records;
const env = useGateway({ load: async (db) => { records = await loadRecords(db); } });
const { ok, fails } = rpcCalls(() => env.base);

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
    expectExact(result, detail(records.ticks.lobby!, { ...lobbyStats, progress: result.progress }));
  });

  it('by deploy hash alone (any chain, case-insensitive), and by every identifier at once', async () => {
    const bySats = await ok('inds_getTick', ['', '', '', satsHash.toUpperCase()]);
    expect(bySats.progress).toMatch(/^0\.00000095238/); // 20 of 21000000
    expectExact(bySats, detail(records.ticks.sats!, { minted: '20', holders: 2, tx_cnt: 2, progress: bySats.progress }));
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
    const tx = records.fixture.data.transactions.find((x) => x.tx_hash === lobbyHash)!;
    const [row] = await env.db.sql<{ id: string }[]>`SELECT id FROM transactions WHERE tx_hash = ${lobbyHash}`;
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
    const transfer = records.fixture.data.transactions.find((x) => x.tick === 'lobby' && x.op === 'transfer')!;
    const result = await ok('inds_getTransactionByHash', ['Avalanche', transfer.tx_hash.slice(2).toUpperCase()]);
    expect(result.transaction.tx_hash).toBe(transfer.tx_hash);
    expect(result.address.map((m: any) => [m.address, m.event, m.amount])).toEqual([[alice, 4, '20'], [bob, 3, '20']]);
    expectExact(result.data, { p: 'asc-20', op: 'transfer', tick: 'lobby', amt: '20' });
  });

  it('a transaction that is no inscription: is_inscription false, no tick, no legs', async () => {
    const plain = records.fixture.data.transactions.find((x) => x.chain === 'fantom' && x.op === '')!;
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
    expectExact(await ok('inds_getAddressBalance', [alice.toLowerCase(), 'AVALANCHE', 'ASC-20', 'Lobby']), {
      tick: 'lobby', balance: '30', transfer_type: 1,
      utxos: [{ tick: 'lobby', amount: '20', root_hash: fakeHash(9002) }, { tick: 'lobby', amount: '10', root_hash: fakeHash(9001) }],
      deploy_hash: lobbyHash, available: '30',
    });
    // B holds lobby but has no UTXO recorded: no utxos member
    expect(Object.keys(await ok('inds_getAddressBalance', [bob, 'avalanche', 'asc-20', 'lobby']))).toEqual(
      ['tick', 'balance', 'transfer_type', 'deploy_hash', 'available']);
  });

  it('by balance: no utxos member; an address that never held the tick has "0"', async () => {
    expectExact(await ok('inds_getAddressBalance', [scripted, 'avalanche', 'asc-20', 'tomray']),
      { tick: 'tomray', balance: '13', transfer_type: 2, deploy_hash: tomrayHash, available: '13' });
    expectExact(await ok('inds_getAddressBalance', [erin, 'avalanche', 'asc-20', 'tomray']),
      { tick: 'tomray', balance: '0', transfer_type: 2, deploy_hash: tomrayHash, available: '0' });
    // a zero balance row (everything sent away)
    expect((await ok('inds_getAddressBalance', [drained, 'bsc', 'bsc-20', 'cake'])).balance).toBe('0');
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
    expectExact(await ok('inds_search', [drained, '']), { type: 'Address', data: [] });
    expectExact(await ok('inds_search', [erin, '']), { type: 'Address', data: [] });
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

describe('inds_getInscriptions (alias of inds_getTicks)', () => {
  it('answers as inds_getTicks with 8 params and with 7 (no sort_mode = descending)', async () => {
    const eight = [10, 0, '', '', '', '', 3, 2];
    const ticksResult = await ok('inds_getTicks', eight);
    expectExact(await ok('inds_getInscriptions', eight), ticksResult);
    expectExact(await ok('inds_getInscriptions', eight.slice(0, 7)), ticksResult);
    await fails('inds_getInscriptions', [...eight, 1], -32602);
  });
});
