import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { buildSchema, introspectionFromSchema, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedTypes, graphcacheKeys, possibleTypes, typePolicies } from '../../examples/typed-client/cache.js';
import { DEMO_NOTABLE } from '../../src/db/seed/demo.js';
import { loadDemo, useGateway } from '../support/gateway.js';

// Normalising client caches against a started gateway (demo data): Apollo Client's InMemoryCache (its
// development build: warnings on) and urql's graphcache. The same tick reached by two paths is one cached
// object, node(id) refetches it into that object, and the README's example queries print no "Cache data
// may be lost" warning (console.warn/error captured).

// Apollo's development checks are on when globalThis.__DEV__ is true at import time
(globalThis as { __DEV__?: boolean }).__DEV__ = true;
const apollo = await import('@apollo/client');
const dev = await import('@apollo/client/dev');
dev.loadDevMessages();
dev.loadErrorMessages();
const urql = await import('@urql/core');
const { cacheExchange } = await import('@urql/exchange-graphcache');

const root = fileURLToPath(new URL('../..', import.meta.url));
const sdl = readFileSync(`${root}/schema/schema.graphql`, 'utf8');
const readme = ['README.md', 'docs/graphql.md'].map((page) => readFileSync(`${root}/${page}`, 'utf8')).join('\n');

/** The documented example queries: every ```graphql block of the README and of docs/graphql.md. */
const readmeQueries = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!)
  .filter((q) => !q.includes('$')); // the ones with variables are shown with their own variables below

const crazydog = { chain: 'avalanche', protocol: 'asc-20', tick: 'crazydog' };
const holder = DEMO_NOTABLE.scriptedAddress;
const crazydogHolder = '0xF2f9D2575023D320475ed7875FCDCB9b52787E59'; // its deployer, who minted

const live = useGateway({ load: loadDemo, config: { CACHE: true } });
let warnings: string[] = [];
const original = { warn: console.warn, error: console.error };

beforeAll(() => {
  console.warn = (...args: unknown[]) => void warnings.push(format(...args));
  console.error = (...args: unknown[]) => void warnings.push(format(...args));
});
afterAll(async () => {
  Object.assign(console, original);
});

const gql = apollo.gql;

function apolloClient(withPolicies = true) {
  let requests = 0;
  const client = new apollo.ApolloClient({
    link: new apollo.HttpLink({ uri: `${live.base}/graphql`, fetch: (input, init) => { requests++; return fetch(input, init); } }),
    cache: new apollo.InMemoryCache(withPolicies ? { typePolicies, possibleTypes } : {}),
  });
  return { client, requests: () => requests };
}

const tickByKey = gql`query T($chain: String!, $protocol: String!, $tick: String!) {
  tick(chain: $chain, protocol: $protocol, tick: $tick) { id tick totalSupply stats { id holders } }
}`;
const balancesWithTicks = gql`query B($address: String!) {
  balances(address: $address, first: 50) { edges { node { id balance tick { id tick stats { id minted } } } } }
}`;
const nodeQuery = gql`query N($id: ID!) { node(id: $id) { __typename id ... on Tick { deployBy stats { id txCount } } } }`;

describe('Apollo Client InMemoryCache', () => {
  it('keeps one cached object for a tick reached by two paths, and node(id) refetches into it', async () => {
    warnings = [];
    const { client, requests } = apolloClient();
    const direct = await client.query({ query: tickByKey, variables: crazydog });
    const viaBalances = await client.query({ query: balancesWithTicks, variables: { address: crazydogHolder } });
    const id = (direct.data as any).tick.id as string;
    const same = (viaBalances.data as any).balances.edges.map((e: any) => e.node.tick).find((t: any) => t.id === id);
    expect(same, 'the holder holds crazydog').toBeDefined();
    const cached = client.cache.extract() as Record<string, any>;
    const key = client.cache.identify({ __typename: 'Tick', id })!;
    expect(cached.ROOT_QUERY[`tick(${JSON.stringify(crazydog)})`]).toEqual({ __ref: key });
    // both answers' stats fields merged into the one TickStats object
    const stats = cached[cached[key].stats.__ref];
    expect(stats).toMatchObject({ holders: expect.any(Number), minted: expect.any(String) });
    expect(Object.keys(cached).filter((k) => k.startsWith('Tick:'))).toContain(key);

    const before = requests();
    const refetched = await client.query({ query: nodeQuery, variables: { id }, fetchPolicy: 'network-only' });
    expect(requests()).toBe(before + 1);
    expect((refetched.data as any).node.id).toBe(id);
    const after = client.cache.extract() as Record<string, any>;
    expect(after.ROOT_QUERY[`node({"id":"${id}"})`]).toEqual({ __ref: key });
    expect(after[key]).toMatchObject({ tick: 'crazydog', totalSupply: expect.any(String), deployBy: expect.any(String) });
    expect(after[after[key].stats.__ref]).toMatchObject({ holders: expect.any(Number), minted: expect.any(String), txCount: expect.any(Number) });
    // read back from the cache alone: the tick by key now has what node(id) fetched
    const local = client.readQuery({ query: gql`query { tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { id deployBy stats { id txCount } } }` });
    expect((local as any).tick.deployBy).toBe(after[key].deployBy);
    expect(warnings).toEqual([]);
  });

  it('prints no "Cache data may be lost" warning for the README\'s example queries and their variations', async () => {
    expect(readmeQueries.length).toBeGreaterThanOrEqual(2);
    warnings = [];
    const { client } = apolloClient();
    for (const query of readmeQueries) await client.query({ query: gql(query) });
    // the same fields again with fewer subfields: what made Apollo warn before (Tick.stats, Query.balances)
    await client.query({ query: gql`{
      tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { id stats { id progress } }
      balances(address: "${holder}", first: 10) { edges { node { id balance } } }
    }` });
    await client.query({ query: gql(readmeQueries[0]!), fetchPolicy: 'network-only' });
    expect(warnings).toEqual([]);
  });

  it('needs no type policy for Tick.stats (it has an id); without the policies a connection still warns', async () => {
    warnings = [];
    const { client } = apolloClient(false);
    await client.query({ query: gql`{ tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { id stats { id minted } } }` });
    await client.query({ query: gql`{ tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { id stats { id holders } } }` });
    expect(warnings).toEqual([]);
    // the control: the capture sees Apollo's warning, and cache.ts' merge policies are what silence it
    await client.query({ query: gql`{ balances(address: "${holder}", first: 3) { totalCount edges { node { id } } } }` });
    await client.query({ query: gql`{ balances(address: "${holder}", first: 3) { edges { node { id balance } } } }` });
    expect(warnings.join('\n')).toMatch(/Cache data may be lost when replacing the balances field of a Query object/);
  });

  it('lists every object type without an id in examples/typed-client/cache.ts', () => {
    const schema = buildSchema(sdl);
    const objects = Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && !t.name.startsWith('__') && t.name !== 'Query' && t.name !== 'Subscription');
    const noId = objects.filter((t) => isObjectType(t) && !t.getFields().id).map((t) => t.name).sort();
    expect([...embeddedTypes].sort()).toEqual(noId);
    const nodes = objects.filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node')).map((t) => t.name).sort();
    expect(possibleTypes.Node).toEqual(nodes);
  });
});

describe('urql graphcache', () => {
  it('keeps one cached object for a tick reached by two paths, and node(id) refetches it', async () => {
    warnings = [];
    let requests = 0;
    const client = new urql.Client({
      url: `${live.base}/graphql`,
      fetch: (input, init) => { requests++; return fetch(input, init); },
      exchanges: [cacheExchange({ keys: graphcacheKeys, schema: introspectionFromSchema(buildSchema(sdl)) }), urql.fetchExchange],
    });
    const direct = await client.query(tickByKey, crazydog).toPromise();
    expect(direct.error).toBeUndefined();
    const id = direct.data.tick.id as string;
    const via = await client.query(balancesWithTicks, { address: crazydogHolder }).toPromise();
    expect(via.data.balances.edges.some((e: any) => e.node.tick.id === id)).toBe(true);
    expect(requests).toBe(2);
    // from the cache alone: `minted` came only with the balances answer, `holders` only with the direct one
    const local = await client.query(gql`query T($chain: String!, $protocol: String!, $tick: String!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) { id stats { id holders minted } } }`, crazydog,
    { requestPolicy: 'cache-only' }).toPromise();
    expect(local.data.tick.stats).toMatchObject({ holders: expect.any(Number), minted: expect.any(String) });
    expect(requests).toBe(2);
    const refetched = await client.query(nodeQuery, { id }, { requestPolicy: 'network-only' }).toPromise();
    expect(requests).toBe(3);
    expect(refetched.data.node).toMatchObject({ __typename: 'Tick', id, deployBy: expect.any(String) });
    // and the tick by key sees what node(id) brought
    const again = await client.query(gql`query T($chain: String!, $protocol: String!, $tick: String!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) { id deployBy stats { id txCount } } }`, crazydog,
    { requestPolicy: 'cache-only' }).toPromise();
    expect(again.data.tick.deployBy).toBe(refetched.data.node.deployBy);
    expect(warnings).toEqual([]);
  });

  it('prints no warning for the README\'s example queries', async () => {
    warnings = [];
    const client = new urql.Client({
      url: `${live.base}/graphql`,
      exchanges: [cacheExchange({ keys: graphcacheKeys, schema: introspectionFromSchema(buildSchema(sdl)) }), urql.fetchExchange],
    });
    for (const query of readmeQueries) {
      const result = await client.query(query, {}).toPromise();
      expect(result.error).toBeUndefined();
    }
    expect(warnings).toEqual([]);
  });
});
