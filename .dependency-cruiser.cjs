// The layers of src/, lowest first. A module may import its own layer and the layers
// below it, never one above: a lower layer that needs something from a higher one gets it passed in by
// the composition root (src/app.ts). `npm run lint:deps` checks this (it runs in `npm test`, so in CI);
// type-only imports count too.
//
//   domain        pure values and codes (no I/O)
//   config        the environment's schema (src/config.ts)
//   request       the request scope (request/scope.ts): the plain object every layer of a request writes
//                 into directly, so that none calls back up into another to record
//   db            SQL, pools, sources, the data-version watcher
//   observability logger, metrics, the HTTP wrapper that opens a request's scope and logs it
//   cache         response cache (uses the logger and metrics)
//   access        API keys and quotas: the key registry, token buckets (Redis or in process), the per-request
//                 access decision and the RateLimit headers (uses db for the keys, the cache's Redis breaker,
//                 the logger); the layers above read its access class (per-key overrides), the server calls it
//   live          subscription events' fan-out
//   loaders       DataLoaders over the store
//   graphql       schema, yoga
//   rpc           JSON-RPC over the GraphQL schema
//   server        the HTTP listener
//   app           the composition root (src/app.ts), then src/main.ts
//   sync          the read model's writer (never on the gateway's read path): source/ its MySQL, target/ its
//                 PostgreSQL statements
//   cli           command-line entry points
const layers = [
  ['domain', '^src/domain/'],
  ['config', '^src/config\\.ts$'],
  ['request', '^src/request/'],
  ['db', '^src/db/'],
  ['observability', '^src/observability/'],
  ['cache', '^src/cache/'],
  ['access', '^src/access/'],
  ['live', '^src/live/'],
  ['loaders', '^src/loaders/'],
  ['graphql', '^src/graphql/'],
  ['rpc', '^src/rpc/'],
  ['server', '^src/server/'],
  ['app', '^src/app\\.ts$'],
  ['main', '^src/main\\.ts$'],
  ['sync', '^src/sync/'],
  ['cli', '^src/cli/'],
];

// Known, deliberate exceptions: [from, to, why].
const allowed = [];

const upward = layers.slice(0, -1).map(([name, path], i) => ({
  name: `no-upward-from-${name}`,
  comment: `${name} may import only ${layers.slice(0, i + 1).map(([n]) => n).join(', ')} (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path },
  to: {
    path: layers.slice(i + 1).map(([, p]) => p),
    pathNot: allowed.filter(([from]) => from === path).map(([, to]) => to),
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-cycles',
      comment: 'import cycles in src',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'read-path-never-imports-sync',
      comment: 'the gateway (everything reachable from src/main.ts and src/app.ts) never imports src/sync',
      severity: 'error',
      from: { path: '^src/(main|app)\\.ts$' },
      to: { path: '^src/sync/', reachable: true },
    },
    {
      name: 'mysql-only-in-sync-source',
      comment: 'the MySQL driver is reached only through src/sync/source (its SQL lives there)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/sync/source/' },
      to: { path: 'node_modules/mysql2/' },
    },
    {
      name: 'sync-target-writes-postgresql-only',
      comment: 'src/sync/target holds the sync\'s PostgreSQL statements: it never reads the source',
      severity: 'error',
      from: { path: '^src/sync/target/' },
      to: { path: '^src/sync/(source/|[^/]+$)' },
    },
    {
      name: 'src-stays-in-the-image',
      comment: 'src/ imports only src/, schema/ and packages: the image builds from those (examples/, test/ and bench/ are not copied)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(?!(src|schema|node_modules)/)', dependencyTypesNot: ['core'], couldNotResolve: false },
    },
    {
      name: 'dataloader-only-in-loaders',
      comment: 'every DataLoader is built in src/loaders/ (the surfaces ask for them by name)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/loaders/' },
      to: { path: 'node_modules/dataloader/' },
    },
    {
      name: 'plugin-packages-only-in-plugins',
      comment: 'yoga/envelop plugin packages are used only by the plugins in src/graphql/plugins/use-*.ts',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/graphql/plugins/' },
      to: { path: 'node_modules/(@envelop/|@graphql-yoga/plugin-|@escape\\.tech/graphql-armor-)' },
    },
    {
      name: 'yoga-plugins-only-in-plugins',
      comment: 'a yoga plugin is defined in src/graphql/plugins/use-*.ts; yoga.ts builds the server, errors.ts masks errors; '
        + 'the response cache\'s plugin stays in its layer (src/cache/graphql.ts)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/graphql/(plugins/|yoga\\.ts$|errors\\.ts$)|^src/cache/graphql\\.ts$' },
      to: { path: 'node_modules/graphql-yoga/' },
    },
    {
      name: 'plugins-folder-holds-use-files',
      comment: 'src/graphql/plugins/ holds use-*.ts files only (yoga\'s own layout)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/graphql/plugins/(?!use-[^/]+\\.ts$)' },
    },
    {
      name: 'rpc-knows-the-cache-by-its-types-only',
      comment: 'the JSON-RPC layer gets its cache from the composition root and reads a pre-serialised result by its marker '
        + '(src/domain/json-text.ts): it imports types of src/cache, never a class or function of it',
      severity: 'error',
      from: { path: '^src/rpc/' },
      to: { path: '^src/cache/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve (a typo, or a missing dependency)',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    // type-only imports are layer edges too
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.d.ts', '.js', '.json'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
