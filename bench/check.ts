// tsx bench/check.ts [--database-url URL] [--scale s [--seed N]]
//
// Verifies the invariants of the read model on a loaded database (any loader: bench:data, the demo seed,
// an indexer's copy) with whole-table SQL, and prints one line per check. With --scale, also compares the
// row counts and the notable records with what bench:data plans for that scale and seed.
// Exit code 0 = every check passed, 1 = a check failed.
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { listMigrations } from '../src/db/migrate.js';
import { connect, resolveTarget } from './lib/db.js';
import { BENCH_NOTABLE, DEFAULT_SEED, buildPlan } from './lib/plan.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    scale: { type: 'string' },
    seed: { type: 'string' },
  },
  strict: true,
});
const target = resolveTarget(values['database-url']);
const sql = connect(target.url);

interface Check { name: string; query: string; expect?: string }

/** Each query returns one row with `bad` (violations; 0 = pass) and optionally `example`. */
const checks: Check[] = [
  {
    name: 'minted = Σ mint movements (event 2), per tick',
    query: `WITH m AS (SELECT tick_id, sum(amount) AS s FROM address_txs WHERE event = 2 GROUP BY tick_id)
      SELECT count(*) AS bad, min(t.id) AS example FROM ticks t LEFT JOIN m ON m.tick_id = t.id
       WHERE t.minted <> coalesce(m.s, 0)`,
  },
  {
    name: 'Σ balances = minted, per tick',
    query: `WITH b AS (SELECT tick_id, sum(balance) AS s FROM balances GROUP BY tick_id)
      SELECT count(*) AS bad, min(t.id) AS example FROM ticks t LEFT JOIN b ON b.tick_id = t.id
       WHERE t.minted <> coalesce(b.s, 0)`,
  },
  {
    name: 'minted ≤ total_supply',
    query: `SELECT count(*) AS bad, min(id) AS example FROM ticks WHERE minted > total_supply`,
  },
  {
    name: 'holders = balances > 0, per tick',
    query: `WITH h AS (SELECT tick_id, count(*) AS n FROM balances WHERE balance > 0 GROUP BY tick_id)
      SELECT count(*) AS bad, min(t.id) AS example FROM ticks t LEFT JOIN h ON h.tick_id = t.id
       WHERE t.holders <> coalesce(h.n, 0)`,
  },
  {
    name: 'balance history: the current row (valid_to NULL) of each (tick, address) is its balance, nothing else is current',
    query: `SELECT count(*) AS bad, min(coalesce(b.tick_id, h.tick_id)) AS example
              FROM (SELECT * FROM balances WHERE balance > 0) b
              FULL JOIN (SELECT * FROM balance_history WHERE valid_to IS NULL AND balance > 0) h
                ON h.tick_id = b.tick_id AND h.address_key = b.address_key
             WHERE b.balance IS DISTINCT FROM h.balance`,
  },
  {
    name: 'balance history: intervals follow (block_height, id) per (tick, address)',
    query: `SELECT count(*) AS bad, min(id) AS example FROM (
              SELECT id, valid_to, lead(block_height) OVER (PARTITION BY tick_id, address_key ORDER BY block_height, id) AS next
                FROM balance_history) x WHERE valid_to IS DISTINCT FROM next`,
  },
  {
    name: '0 ≤ available ≤ balance',
    query: `SELECT count(*) AS bad, min(tick_id) AS example FROM balances
             WHERE balance < 0 OR available < 0 OR available > balance`,
  },
  {
    name: 'tx_cnt = transactions of the tick (chain, protocol, tick)',
    query: `WITH x AS (SELECT chain, protocol, tick, count(*) AS n FROM transactions WHERE tick <> ''
                      GROUP BY chain, protocol, tick)
      SELECT count(*) AS bad, min(t.id) AS example FROM ticks t
        LEFT JOIN x ON x.chain = t.chain AND x.protocol = t.protocol AND x.tick = t.tick
       WHERE t.tx_cnt <> coalesce(x.n, 0)`,
  },
  {
    name: 'no inscription transaction without its tick',
    query: `SELECT count(*) AS bad, min(x.id) AS example FROM transactions x
             WHERE x.tick <> '' AND NOT EXISTS (SELECT 1 FROM ticks t
                   WHERE t.chain = x.chain AND t.protocol = x.protocol AND t.tick = x.tick)`,
  },
  {
    name: 'transfers: one event 4 + one event 3, same tx_hash and amount',
    query: `SELECT count(*) AS bad, min(tx_hash) AS example FROM (
              SELECT tick_id, tx_hash FROM address_txs WHERE event IN (3, 4) GROUP BY tick_id, tx_hash
              HAVING count(*) FILTER (WHERE event = 4) <> 1 OR count(*) FILTER (WHERE event = 3) <> 1
                  OR min(amount) <> max(amount)) p`,
  },
  {
    name: 'per tick: 1 deploy, mints and transfers match between movements and transactions',
    query: `WITH x AS (SELECT chain, protocol, tick,
                              count(*) FILTER (WHERE op = 'deploy') AS d, count(*) FILTER (WHERE op = 'mint') AS m,
                              count(*) FILTER (WHERE op = 'transfer') AS tr,
                              coalesce(sum(amt) FILTER (WHERE op = 'mint'), 0) AS ma,
                              count(*) FILTER (WHERE op NOT IN ('deploy', 'mint', 'transfer')) AS other
                         FROM transactions WHERE tick <> '' GROUP BY chain, protocol, tick),
            e AS (SELECT tick_id, count(*) FILTER (WHERE event = 1) AS d, count(*) FILTER (WHERE event = 2) AS m,
                         count(*) FILTER (WHERE event = 4) AS tr, count(*) FILTER (WHERE event = 3) AS tin
                    FROM address_txs GROUP BY tick_id)
      SELECT count(*) AS bad, min(t.id) AS example FROM ticks t
        LEFT JOIN x ON x.chain = t.chain AND x.protocol = t.protocol AND x.tick = t.tick
        LEFT JOIN e ON e.tick_id = t.id
       WHERE coalesce(x.d, 0) <> 1 OR coalesce(e.d, 0) <> 1 OR coalesce(x.m, 0) <> coalesce(e.m, 0)
          OR coalesce(x.tr, 0) <> coalesce(e.tr, 0) OR coalesce(e.tr, 0) <> coalesce(e.tin, 0)
          OR coalesce(x.other, 0) <> 0 OR coalesce(x.ma, 0) <> t.minted`,
  },
  {
    name: 'deploy movement = deployer + deploy hash',
    query: `SELECT count(*) AS bad, min(t.id) AS example FROM ticks t
             WHERE NOT EXISTS (SELECT 1 FROM address_txs a WHERE a.tick_id = t.id AND a.event = 1
                                  AND a.tx_hash = t.deploy_hash AND a.address = t.deploy_by)`,
  },
  {
    name: 'every movement has its transaction (chain, hash, op, amount)',
    query: `SELECT count(*) AS bad, min(a.id) AS example FROM address_txs a JOIN ticks t ON t.id = a.tick_id
             WHERE NOT EXISTS (SELECT 1 FROM transactions x WHERE x.chain = t.chain AND x.tx_hash_key = lower(a.tx_hash)
                                  AND x.tick = t.tick AND x.protocol = t.protocol AND x.op = a.operate
                                  AND (a.event = 1 OR x.amt = a.amount))`,
  },
  {
    name: 'transaction hashes unique per chain',
    query: `SELECT count(*) AS bad, min(tx_hash_key) AS example FROM (
              SELECT chain, tx_hash_key FROM transactions GROUP BY chain, tx_hash_key HAVING count(*) > 1) d`,
  },
  {
    name: 'list_totals = recount (ticks and transactions, every CUBE cell)',
    query: `WITH want AS (
              SELECT 'ticks'::text AS list, chain, protocol, NULL::text AS tick, count(*) AS n FROM ticks GROUP BY CUBE (chain, protocol)
              UNION ALL
              SELECT 'transactions', chain, protocol, tick, count(*) FROM transactions GROUP BY CUBE (chain, protocol, tick)),
            have AS (SELECT list, chain, protocol, tick, n FROM list_totals WHERE n <> 0),
            diff AS ((SELECT * FROM want EXCEPT ALL SELECT * FROM have) UNION ALL (SELECT * FROM have EXCEPT ALL SELECT * FROM want))
      SELECT count(*) AS bad, min(coalesce(chain, '*') || '/' || coalesce(protocol, '*')) AS example FROM diff`,
  },
  {
    name: 'address_tx_totals = recount (transactions sent or received per address, to itself once)',
    query: `WITH want AS (
              SELECT k AS address_key, count(*) AS n FROM (SELECT from_key AS k FROM transactions
                UNION ALL SELECT to_key FROM transactions WHERE to_key <> from_key) s GROUP BY k),
            have AS (SELECT address_key, n FROM address_tx_totals WHERE n <> 0),
            diff AS ((SELECT * FROM want EXCEPT ALL SELECT * FROM have) UNION ALL (SELECT * FROM have EXCEPT ALL SELECT * FROM want))
      SELECT count(*) AS bad, min(address_key) AS example FROM diff`,
  },
  {
    name: 'address_totals = recount (address_txs rows and positive balances per address)',
    query: `WITH want AS (
              SELECT address_key, sum(m) AS m, sum(b) AS b FROM (
                SELECT address_key, count(*) AS m, 0 AS b FROM address_txs GROUP BY address_key
                UNION ALL SELECT address_key, 0, count(*) FROM balances WHERE balance > 0 GROUP BY address_key) s
               GROUP BY address_key),
            have AS (SELECT address_key, movements AS m, balances AS b FROM address_totals WHERE movements <> 0 OR balances <> 0),
            diff AS ((SELECT * FROM want EXCEPT ALL SELECT * FROM have) UNION ALL (SELECT * FROM have EXCEPT ALL SELECT * FROM want))
      SELECT count(*) AS bad, min(address_key) AS example FROM diff`,
  },
  {
    name: 'identity sequences at or past max(id)',
    query: `SELECT ${['ticks', 'address_txs', 'transactions'].map((t) =>
      `(coalesce(pg_sequence_last_value(pg_get_serial_sequence('${t}', 'id')::regclass), 0)
          < (SELECT coalesce(max(id), 0) FROM ${t}))::int`).join(' + ')} AS bad, NULL AS example`,
  },
];

// indexes the migrations define must all exist and be valid (the loader drops and rebuilds them)
const indexNames = listMigrations()
  .flatMap(({ file }) => [...readFileSync(file, 'utf8').matchAll(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+(\w+)/gi)].map((m) => m[1]!));
checks.push({
  name: `the ${indexNames.length} indexes of sql/ exist and are valid; primary keys in place`,
  query: `SELECT (SELECT count(*) FROM unnest(ARRAY[${indexNames.map((n) => `'${n}'`).join(', ')}]::text[]) AS w (name)
             WHERE NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
                                WHERE c.relname = w.name AND i.indisvalid AND i.indisready))
        + (SELECT count(*) FROM unnest(ARRAY['chains', 'indexed_blocks', 'ticks', 'balances', 'address_txs', 'transactions']) AS t (name)
             WHERE NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = t.name::regclass AND k.contype = 'p')) AS bad,
          NULL AS example`,
});

let failed = 0;
const started = performance.now();
await sql`SET work_mem = '256MB'`;
console.log(`check ${target.database}`);
for (const c of checks) {
  const t = performance.now();
  const [row] = await sql.unsafe<{ bad: string; example: string | null }[]>(c.query);
  const bad = Number(row?.bad ?? -1);
  if (bad !== 0) failed++;
  const took = ((performance.now() - t) / 1000).toFixed(1);
  console.log(`${bad === 0 ? 'PASS' : 'FAIL'}  ${c.name}${bad === 0 ? '' : `: ${bad} violations, e.g. ${row?.example}`}  [${took} s]`);
}

// shape and notable records
const [counts] = await sql<Record<string, string>[]>`
  SELECT (SELECT count(*) FROM ticks)::text AS ticks, (SELECT count(*) FROM balances)::text AS balances,
         (SELECT count(*) FROM address_txs)::text AS address_txs, (SELECT count(*) FROM transactions)::text AS transactions,
         (SELECT count(*) FROM balances WHERE balance = 0)::text AS zero_balances,
         (SELECT count(*) FROM transactions WHERE tick = '')::text AS plain_transactions`;
const top = await sql<{ chain: string; protocol: string; tick: string; holders: string }[]>`
  SELECT t.chain, t.protocol, t.tick, t.holders::text AS holders FROM ticks t ORDER BY t.holders DESC, t.id LIMIT 3`;
const busiest = await sql<{ address: string; n: string }[]>`
  SELECT min(address) AS address, count(*)::text AS n FROM address_txs GROUP BY address_key ORDER BY count(*) DESC LIMIT 2`;
const [q] = await sql<{ p50: string; p90: string; p99: string; max: string }[]>`
  SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY holders)::text AS p50, percentile_disc(0.9) WITHIN GROUP (ORDER BY holders)::text AS p90,
         percentile_disc(0.99) WITHIN GROUP (ORDER BY holders)::text AS p99, max(holders)::text AS max FROM ticks`;
const n = (x: string | number | undefined) => Number(x ?? 0).toLocaleString('en-US');
console.log(`rows: ticks ${n(counts?.ticks)}, balances ${n(counts?.balances)} (${n(counts?.zero_balances)} at 0), ` +
  `address_txs ${n(counts?.address_txs)}, transactions ${n(counts?.transactions)} (${n(counts?.plain_transactions)} non-inscription)`);
console.log(`holders per tick: p50 ${n(q?.p50)}, p90 ${n(q?.p90)}, p99 ${n(q?.p99)}, max ${n(q?.max)}; top: ` +
  top.map((t) => `${t.chain}/${t.protocol}/${t.tick} ${n(t.holders)}`).join(', '));
console.log(`busiest addresses: ${busiest.map((b) => `${b.address} ${n(b.n)}`).join(', ')}`);

const notable: Array<[string, boolean]> = [
  [`biggest tick is ${BENCH_NOTABLE.biggestTick.tick}, alone at the top`,
    top[0]?.tick === BENCH_NOTABLE.biggestTick.tick && top[0]?.chain === BENCH_NOTABLE.biggestTick.chain
      && Number(top[1]?.holders ?? 0) < Number(top[0]?.holders)],
  [`busiest address is ${BENCH_NOTABLE.busiestAddress}`,
    busiest[0]?.address.toLowerCase() === BENCH_NOTABLE.busiestAddress.toLowerCase()],
];
if (values.scale !== undefined) {
  const plan = buildPlan(Number(values.scale), values.seed === undefined ? DEFAULT_SEED : Number(values.seed));
  const pc = plan.counts;
  notable.push(
    [`row counts = plan of scale ${values.scale} (${n(pc.ticks)} / ${n(pc.balances)} / ${n(pc.movements)} / ${n(pc.transactions)})`,
      Number(counts?.ticks) === pc.ticks && Number(counts?.balances) === pc.balances
        && Number(counts?.address_txs) === pc.movements && Number(counts?.transactions) === pc.transactions],
    [`sats holders = ${n(plan.targets.bigHolders)}`, Number(top[0]?.holders) === plan.targets.bigHolders],
    [`busiest address movements = ${n(pc.busyMovements)}`, Number(busiest[0]?.n) === pc.busyMovements],
  );
}
for (const [name, ok] of notable) {
  if (!ok) failed++;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}`);
}
console.log(`${failed === 0 ? 'all checks passed' : `${failed} checks failed`} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
await sql.end({ timeout: 5 });
process.exit(failed === 0 ? 0 : 1);
