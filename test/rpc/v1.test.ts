import { describe, expect, it } from 'vitest';
import { addGgang, allDocumentedExchanges, crazydogDeployer, crazydogHash, documentedFixture, lobbyDeployer, lobbyHash, tomrayHash } from '../support/documented.js';
import { useGateway } from '../support/gateway.js';
import { alice, bob, fakeHash, Fixture } from '../support/fixtures.js';
import { call, post } from '../support/http.js';
import { expectExact } from '../support/rpc.js';

// The v1 interface on /v1/rpc (and /v1/): the ten dotted names, each answering as its v2 twin with the
// v1 positional list, on real PostgreSQL; their not-found and bad-input paths; and the documented v1
// exchanges of test/fixtures/documented-all.json (slips named where they are).

const v1Exchange = (method: string) => allDocumentedExchanges.find((e) => e.method === method && e.endpoint === '/v1/')!;

const avasHash = '0x7ffc56b2bf20f4f3474c1fd503fc3f1fb9066c8b0665d6da11185cac892108a5';
const tomrayMint = '646174613a2c7b2270223a226173632d3230222c226f70223a226d696e74222c227469636b223a22746f6d726179222c22616d74223a2231227d';

/** The documented records with transfer type 0 and the ticks the v1 twins of v2 read. */
function typeZeroFixture(): Fixture {
  const f = documentedFixture(0);
  addGgang(f);
  const tomray = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'tomray', total_supply: '1000', limit_per_mint: '1', transfer_type: 2, deploy_hash: tomrayHash });
  f.mint(tomray, alice, '3').mint(tomray, bob, '5').mint(tomray, alice, '4').transfer(tomray, alice, bob, '1'); // alice 6, bob 6: tie broken by address
  const avas = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'avas', deploy_hash: avasHash });
  f.mint(avas, alice, '1000');
  const lobby = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', deploy_hash: lobbyHash, deploy_by: lobbyDeployer, transfer_type: 1 });
  const deployed = '2023-12-27T08:02:50.000Z';
  f.data.transactions.push({
    chain: 'avalanche', protocol: 'asc-20', block_height: 39585640, position_in_block: 56, block_time: deployed, tx_hash: lobbyHash,
    from_address: lobbyDeployer, to_address: lobbyDeployer, op: 'deploy', tick: 'lobby', amt: '0', gas: 1, gas_price: 1, status: 1,
    created_at: deployed, updated_at: deployed,
  });
  f.data.movements.push({
    chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', address: lobbyDeployer, tx_hash: lobbyHash, amount: '0', event: 1,
    operate: 'deploy', created_at: deployed, updated_at: deployed,
  });
  f.mint(lobby, alice, '10');
  f.block('avalanche', '40433785', '2024-01-16T10:18:46Z', '2024-01-16T10:19:00Z');
  return f;
}

describe('v1 on data where crazydog has transfer type 0', () => {
  const env = useGateway({ load: (db) => typeZeroFixture().load(db.sql) });
  const v1 = (method: string, params: unknown[], path = '/v1/rpc') => call(env.base, method, params, path);
  const v2 = (method: string, params: unknown[]) => call(env.base, method, params, '/v2/rpc');
  async function same(v1Method: string, v1Params: unknown[], v2Method: string, v2Params: unknown[]) {
    const [one, two] = await Promise.all([v1(v1Method, v1Params), v2(v2Method, v2Params)]);
    expect(one.error, JSON.stringify(one.error)).toBeUndefined();
    expect(two.error, JSON.stringify(two.error)).toBeUndefined();
    expectExact(one.result, two.result);
    return one.result;
  }
  async function fails(method: string, params: unknown[], code: number) {
    const reply = await v1(method, params);
    expect(reply.error?.code, JSON.stringify(reply)).toBe(code);
    expect(reply.result).toBeUndefined();
    return reply.error;
  }


  describe('each v1 method answers as its v2 twin', () => {
    it('inscription.All (7 params: no sort_mode, descending) = inds_getTicks', async () => {
      const result = await same('inscription.All', [10, 0, '', '', '', '', 3], 'inds_getTicks', [10, 0, '', '', '', '', 3, 2]);
      expect(result.inscriptions.map((t: any) => t.holders)).toEqual([2, 2, 1, 1, 1]); // ggang, tomray; crazydog, avas, lobby
      await same('inscription.All', [2, 1, 'avalanche', 'ASC-20', '', '', 1], 'inds_getTicks', [2, 1, 'avalanche', 'ASC-20', '', '', 1, 2]);
      await same('inscription.All', [], 'inds_getTicks', []);
    });

    it('inscription.Tick = index_getInscriptionByTick', async () => {
      await same('inscription.Tick', ['avalanche', 'asc-20', 'tomray'], 'index_getInscriptionByTick', ['avalanche', 'asc-20', 'tomray']);
    });

    it('address.Transactions (8 params, and the 7-param form) = inds_getTransactionByAddress', async () => {
      const eight = [10, 0, alice, 'avalanche', '', '', 'ray', 3];
      const result = await same('address.Transactions', eight, 'inds_getTransactionByAddress', eight);
      expect(result.transactions.map((t: any) => [t.tick, t.event])).toEqual([['tomray', 4]]);
      await same('address.Transactions', [10, 0, alice, '', '', '', 2], 'inds_getTransactionByAddress', [10, 0, alice, '', '', '', 2]);
    });

    it('address.Balances (7 params: no sort, descending) = inds_getBalancesByAddress', async () => {
      const result = await same('address.Balances', [10, 0, alice, '', '', '', ''], 'inds_getBalancesByAddress', [10, 0, alice, '', '', '', '', 2]);
      expect(result.inscriptions.map((b: any) => [b.tick, b.balance])).toEqual([['avas', '1000'], ['lobby', '10'], ['tomray', '6']]);
      await same('address.Balances', [10, 0, alice, '', '', '', 'OBB'], 'inds_getBalancesByAddress', [10, 0, alice, '', '', '', 'OBB', 2]);
    });

    it('address.Balance = inds_getAddressBalance', async () => {
      const result = await same('address.Balance', [bob, 'avalanche', 'asc-20', 'tomray'], 'inds_getAddressBalance', [bob, 'avalanche', 'asc-20', 'tomray']);
      expectExact(result, { tick: 'tomray', balance: '6', transfer_type: 2, deploy_hash: tomrayHash, available: '6' });
    });

    it('tick.Holders (5 params: no sort, descending) = inds_getHoldersByTick', async () => {
      const result = await same('tick.Holders', [10, 0, 'avalanche', 'asc-20', 'tomray'], 'inds_getHoldersByTick', [10, 0, 'avalanche', 'asc-20', 'tomray', 2]);
      expect(result.holders.map((h: any) => [h.address, h.balance])).toEqual([[bob, '6'], [alice, '6']]);
    });

    it('block.LastNumber = inds_getLastBlockNumberIndexed', async () => {
      await same('block.LastNumber', [[]], 'inds_getLastBlockNumberIndexed', [[]]);
      await same('block.LastNumber', [['avalanche']], 'inds_getLastBlockNumberIndexed', [['avalanche']]);
    });

    it('tool.InscriptionTxOperate = inds_getTickByCallData', async () => {
      await same('tool.InscriptionTxOperate', ['avalanche', tomrayMint], 'inds_getTickByCallData', ['avalanche', tomrayMint]);
    });

    it('transaction.Info = inds_getTransactionByHash', async () => {
      await same('transaction.Info', ['avalanche', lobbyHash], 'inds_getTransactionByHash', ['avalanche', lobbyHash]);
    });

    it('tick.GetBriefs = inds_getTickBriefs', async () => {
      const selectors = [[{ chain: 'avalanche', deploy_hash: avasHash }, { chain: 'avalanche', deploy_hash: crazydogHash }]];
      const result = await same('tick.GetBriefs', selectors, 'inds_getTickBriefs', selectors);
      expect(result.inscriptions.map((t: any) => t.tick)).toEqual(['avas', 'crazydog']);
    });
  });

  describe('not found', () => {
    it('lookups answer -32603 Record not found', async () => {
      await fails('inscription.Tick', ['avalanche', 'asc-20', 'nope'], -32603);
      await fails('tick.Holders', [10, 0, 'avalanche', 'asc-20', 'nope'], -32603);
      await fails('address.Balance', [alice, 'avalanche', 'asc-20', 'nope'], -32603);
      expect((await fails('block.LastNumber', [['nochain']], -32603)).data.chains).toEqual(['nochain']);
      await fails('tool.InscriptionTxOperate', ['avalanche', 'a9059cbb'], -32603);
      await fails('transaction.Info', ['avalanche', fakeHash(777777)], -32603);
    });

    it('lists answer empty pages', async () => {
      expect((await v1('inscription.All', [10, 0, 'avalanche', 'asc-20', 'nope', '', 0])).result).toEqual({ inscriptions: [], total: 0, limit: 10, offset: 0 });
      expect((await v1('address.Transactions', [10, 0, '0x9999', '', '', '', '', 0])).result.transactions).toEqual([]);
      expect((await v1('address.Balances', [10, 0, '0x9999', '', '', '', ''])).result.inscriptions).toEqual([]);
      expect((await v1('tick.GetBriefs', [[{ chain: 'avalanche', deploy_hash: fakeHash(777778) }]])).result).toEqual({ inscriptions: [] });
    });
  });

  describe('bad input', () => {
    it('more params than the v1 list has', async () => {
      await fails('inscription.All', [10, 0, '', '', '', '', 0, 2], -32602);
      await fails('inscription.Tick', ['avalanche', 'asc-20', 'tomray', ''], -32602);
      await fails('address.Transactions', [10, 0, alice, '', '', '', '', 0, 0], -32602);
      await fails('address.Balances', [10, 0, alice, '', '', '', '', 2], -32602);
      await fails('address.Balance', [alice, 'avalanche', 'asc-20', 'tomray', ''], -32602);
      await fails('tick.Holders', [10, 0, 'avalanche', 'asc-20', 'tomray', 2], -32602);
      await fails('block.LastNumber', [[], []], -32602);
      await fails('tool.InscriptionTxOperate', ['avalanche', tomrayMint, ''], -32602);
      await fails('transaction.Info', ['avalanche', lobbyHash, ''], -32602);
      await fails('tick.GetBriefs', [[], []], -32602);
    });

    it('wrong types and values', async () => {
      const error = await fails('inscription.All', ['10', 0], -32602);
      expect(error.message).toBe("Invalid params: parameter #1 'limit' must be an integer (got string)");
      await fails('inscription.All', [10, 0, '', '', '', '', 9], -32602);
      await fails('inscription.Tick', [1, 'asc-20', 'tomray'], -32602);
      await fails('address.Transactions', [10, 0, alice, '', '', '', '', 7], -32602);
      await fails('address.Balances', [-1, 0, alice], -32602);
      await fails('address.Balance', ['', 'avalanche', 'asc-20', 'tomray'], -32602);
      await fails('tick.Holders', [10, 0.5, 'avalanche', 'asc-20', 'tomray'], -32602);
      await fails('block.LastNumber', ['avalanche'], -32602);
      await fails('tool.InscriptionTxOperate', ['avalanche', '0xzz'], -32602);
      await fails('transaction.Info', ['avalanche', '0x12'], -32602);
      await fails('tick.GetBriefs', [[{ chain: 'avalanche' }]], -32602);
    });
  });

  describe('routing', () => {
    it('/v1/ and /v1/rpc/<anything> are v1; v1 and v2 names do not cross', async () => {
      for (const path of ['/v1/', '/v1', '/v1/rpc/', '/v1/rpc/inscription.Tick']) {
        expect((await v1('inscription.Tick', ['avalanche', 'asc-20', 'crazydog'], path)).result.tick).toBe('crazydog');
      }
      expect((await v1('index_getInscriptionByTick', ['avalanche', 'asc-20', 'crazydog'])).error.code).toBe(-32601);
      expect((await v2('inscription.Tick', ['avalanche', 'asc-20', 'crazydog'])).error.code).toBe(-32601);
    });

    it('a batch mixes v1 methods', async () => {
      const reply = await post(env.base, [
        { jsonrpc: '2.0', id: 1, method: 'inscription.Tick', params: ['avalanche', 'asc-20', 'crazydog'] },
        { jsonrpc: '2.0', id: 2, method: 'block.LastNumber', params: [['avalanche']] },
      ], '/v1/rpc');
      expect(reply.json.map((r: any) => [r.id, r.error])).toEqual([[1, undefined], [2, undefined]]);
    });
  });

  describe('documented v1 exchanges', () => {
    it('inscription.Tick: reproduced', async () => {
      const e = v1Exchange('inscription.Tick');
      expectExact((await v1(e.method, e.params)).result, e.response_result);
    });

    it('block.LastNumber: reproduced', async () => {
      const e = v1Exchange('block.LastNumber');
      expectExact((await v1(e.method, e.params)).result, e.response_result);
    });

    it('inscription.All: the documented element; limit echoes the request (the documented 1 is a slip)', async () => {
      const e = v1Exchange('inscription.All');
      const { result } = await v1(e.method, e.params);
      const documented = e.response_result.inscriptions[0];
      expectExact(result.inscriptions.find((t: any) => t.tick === documented.tick), documented);
      expect([result.limit, result.offset]).toEqual([10, 0]);
    });

    it('address.transactions (lower-case t, as documented) is address.Transactions: v1 names match in any case', async () => {
      const e = v1Exchange('address.transactions');
      expectExact((await v1(e.method, e.params)).result, e.response_result);
      expect((await v1('ADDRESS.TRANSACTIONS', e.params)).result).toEqual((await v1('address.Transactions', e.params)).result);
      expect((await v1('tick.holders', [10, 0, 'avalanche', 'asc-20', 'crazydog'])).result.total).toBe(1);
      // v2 names stay exact
      expect((await call(env.base, 'INDS_getTicks', [])).error.code).toBe(-32601);
    });

    it('address_Transactions (the name the v1 document lists, so that generated clients compile) is address.Transactions', async () => {
      const e = v1Exchange('address.transactions');
      expectExact((await v1('address_Transactions', e.params)).result, e.response_result);
      expect((await v1('tick_holders', [10, 0, 'avalanche', 'asc-20', 'crazydog'])).result.total).toBe(1);
      // only the dot becomes an underscore
      expect((await v1('addressTransactions', e.params)).error.code).toBe(-32601);
    });

    it('tool.InscriptionTxOperate: reproduced plus deploy_hash (the existing service always sends it)', async () => {
      const e = v1Exchange('tool.InscriptionTxOperate');
      expectExact((await v1(e.method, e.params)).result, { ...e.response_result, deploy_hash: tomrayHash });
    });

    it('transaction.Info: the older documented shape, its members where the current shape has them', async () => {
      const e = v1Exchange('transaction.Info');
      const { result } = await v1(e.method, e.params);
      const old = e.response_result.transaction;
      expect(result.is_inscription).toBe(true);
      expect([result.transaction.protocol, result.transaction.tick, result.transaction.from, result.transaction.to])
        .toEqual([old.protocol, old.tick, old.from, old.to]);
      expect(result.inscriptions.deploy_hash).toBe(old.deploy_hash);
      expect(result.data.amt).toBe(old.amount);
    });

    it('tick.Holders: the documented 6 params (an address before the chain) list that address\'s holding; the 5-param form lists all', async () => {
      const e = v1Exchange('tick.Holders');
      expect(e.params).toHaveLength(6);
      const { result } = await v1(e.method, e.params);
      // the documented entry, with this gateway's holder members (deploy_hash filled, total_supply; no transfer_type)
      const documented = e.response_result.holders[0];
      expect(result.holders.map((h: any) => [h.chain, h.protocol, h.tick, h.address, h.balance]))
        .toEqual([[documented.chain, documented.protocol, documented.tick, documented.address, documented.balance]]);
      expect([result.total, result.limit, result.offset]).toEqual([1, 10, 0]);
      // an address holding none of it, an offset past the one holding, and "" (every holder)
      expect((await v1(e.method, [10, 0, alice, 'avalanche', 'asc-20', 'crazydog'])).result).toEqual({ holders: [], total: 0, limit: 10, offset: 0 });
      expect((await v1(e.method, [10, 1, crazydogDeployer, 'avalanche', 'asc-20', 'crazydog'])).result).toMatchObject({ holders: [], total: 1 });
      expect((await v1(e.method, [10, 0, '', 'avalanche', 'asc-20', 'crazydog'])).result.total).toBe(1);
      expect((await v1(e.method, [10, 0, crazydogDeployer, 'avalanche', 'asc-20', 'nope'])).error.code).toBe(-32603);
      const five = await v1(e.method, [10, 0, 'avalanche', 'asc-20', 'crazydog']);
      expectExact(five.result.holders, [{
        chain: 'avalanche', protocol: 'asc-20', tick: 'crazydog', deploy_hash: crazydogHash, address: crazydogDeployer, balance: '21000000', total_supply: '21000000',
      }]);
    });
  });
});

describe('v1 on data where crazydog has transfer type 1', () => {
  const env = useGateway({ load: (db) => documentedFixture(1).load(db.sql) });

  it('address.Balances: the documented 6-param request (trailing key left out) is the documented reply', async () => {
    const e = v1Exchange('address.Balances');
    expect(e.params).toHaveLength(6);
    expectExact((await call(env.base, e.method, e.params, '/v1/rpc')).result, e.response_result);
  });

  it('address.Balance: "5.0" is a slip (the balance is whatever the data holds, in the trimmed decimal form); deploy_hash and available added', async () => {
    const e = v1Exchange('address.Balance');
    expectExact((await call(env.base, e.method, e.params, '/v1/rpc')).result, {
      tick: 'crazydog', balance: '21000000', transfer_type: 1, deploy_hash: crazydogHash, available: '21000000',
    });
  });
});
