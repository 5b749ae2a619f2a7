import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEMO_NOTABLE } from '../../src/db/seed/demo.js';
import { defaultQuery } from '../../src/graphql/yoga.js';
import { loadDemo, useDatabase, useGateways } from '../support/gateway.js';
import { post } from '../support/http.js';

// The attacks of the "variables bypass the cost limit" finding, on the demo dataset (300 ticks, the
// biggest with 1,456 holders): page sizes sent as variables, nested through Holder.tick → Tick.holders.
// The cost is computed with the request's variables and rejected before any statement is sent; a
// request that gets past the estimate (limit raised) stops at the execution cap on result nodes and
// bytes. Legitimate 1000-row pages (GraphQL and JSON-RPC) still pass, and with introspection off no
// error suggests field, argument or enum names.

const db = useDatabase({ load: loadDemo });
const gatewayWith = useGateways(db, {}, { ready: false });

const graphql = async (base: string, query: string, variables?: Record<string, unknown>, operationName?: string) => {
  const reply = await post(base, { query, variables, operationName }, '/graphql');
  return { status: reply.status, json: reply.json as any, bytes: reply.text.length };
};
const rpc = (base: string, method: string, params: unknown[]) =>
  post(base, { jsonrpc: '2.0', id: 1, method, params }).then((r) => r.json as any);

const twoLevels = `query Two($n: Int) { ticks(first: $n) { edges { node { tick
  holders(first: $n) { edges { node { address balance } } } } } } }`;
const threeLevels = `query Three($n: Int) { ticks(first: $n) { edges { node { tick
  holders(first: $n) { edges { node { address tick { holders(first: $n) { edges { node { address balance } } } } } } } } } } }`;
const cheap = '{ chains { chain } }';

describe('the cost is computed with the variables', () => {
  it.each([
    ['two nested holder levels', twoLevels, 4_004_001],
    ['three nested holder levels', threeLevels, 4_005_004_001],
  ])('%s with first: $n = 1000: a clean GRAPHQL_VALIDATION_FAILED naming the cost, no statement, a concurrent request answered', async (_name, query, cost) => {
    const { base, statements } = await gatewayWith();
    const [attack, other] = await Promise.all([graphql(base, query, { n: 1_000 }), graphql(base, cheap)]);
    expect(attack.status).toBe(200);
    expect(attack.json.data).toBeUndefined();
    // (extensions.freshness may come along, as on every reply)
    expect(attack.json).toMatchObject({
      errors: [{
        message: `Query Cost limit of 250000 exceeded, found ${cost} (GRAPHQL_MAX_COST; page sizes of nested lists multiply: ask for smaller pages)`,
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      }],
    });
    expect(other.json.data.chains.length).toBeGreaterThan(0);
    // only the cheap request reached the database
    expect(statements.filter((s) => /holders|FROM ticks/i.test(s))).toEqual([]);
  });

  it('the same document with a small n runs', async () => {
    const { base } = await gatewayWith();
    const small = await graphql(base, twoLevels, { n: 3 });
    expect(small.json.errors).toBeUndefined();
    expect(small.json.data.ticks.edges).toHaveLength(3);
    expect(small.json.data.ticks.edges[0].node.holders.edges.length).toBeGreaterThan(0);
  });

  it('fragments, inline fragments, defaults and @include/@skip are counted', async () => {
    const { base } = await gatewayWith();
    const viaFragments = `query F($n: Int = 1000, $yes: Boolean!) { ticks(first: $n) { ...Page } }
      fragment Page on TickConnection { edges { node { ... on Tick { holders(first: $n) @include(if: $yes) { ...Holders } } } } }
      fragment Holders on HolderConnection { edges { node { address balance } } }`;
    for (const yes of [true, false]) {
      const reply = await graphql(base, viaFragments, { yes });
      expect(reply.json.errors).toEqual([{ message: expect.stringMatching(/^Query Cost limit of 250000 exceeded, found 4003001 /), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    }
    // literal page sizes as before
    const literal = await graphql(base, '{ ticks(first: 1000) { edges { node { holders(first: 1000) { edges { node { address } } } } } } }');
    expect(literal.json.errors[0].message).toMatch(/^Query Cost limit of 250000 exceeded, found 3003001 /);
  });

  it('page sizes are the effective ones: MAX_PAGE_SIZE clamps, a missing first counts DEFAULT_PAGE_SIZE, offset does not multiply', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_COST: 200, DEFAULT_PAGE_SIZE: 100, MAX_PAGE_SIZE: 500 });
    const page = 'query($n: Int, $o: Int) { ticks(first: $n, offset: $o) { edges { node { tick } } } }';
    // 1 + n × (edges + node + tick)
    const clamped = await graphql(base, page, { n: 2_000_000_000 });
    expect(clamped.json.errors[0].message).toMatch(/^Query Cost limit of 200 exceeded, found 1501 /);
    const byDefault = await graphql(base, page, {});
    expect(byDefault.json.errors[0].message).toMatch(/^Query Cost limit of 200 exceeded, found 301 /);
    const withOffset = await graphql(base, page, { n: 50, o: 250 });
    expect(withOffset.json.errors).toBeUndefined();
    expect(withOffset.json.data.ticks.edges).toHaveLength(50);
    // several operations in one document: the one named is measured
    const two = `query Small { ticks(first: 5) { edges { node { tick } } } } query Big { ticks(first: 100) { edges { node { tick } } } }`;
    expect((await graphql(base, two, {}, 'Small')).json.data.ticks.edges).toHaveLength(5);
    expect((await graphql(base, two, {}, 'Big')).json.errors[0].message).toMatch(/found 301 /);
  });

  it('variables that do not coerce are reported by execution as before (BAD_USER_INPUT)', async () => {
    const { base } = await gatewayWith();
    const reply = await graphql(base, twoLevels, { n: 'many' });
    expect(reply.json.errors.map((e: any) => e.extensions.code)).toEqual(['BAD_USER_INPUT']);
    expect(reply.json.errors[0].message).toMatch(/\$n/);
  });
});

describe('the execution cap (the estimate raised out of the way)', () => {
  const noCost = { GRAPHQL_MAX_COST: 1_000_000_000_000 };

  it('three nested levels with n = 1000 stop at GRAPHQL_MAX_RESULT_NODES: one clean error, no data, the process stays small', async () => {
    const { base } = await gatewayWith(noCost);
    const heapBefore = process.memoryUsage().heapUsed;
    const [attack, other] = await Promise.all([graphql(base, threeLevels, { n: 1_000 }), graphql(base, cheap)]);
    expect(attack.json.data).toBeUndefined();
    expect(attack.json).toMatchObject({
      errors: [{
        message: 'Response too large: the result would hold more than 100000 objects and list items (GRAPHQL_MAX_RESULT_NODES); ask for smaller pages or fewer nested lists',
        extensions: { code: 'BAD_USER_INPUT' },
      }],
    });
    expect(other.json.data.chains.length).toBeGreaterThan(0);
    // the unguarded document grew the process by gigabytes before it died
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it('one tick\'s 1000 holders, each with the same tick\'s 1000 holders again (one statement, a million edges): stopped while emitting', async () => {
    const { chain, protocol, tick } = DEMO_NOTABLE.mostHoldersTick;
    const { base, statements } = await gatewayWith(noCost);
    const query = `query($n: Int) { tick(chain: "${chain}", protocol: "${protocol}", tick: "${tick}") {
      holders(first: $n) { edges { node { tick { holders(first: $n) { edges { node { address balance } } } } } } } } }`;
    const heapBefore = process.memoryUsage().heapUsed;
    const reply = await graphql(base, query, { n: 1_000 });
    expect(reply.json.data).toBeUndefined();
    expect(reply.json.errors).toEqual([{ message: expect.stringContaining('(GRAPHQL_MAX_RESULT_NODES)'), extensions: { code: 'BAD_USER_INPUT' } }]);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(256 * 1024 * 1024);
    // the tick, its holders page, and the same page once more for the nested level (the tick loader's cache
    // serves the tick): nothing per holder
    expect(statements.filter((s) => !s.includes('pg_catalog.pg_type')).length).toBeLessThanOrEqual(3);
  });

  it('once over, no further statement is sent', async () => {
    const { base, statements } = await gatewayWith({ ...noCost, GRAPHQL_MAX_RESULT_NODES: 100 });
    const query = '{ ticks(first: 200) { edges { node { tick holders(first: 5) { totalCount edges { node { address } } } } } } }';
    const reply = await graphql(base, query);
    expect(reply.json.errors).toEqual([{ message: expect.stringContaining('more than 100 objects and list items (GRAPHQL_MAX_RESULT_NODES)'), extensions: { code: 'BAD_USER_INPUT' } }]);
    expect(reply.json.data).toBeUndefined();
    // the tick page only: neither the holders of those ticks nor their counts
    // (postgres.js reads the array types once per connection: not the gateway's statements)
    const sent = statements.filter((s) => !s.includes('pg_catalog.pg_type'));
    expect(sent, sent.join('\n')).toHaveLength(1);
    expect(sent[0]).toMatch(/FROM ticks/i);
  });

  it('GRAPHQL_MAX_RESPONSE_BYTES: estimated as the rows come in, on both surfaces', async () => {
    const { base } = await gatewayWith({ ...noCost, GRAPHQL_MAX_RESPONSE_BYTES: 65_536 });
    const wide = 'query($n: Int) { ticks(first: $n) { edges { node { tick name deployBy deployHash stats { minted holders } } } } }';
    expect((await graphql(base, wide, { n: 20 })).json.data.ticks.edges).toHaveLength(20);
    const reply = await graphql(base, wide, { n: 1_000 });
    expect(reply.json.data).toBeUndefined();
    expect(reply.json).toMatchObject({
      errors: [{
        message: 'Response too large: the result would hold more than 65536 bytes (GRAPHQL_MAX_RESPONSE_BYTES); ask for smaller pages or fewer nested lists',
        extensions: { code: 'BAD_USER_INPUT' },
      }],
    });
    const viaRpc = await rpc(base, 'inds_getTicks', [1_000, 0, '', '', '', '', 0, 2]);
    expect(viaRpc.error).toEqual({
      code: -32602,
      message: expect.stringMatching(/^Invalid params: Response too large: .* more than 65536 bytes \(GRAPHQL_MAX_RESPONSE_BYTES\)/),
      data: { reason: expect.stringContaining('GRAPHQL_MAX_RESPONSE_BYTES') },
    });
  });
});

describe('legitimate large pages', () => {
  const { chain, protocol, tick } = DEMO_NOTABLE.mostHoldersTick;

  it('a 1000-row JSON-RPC page and its GraphQL twin pass with the default limits', async () => {
    const { base } = await gatewayWith();
    const holders = await rpc(base, 'inds_getHoldersByTick', [1_000, 0, chain, protocol, tick, 2]);
    expect(holders.result.holders).toHaveLength(1_000);
    expect(holders.result.total).toBeGreaterThan(1_000);
    const ticks = await rpc(base, 'inds_getTicks', [1_000, 0, '', '', '', '', 3, 2]);
    expect(ticks.result.inscriptions).toHaveLength(300);
    const query = `query($n: Int!) {
      tick(chain: "${chain}", protocol: "${protocol}", tick: "${tick}") {
        holders(first: $n) { totalCount edges { cursor node { address balance available tick { tick stats { holders minted progress } } } } }
      }
      ticks(first: $n) { totalCount edges { node { tick name deployBy totalSupply stats { minted holders txCount progress status } chain { name } } } }
    }`;
    const reply = await graphql(base, query, { n: 1_000 });
    expect(reply.json.errors).toBeUndefined();
    expect(reply.json.data.tick.holders.edges).toHaveLength(1_000);
    expect(reply.json.data.ticks.edges).toHaveLength(300);
  });

  it("the README's example query and GraphiQL's are answered", async () => {
    const { base } = await gatewayWith();
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const example = readme.slice(readme.indexOf('```graphql\n') + 11, readme.indexOf('```', readme.indexOf('```graphql\n') + 11));
    const reply = await graphql(base, example);
    expect(reply.json.errors).toBeUndefined();
    expect(reply.json.data.tick.holders.edges.length).toBeGreaterThan(0);
    expect(reply.json.data.balances.edges.length).toBeGreaterThan(0);
    expect((await graphql(base, defaultQuery)).json.errors).toBeUndefined();
  });

  it('each operation of a JSON-RPC batch has its own budget', async () => {
    // one 1000-row holders page is 2,002 objects and items; three would be 6,006
    const { base } = await gatewayWith({ GRAPHQL_MAX_RESULT_NODES: 2_500 });
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'inds_getHoldersByTick', params: [1_000, 0, chain, protocol, tick, 2] });
    const batch = (await post(base, [call(1), call(2), call(3)])).json as any[];
    expect(batch.map((r) => r.result.holders.length)).toEqual([1_000, 1_000, 1_000]);
  });
});

describe('field suggestions', () => {
  const typos = [
    ['a field', '{ tiks { totalCount } }', /Cannot query field "tiks" on type "Query"/],
    ['an argument', '{ ticks(frist: 1) { totalCount } }', /Unknown argument "frist"/],
    ['an enum value', '{ ticks(orderBy: HOLDER) { totalCount } }', /Value "HOLDER" does not exist in "TickOrderField" enum/],
    ['a type', 'query($o: TickOrder) { ticks { totalCount } }', /Unknown type "TickOrder"/],
  ] as const;

  it.each(typos)('with introspection on, %s typo is answered with a suggestion', async (_what, query, pattern) => {
    const { base } = await gatewayWith({ GRAPHQL_INTROSPECTION: true });
    const reply = await graphql(base, query);
    expect(reply.json.errors[0].message).toMatch(pattern);
    expect(reply.json.errors.some((e: any) => /Did you mean/.test(e.message))).toBe(true);
  });

  it.each(typos)('with introspection off, %s typo gets the error without a suggestion', async (_what, query, pattern) => {
    const { base } = await gatewayWith({ GRAPHQL_INTROSPECTION: false });
    const reply = await graphql(base, query);
    expect(reply.json.errors[0].message).toMatch(pattern);
    expect(reply.json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    for (const error of reply.json.errors) expect(error.message).not.toMatch(/Did you mean/);
  });

  it('with introspection off, an enum variable that does not coerce gets no suggestion either', async () => {
    // a union in the selection: executed by graphql-js, whose variable errors carry the suggestion
    const query = 'query($o: TickOrderField!) { ticks(orderBy: $o) { totalCount } search(keyword: "sats") { __typename } }';
    const { base } = await gatewayWith({ GRAPHQL_INTROSPECTION: false });
    const reply = await graphql(base, query, { o: 'HOLDER' });
    expect(reply.json.errors).toMatchObject([{ message: expect.stringMatching(/Value "HOLDER" does not exist in "TickOrderField" enum\.$/), extensions: { code: 'BAD_USER_INPUT' } }]);
    const on = await gatewayWith({ GRAPHQL_INTROSPECTION: true });
    expect((await graphql(on.base, query, { o: 'HOLDER' })).json.errors[0].message).toMatch(/Did you mean the enum value "HOLDERS"\?/);
  });
});
