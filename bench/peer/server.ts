// PostGraphile v5 on node:http (grafserv), for `npm run bench:peer` (bench/peer.ts) only: the peer the gateway is
// compared with, on the same database. PostGraphile is installed on demand into bench/peer/node_modules (see
// bench/peer/package.json); it is not a dependency of the gateway, so it is loaded here by a specifier in a
// variable (TypeScript does not resolve it, and `tsc`/lint pass without it installed).
//
//   node --import tsx bench/peer/server.ts   (env: DATABASE_URL, PORT, HOST, DB_POOL_MAX)
//
// The schema is PostGraphile's Amber preset over the read model's `public` schema, read-only, with what a
// user would add to serve the same queries (all of it in this file):
// - holders are the balances > 0 (the read model keeps zero balances): a `holding` condition on `balances`
//   (addPgTableCondition, PostGraphile's documented way to add a computed condition);
// - `balances.balance` is indexed only by partial indexes (WHERE balance > 0), which PostGraphile does not count
//   as indexed, so it offers no ordering by it: a smart tag gives it back (`@behavior +orderBy`);
// - `ticks` is unique by (chain, lower(deploy hash)) through a unique index, which PostGraphile does not turn into
//   a look-up: a `@unique chain,deploy_hash_key` smart tag does;
// - no mutations (the gateway is read-only; the session is read-only too).
import { createServer } from 'node:http';
import { installPolyfills } from './polyfills.js';

installPolyfills();

const load = (specifier: string): Promise<any> => import(specifier);

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/igw_bench';
const port = Number(process.env.PORT ?? 8090);
const host = process.env.HOST ?? '127.0.0.1';
const poolMax = Number(process.env.DB_POOL_MAX ?? 10);
/** What the benchmark finds this server's PostgreSQL backends by (pg_stat_activity.application_name). */
export const peerApplicationName = 'igw-bench-postgraphile';

async function main() {
  const [{ postgraphile }, { PostGraphileAmberPreset }, { makePgService }, { grafserv }, utils] = await Promise.all([
    load('postgraphile'),
    load('postgraphile/presets/amber'),
    load('postgraphile/adaptors/pg'),
    load('postgraphile/grafserv/node'),
    load('postgraphile/utils'),
  ]);
  const { addPgTableCondition, jsonPgSmartTags } = utils;

  const holding = addPgTableCondition(
    { schemaName: 'public', tableName: 'balances' },
    'holding',
    (build: any) => ({ description: 'true: balances > 0 only (the holders); false: the zero balances.', type: build.graphql.GraphQLBoolean }),
    (value: unknown, { sql, sqlTableAlias }: any) => {
      if (value === null || value === undefined) return null;
      return value ? sql`${sqlTableAlias}.balance > 0` : sql`${sqlTableAlias}.balance = 0`;
    },
  );
  const tags = jsonPgSmartTags({
    version: 1,
    config: {
      attribute: { 'balances.balance': { tags: { behavior: ['+orderBy'] } } },
      // the (chain, deploy hash) look-up is a unique index, not a constraint: PostGraphile needs it declared
      class: { ticks: { tags: { unique: 'chain,deploy_hash_key' } } },
    },
  });

  const preset = {
    extends: [PostGraphileAmberPreset],
    plugins: [holding, tags],
    disablePlugins: ['PgMutationCreatePlugin', 'PgMutationUpdateDeletePlugin', 'PgMutationPayloadEdgePlugin'],
    schema: { defaultBehavior: '-mutationField' },
    pgServices: [
      makePgService({
        connectionString: databaseUrl,
        schemas: ['public'],
        pubsub: false,
        poolConfig: {
          max: poolMax,
          application_name: peerApplicationName,
          options: '-c default_transaction_read_only=on',
        },
      }),
    ],
    grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false, websockets: false },
    grafast: { explain: false },
  };

  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  const server = createServer();
  await serv.addTo(server);
  // the schema is built before the first request is answered (so the benchmark's warm-up measures nothing else)
  await pgl.getSchemaResult();
  server.listen(port, host, () => console.log(`postgraphile ${host}:${port} ready`));
  const stop = () => {
    server.close();
    void pgl.release().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
