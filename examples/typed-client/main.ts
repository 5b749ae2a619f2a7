import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { pathToFileURL } from 'node:url';
import { possibleTypes, typePolicies } from './cache.js';
import { graphql } from './graphql.js';

// A typed client of the gateway: Apollo Client with its normalised cache and automatic persisted queries
// (hash-only GET requests, which a CDN can cache), documents typed by gql.tada. Run it against a gateway:
//   npm start & npx tsx examples/typed-client/main.ts [http://127.0.0.1:8080/graphql]

export const TopTicks = graphql(`
  query TopTicks($first: Int!) {
    ticks(orderBy: HOLDERS, direction: DESC, first: $first) {
      totalCount
      edges { node { id chainName protocol tick stats { id holders progress status } } }
    }
  }
`);

export const TickById = graphql(`
  query TickById($id: ID!) {
    node(id: $id) { __typename id ... on Tick { tick totalSupply stats { id minted } } }
  }
`);

export const Balances = graphql(`
  query Balances($address: String!, $first: Int!) {
    balances(address: $address, first: $first) {
      totalCount
      edges { node { id balance tick { id chainName protocol tick } } }
    }
  }
`);

const sha256 = async (text: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex');

export function createClient(endpoint: string, fetchImpl: typeof fetch = fetch) {
  return new ApolloClient({
    // hashes first (GET, cacheable); the gateway asks for the document once (PersistedQueryNotFound)
    link: new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(new HttpLink({ uri: endpoint, fetch: fetchImpl })),
    cache: new InMemoryCache({ typePolicies, possibleTypes }),
  });
}

/** Lists the most held ticks, refetches the first by its global id, and an address's balances. */
export async function main(endpoint: string, address: string, client = createClient(endpoint)): Promise<string[]> {
  const lines: string[] = [];
  const top = await client.query({ query: TopTicks, variables: { first: 3 } });
  const ticks = top.data?.ticks.edges.map((e) => e.node) ?? [];
  lines.push(`${top.data?.ticks.totalCount ?? 0} ticks; most held:`);
  for (const t of ticks) lines.push(`  ${t.chainName} ${t.protocol} ${t.tick}: ${t.stats.holders} holders, ${t.stats.status}`);
  const first = ticks[0];
  if (first) {
    const again = await client.query({ query: TickById, variables: { id: first.id }, fetchPolicy: 'network-only' });
    const node = again.data?.node;
    if (node?.__typename === 'Tick') lines.push(`node(${node.id}): ${node.tick}, minted ${node.stats.minted} of ${node.totalSupply}`);
  }
  const balances = await client.query({ query: Balances, variables: { address, first: 5 } });
  lines.push(`${address} holds ${balances.data?.balances.totalCount ?? 0} ticks:`);
  for (const { node } of balances.data?.balances.edges ?? []) lines.push(`  ${node.tick.chainName} ${node.tick.tick}: ${node.balance}`);
  return lines;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const endpoint = process.argv[2] ?? 'http://127.0.0.1:8080/graphql';
  main(endpoint, process.argv[3] ?? '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A').then(
    (lines) => console.log(lines.join('\n')),
    (error: unknown) => { console.error(error); process.exit(1); },
  );
}
