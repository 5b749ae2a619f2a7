// npm run bench:citus-sim -- [--scale 0.01] [--shards 16]
//
// A Citus simulation that runs here (no Citus on this machine; docs/scaling.md). It answers, for each
// statement the gateway actually sends, "how many shards would this touch under distribution plan X":
//   1. a private primary (test/support/pg-instance.ts) loaded with `--scale` of the benchmark data;
//   2. the statements of every benchmark scenario (bench/lib/scenarios.ts), captured with their bound
//      parameters through the gateway's statement hook (bench/lib/floor.ts, as `npm run bench` does);
//   3. for each plan below, a schema holding copies of the distributed tables, each declared
//      `PARTITION BY HASH (distribution column)` with `--shards` partitions (a Citus shard is a hash
//      range of the distribution column; declarative hash partitioning is the same cut, done locally),
//      the data copied in, the indexes recreated (non-unique: a unique index must include the key);
//      tables the plan leaves undistributed stay in `public` (reference or coordinator tables);
//   4. every captured statement planned and run there (`search_path = <plan schema>, public`, EXPLAIN
//      (ANALYZE, VERBOSE) with its real parameters, so plan-time pruning applies) and the partitions in
//      the plan counted per table, and those actually read (loops > 0). A statement is
//        - `reference`   : no distributed table (chains, list_totals, data_version …): any node answers;
//        - `single-shard`: every distributed table pruned to the same one partition index (co-located
//                          tables share a hash function and a key type, so the same value lands on the
//                          same index): Citus routes it whole to one worker;
//        - `multi-shard` : one distributed table over several partitions, or co-located tables joined on
//                          their distribution columns: Citus pushes it down to every shard and merges
//                          (ORDER BY … LIMIT per shard, then on the coordinator);
//        - `coordinator` : distributed tables joined on anything else (or one side pruned to other
//                          partitions): a non-co-located join, which Citus runs as a repartition join or
//                          refuses; the statement must change (a reference table, a second copy keyed
//                          the other way, or two steps in the application).
// Writes bench/results/<YYYY-MM-DD-HHMM>-citus-sim.{json,md}.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { createSql } from '../src/db/client.js';
import { captureStatements, type Capture } from './lib/floor.js';
import { loadAverage } from './lib/load.js';
import { startLoadedPrimary } from './lib/private-pg.js';
import { buildScenarios, loadFixture, resultsDir } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '0.01' },
    shards: { type: 'string', default: '16' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (values.help) {
  console.log('usage: npm run bench:citus-sim -- [--scale 0.01] [--shards 16]');
  process.exit(0);
}
const scale = Number(values.scale);
const shards = Number(values.shards);
const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

/** Distribution plans: table → distribution column. Tables not named stay in public (reference/coordinator). */
const plans: Record<string, { about: string; tables: Record<string, string> }> = {
  proposed: {
    about: 'ticks a reference table (stays in public), balances by tick_id, address_txs by address_key, transactions by tx_hash_key, per-address totals by address_key',
    tables: { balances: 'tick_id', address_txs: 'address_key', transactions: 'tx_hash_key', address_totals: 'address_key', address_tx_totals: 'address_key' },
  },
  tick: {
    about: 'everything of a tick together: ticks by id, balances and address_txs by tick_id (co-located); transactions by tx_hash_key; per-address totals by address_key',
    tables: { ticks: 'id', balances: 'tick_id', address_txs: 'tick_id', transactions: 'tx_hash_key', address_totals: 'address_key', address_tx_totals: 'address_key' },
  },
  address: {
    about: 'everything of an address together: balances, address_txs, address totals by address_key (co-located), transactions by from_key; ticks by id',
    tables: { ticks: 'id', balances: 'address_key', address_txs: 'address_key', transactions: 'from_key', address_totals: 'address_key', address_tx_totals: 'address_key' },
  },
};

const loadBefore = loadAverage();
log(`load average ${loadBefore.join(' ')}; private primary, scale ${scale}`);
const loaded = await startLoadedPrimary(scale, 'igw_bench');
const sql = postgres(loaded.url, { max: 2, onnotice: () => {}, connection: { statement_timeout: 0 } });
try {
  // ---------------------------------------------------------------------------------------------------
  // capture
  const fixtureSql = createSql({ url: loaded.url, poolMax: 2, statementTimeoutMs: 30_000, connectTimeoutS: 10, readOnly: true });
  const fixture = await loadFixture(fixtureSql, 'igw_bench');
  await fixtureSql.end({ timeout: 5 });
  // the GraphQL twins run the same statements as their RPC call (bench/README.md): the RPC ones and the cursor
  const scenarios = buildScenarios(fixture).filter((s) => s.surface === 'rpc' || !s.twin);
  const captures: Map<string, Capture> = await captureStatements(loaded.url, 4, scenarios);
  log(`captured ${scenarios.length} scenarios, ${[...captures.values()].reduce((n, c) => n + c.waves.flat().length, 0)} statements`);

  // ---------------------------------------------------------------------------------------------------
  // one schema per plan
  for (const [name, plan] of Object.entries(plans)) {
    const schema = `sim_${name}`;
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    for (const [table, column] of Object.entries(plan.tables)) {
      await sql.unsafe(`CREATE TABLE ${schema}.${table} (LIKE public.${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
                        PARTITION BY HASH (${column})`);
      for (let i = 0; i < shards; i++) {
        await sql.unsafe(`CREATE TABLE ${schema}.${table}_p${i} PARTITION OF ${schema}.${table} FOR VALUES WITH (MODULUS ${shards}, REMAINDER ${i})`);
      }
      // generated columns (address_key, tx_hash_key, from_key …) are plain columns here: a partition key
      // cannot be generated; the copy takes their values as they are
      await sql.unsafe(`INSERT INTO ${schema}.${table} SELECT * FROM public.${table}`);
      const defs = await sql<{ name: string; def: string }[]>`
        SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename = ${table}`;
      for (const d of defs) {
        const def = d.def.replace(/^CREATE UNIQUE INDEX/, 'CREATE INDEX').replace(` ON public.${table} `, ` ON ${schema}.${table} `)
          .replace(/^CREATE INDEX (\S+)/, `CREATE INDEX sim_$1`);
        await sql.unsafe(def);
      }
      await sql.unsafe(`ANALYZE ${schema}.${table}`);
    }
    log(`plan ${name}: ${Object.entries(plan.tables).map(([t, c]) => `${t}(${c})`).join(', ')} in ${schema}, ${shards} partitions each`);
  }

  // ---------------------------------------------------------------------------------------------------
  // plan every statement under every plan
  type Kind = 'reference' | 'single-shard' | 'multi-shard' | 'coordinator';
  /** touched: partitions in the plan per table; read: partitions actually scanned (EXPLAIN ANALYZE: loops > 0) */
  interface Classified { kind: Kind; touched: Record<string, number>; read: Record<string, number>; why: string }
  const rank: Kind[] = ['reference', 'single-shard', 'multi-shard', 'coordinator'];

  async function classify(schema: string, tables: Record<string, string>, text: string, params: unknown[]): Promise<Classified> {
    const rows = await sql.begin(async (tx) => {
      await tx.unsafe(`SET LOCAL search_path = ${schema}, public`);
      return tx.unsafe(`EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) ${text}`, params as never[]);
    });
    const plan = (rows[0] as Record<string, unknown>)['QUERY PLAN'] as { Plan: unknown }[];
    const parts = new Map<string, Set<number>>();
    const readParts = new Map<string, Set<number>>();
    const conds: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      const rel = node['Relation Name'] as string | undefined;
      if (rel && node.Schema === schema) {
        const m = /^(\w+)_p(\d+)$/.exec(rel);
        const table = m ? m[1]! : rel;
        if (!parts.has(table)) parts.set(table, new Set());
        if (m) parts.get(table)!.add(Number(m[2]));
        if (!readParts.has(table)) readParts.set(table, new Set());
        if (m && Number(node['Actual Loops'] ?? 0) > 0) readParts.get(table)!.add(Number(m[2]));
      }
      for (const k of ['Hash Cond', 'Merge Cond', 'Join Filter', 'Index Cond', 'Recheck Cond', 'Filter']) {
        if (typeof node[k] === 'string') conds.push(node[k] as string);
      }
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(plan[0]!.Plan as Record<string, unknown>);
    const touched = Object.fromEntries([...parts].map(([t, s]) => [t, s.size]));
    const read = Object.fromEntries([...readParts].map(([t, s]) => [t, s.size]));
    if (parts.size === 0) return { kind: 'reference', touched, read, why: 'no distributed table' };
    const indexes = new Set([...parts.values()].flatMap((s) => [...s]));
    if (indexes.size <= 1) return { kind: 'single-shard', touched, read, why: indexes.size === 0 ? 'pruned to no shard' : 'one shard index' };
    const names = [...parts.keys()];
    if (names.length === 1) return { kind: 'multi-shard', touched, read, why: `${names[0]} on ${indexes.size} shards` };
    // joins between distributed tables: on their distribution columns?
    const joined = (a: string, b: string) => {
      const ca = tables[a]!;
      const cb = tables[b]!;
      return conds.some((c) => new RegExp(`\\.${ca}\\s*=\\s*[\\w.]+\\.${cb}\\b|\\.${cb}\\s*=\\s*[\\w.]+\\.${ca}\\b`).test(c));
    };
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        if (!joined(names[i]!, names[j]!)) {
          return { kind: 'coordinator', touched, read, why: `${names[i]} and ${names[j]} not joined on ${tables[names[i]!]} = ${tables[names[j]!]}` };
        }
      }
    }
    return { kind: 'multi-shard', touched, read, why: 'co-located join on the distribution columns' };
  }

  const report: { scenario: string; statements: number; plans: Record<string, { worst: Kind; statements: Classified[] }> }[] = [];
  for (const s of scenarios) {
    const capture = captures.get(s.name)!;
    const statements = capture.waves.flat();
    const entry: (typeof report)[number] = { scenario: s.name, statements: statements.length, plans: {} };
    for (const [name, plan] of Object.entries(plans)) {
      const classified: Classified[] = [];
      for (const st of statements) classified.push(await classify(`sim_${name}`, plan.tables, st.text, st.params));
      const worst = classified.reduce<Kind>((w, c) => (rank.indexOf(c.kind) > rank.indexOf(w) ? c.kind : w), 'reference');
      entry.plans[name] = { worst, statements: classified };
    }
    report.push(entry);
  }

  // ---------------------------------------------------------------------------------------------------
  // report
  const stamp = new Date().toISOString().slice(0, 16).replace('T', '-').replace(':', '');
  const base = `${resultsDir}${stamp}-citus-sim`;
  const loadAfter = loadAverage();
  const statementsOf = () => Object.fromEntries(scenarios.map((s) => [s.name, captures.get(s.name)!.waves.flat().map((x) => x.text.replace(/\s+/g, ' ').trim())]));
  writeFileSync(`${base}.json`, `${JSON.stringify({ scale, shards, rows: loaded.rows, plans, loadAverage: { before: loadBefore, after: loadAfter }, report, statements: statementsOf() }, null, 2)}\n`);
  // "balances 16→1": 16 partitions in the plan (what Citus would route to), 1 read at run time
  const short = (c: Classified) => `${c.kind}${Object.keys(c.touched).length ? ` (${Object.entries(c.touched).map(([t, n]) => `${t} ${n}${c.read[t] !== n ? `→${c.read[t]}` : ''}`).join(', ')})` : ''}`;
  const md: string[] = [`# Citus simulation — ${stamp}`, ''];
  md.push(`Scale ${scale}, ${shards} hash partitions per distributed table (PostgreSQL declarative hash partitioning standing in for Citus shards), the gateway's own statements of every benchmark scenario with their real parameters, EXPLAIN VERBOSE with plan-time pruning. Per statement: its class and, per distributed table, how many of the ${shards} partitions its plan holds (the shards Citus would send it to), and after "→" how many it read at run time when fewer (run-time pruning: the key came from a parameter array, not a constant). Load average ${loadBefore.join(' ')}.`, '');
  for (const [name, plan] of Object.entries(plans)) md.push(`- **${name}**: ${plan.about}.`);
  md.push('', `| scenario | stmts | ${Object.keys(plans).map((p) => `plan ${p}`).join(' | ')} |`, `|---|--:|${Object.keys(plans).map(() => '---').join('|')}|`);
  for (const r of report) {
    md.push(`| ${r.scenario} | ${r.statements} | ${Object.keys(plans).map((p) => r.plans[p]!.statements.map(short).join('; ')).join(' | ')} |`);
  }
  md.push('', '| plan | reference | single-shard | multi-shard | coordinator |', '|---|--:|--:|--:|--:|');
  for (const name of Object.keys(plans)) {
    const all = report.flatMap((r) => r.plans[name]!.statements);
    md.push(`| ${name} | ${rank.map((k) => all.filter((c) => c.kind === k).length).join(' | ')} |`);
  }
  md.push('', 'Statements by scenario (text) and the reason for each class: the .json beside this file. What it means: docs/scaling.md.');
  writeFileSync(`${base}.md`, `${md.join('\n')}\n`);
  log(`results: ${base}.json, ${base}.md`);
} finally {
  await sql.end({ timeout: 5 });
  await loaded.primary.destroy();
}
process.exit(0);
