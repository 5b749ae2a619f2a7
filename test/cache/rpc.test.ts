import { LosslessNumber, parse as parseLossless } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { rpcKey } from '../../src/cache/keys.js';
import { Fixture } from '../support/fixtures.js';
import { capturingLogger, dataVersion, indexMint, waitFor } from '../support/ops.js';
import { rpc } from '../support/http.js';
import { useDatabase, useGateway } from '../support/gateway.js';

// JSON-RPC results in the response cache: hits, byte-identical replies (cached, uncached, cache off), the
// key (method, exact params, interface version, data version), only successes stored, invalidation.

const holders = Array.from({ length: 10 }, (_, i) => `0xbeef${String(i).padStart(36, '0')}`);
const tick = { chain: 'bsc', protocol: 'bsc-20', tick: 'rpcc' };
const balances = (address: string, id: number | string = 1) =>
  ({ jsonrpc: '2.0', id, method: 'inds_getBalancesByAddress', params: [10, 0, address, '', '', '', '', 2] });

const log = capturingLogger();

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick(tick);
    const u = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'twoo' });
    holders.forEach((address, i) => {
      f.mint(t, address, String(500 + i));
      if (i % 2) f.mint(u, address, String(3 * i));
    });
    f.block('bsc', '35000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:03.000Z');
    await f.load(db.sql);
  },
});
const cached = useGateway({ db, config: { CACHE: true }, logger: log.logger });
const plain = useGateway({ db, config: { CACHE: false } });

const rpcLines = () => log.lines.filter((l) => l.surface === 'rpc');

describe('JSON-RPC result cache', () => {
  it('serves a repeated call from the cache with the very same bytes', async () => {
    const miss = await rpc(cached.base, balances(holders[0]!));
    const statements = cached.statements.length;
    const hit = await rpc(cached.base, balances(holders[0]!));
    const off = await rpc(plain.base, balances(holders[0]!));
    expect(cached.statements.length, 'a hit sends nothing to the database').toBe(statements);
    expect(hit.text).toBe(miss.text);
    expect(hit.text).toBe(off.text);
    expect(rpcLines().slice(-2).map((l) => l.cache)).toEqual(['miss', 'hit']);
    expect(miss.json.result.inscriptions[0]).toMatchObject({ tick: 'rpcc', balance: '500' });
  });

  it('keeps every reply byte-exact: ids, batches, big numbers, aliases', async () => {
    const bodies = [
      balances(holders[1]!, 'a string id'),
      `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"inds_getBalancesByAddress","params":[10,0,"${holders[1]}","","","","",2]}`,
      [balances(holders[1]!, 1), balances(holders[2]!, 2), { jsonrpc: '2.0', id: 3, method: 'nope', params: [] }, balances(holders[1]!, 4)],
      { jsonrpc: '2.0', id: 5, method: 'inds_getBalanceByAddress', params: [10, 0, holders[1], '', '', '', '', 2] },
      { jsonrpc: '2.0', id: 6, method: 'inds_getTicks', params: [10, 0, 'bsc', '', '', '', 0, 2] },
    ];
    for (let round = 0; round < 3; round++) {
      for (const body of bodies) {
        const [a, b] = await Promise.all([rpc(cached.base, body), rpc(plain.base, body)]);
        expect(a.status).toBe(b.status);
        expect(a.text, `round ${round}: ${JSON.stringify(body).slice(0, 120)}`).toBe(b.text);
      }
    }
  });

  it('never serves the result for one address (or params list) to another', async () => {
    const calls = [
      ...holders.map((address, i) => balances(address, i)),
      // look-alikes: a prefix, upper case, a longer address; params that concatenate to the same text
      balances(holders[3]!.slice(0, -1), 100),
      balances(holders[3]!.toUpperCase().replace('0X', '0x'), 101),
      balances(`${holders[3]}0`, 102),
      { jsonrpc: '2.0', id: 103, method: 'inds_getBalancesByAddress', params: [10, 0, holders[3], 'bsc', '', '', '', 2] },
      { jsonrpc: '2.0', id: 104, method: 'inds_getBalancesByAddress', params: [10, 0, `${holders[3]}bsc`, '', '', '', '', 2] },
      { jsonrpc: '2.0', id: 105, method: 'inds_getBalancesByAddress', params: [1, 0, holders[3], '', '', '', '', 2] },
      { jsonrpc: '2.0', id: 106, method: 'inds_getBalancesByAddress', params: [10, 1, holders[3], '', '', '', '', 2] },
    ];
    const truth = await Promise.all(calls.map((c) => rpc(plain.base, c)));
    for (let round = 0; round < 3; round++) {
      const order = calls.map((_, i) => i).sort(() => Math.random() - 0.5);
      // as single calls and as one batch, concurrently
      const singles = await Promise.all(order.map((i) => rpc(cached.base, calls[i])));
      singles.forEach((reply, k) => expect(reply.text, `round ${round} call ${order[k]}`).toBe(truth[order[k]!]!.text));
      const batch = await rpc(cached.base, order.map((i) => calls[i]));
      expect(batch.text).toBe(`[${order.map((i) => truth[i]!.text).join(',')}]`);
    }
    expect(new Set(truth.map((t) => JSON.stringify(t.json.result))).size).toBeGreaterThan(12);
  });

  it('keys on the method as called, the exact params, the interface version and the data version', () => {
    const p = [10, 0, '0xab', 'c'];
    const base = rpcKey('ns', '1', 'v2', 'm', p);
    expect(rpcKey('ns', '1', 'v2', 'm', [10, 0, '0xa', 'bc'])).not.toBe(base);
    expect(rpcKey('ns', '1', 'v2', 'm', [10, 0, '0xab', 'c', ''])).not.toBe(base);
    expect(rpcKey('ns', '1', 'v2', 'm', ['10', 0, '0xab', 'c'])).not.toBe(base);
    expect(rpcKey('ns', '1', 'v1', 'm', p)).not.toBe(base);
    expect(rpcKey('ns', '2', 'v2', 'm', p)).not.toBe(base);
    expect(rpcKey('ns', '1', 'v2', 'm2', p)).not.toBe(base);
    expect(rpcKey('other', '1', 'v2', 'm', p)).not.toBe(base);
    expect(rpcKey('ns', '1', 'v2', 'm', [10, 0, '0xab', 'c'])).toBe(base);
    // big numbers keep their exact text: 2^53 + 1 is not 2^53
    const big = parseLossless('[9007199254740993]') as unknown[];
    expect(big[0]).toBeInstanceOf(LosslessNumber);
    expect(rpcKey('ns', '1', 'v2', 'm', big)).not.toBe(rpcKey('ns', '1', 'v2', 'm', parseLossless('[9007199254740992]')));
    expect(rpcKey('ns', '1', 'v2', 'm', parseLossless('[1.0]'))).not.toBe(rpcKey('ns', '1', 'v2', 'm', [1]));
  });

  it('answers v1 and v2 of the same operation each in its own shape', async () => {
    const v1 = { jsonrpc: '2.0', id: 7, method: 'address.Balances', params: [10, 0, holders[5], '', '', '', ''] };
    const v2 = balances(holders[5]!, 7);
    for (let round = 0; round < 2; round++) {
      expect((await rpc(cached.base, v1, '/v1/rpc')).text).toBe((await rpc(plain.base, v1, '/v1/rpc')).text);
      expect((await rpc(cached.base, v2)).text).toBe((await rpc(plain.base, v2)).text);
    }
  });

  it('stores successful results only', async () => {
    const missing = { jsonrpc: '2.0', id: 8, method: 'index_getInscriptionByTick', params: ['bsc', 'bsc-20', 'nope'] };
    const invalid = { jsonrpc: '2.0', id: 9, method: 'inds_getBalancesByAddress', params: ['ten', 0, holders[0], '', '', '', '', 2] };
    for (let i = 0; i < 2; i++) {
      const a = await rpc(cached.base, missing);
      expect(a.json.error.code).toBe(-32603);
      expect(rpcLines().at(-1)).toMatchObject({ rpcMethod: 'index_getInscriptionByTick', code: -32603, cache: 'miss' });
      const b = await rpc(cached.base, invalid);
      expect(b.json.error.code).toBe(-32602);
      expect(rpcLines().at(-1)!.cache).toBe('bypass');
    }
  });

  it('is invalidated by a write through the indexer path within 1 s', async () => {
    const call = balances(holders[8]!);
    const before = await rpc(cached.base, call);
    expect((await rpc(cached.base, call)).text).toBe(before.text);
    expect(rpcLines().at(-1)!.cache).toBe('hit');
    await indexMint(db.sql, tick, holders[8]!, '11');
    const ms = await waitFor(async () => (await rpc(cached.base, call)).text !== before.text, 2_000, 5);
    expect(ms).toBeLessThan(1_000);
    const after = await rpc(cached.base, call);
    expect(after.text).toBe((await rpc(plain.base, call)).text);
    expect(after.json.result.inscriptions.find((x: any) => x.tick === 'rpcc').balance).toBe('519');
    expect(cached.gateway.ops.watcher.current()?.version).toBe(await dataVersion(db.sql));
  });
});
