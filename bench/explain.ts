// npm run bench:explain -- [--database-url URL] [--only name,name] [--runs 10]
//
// Prints, for every statement the benchmark's scenarios make the gateway run (captured exactly as in
// bench/run.ts, with their parameters):
//   - EXPLAIN (ANALYZE, BUFFERS) with the parameters known (what a custom plan does);
//   - how the plan cache treats it as the gateway sends it (prepared, plan_cache_mode = auto): after a
//     few executions, does PostgreSQL switch to the generic plan? (pg_prepared_statements counts);
//   - median execution time forced custom vs forced generic, and the generic plan itself
//     (EXPLAIN (ANALYZE, BUFFERS) EXECUTE under force_generic_plan).
// Output: stdout and bench/results/explain-<scale>.txt.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { asGateway, captureStatements, type Statement } from './lib/floor.js';
import { selectedBy } from './lib/cli.js';
import { buildScenarios, loadFixture, resultsDir } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/igw_bench' },
    only: { type: 'string' },
    runs: { type: 'string', default: '10' },
    out: { type: 'string' },
  },
  strict: true,
});
const url = values['database-url']!;
const database = new URL(url).pathname.replace(/^\//, '');
const runs = Number(values.runs);
const only = (values.only ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

/** A parameter as an SQL literal, for EXECUTE name(…) (coerced to the statement's parameter types). */
function literal(v: unknown): string {
  const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) return quote(v.toISOString());
  if (Array.isArray(v)) {
    const el = (x: unknown) => (x === null ? 'NULL' : `"${String(x).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    return quote(`{${v.map(el).join(',')}}`);
  }
  return quote(String(v));
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

async function timeRuns(conn: postgres.ReservedSql, s: Statement, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await conn.unsafe(s.text, s.params as never[], asGateway);
    times.push(performance.now() - t0);
  }
  return Math.round(median(times) * 1000) / 1000;
}

async function main() {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  const fixture = await loadFixture(sql, database);
  const scenarios = buildScenarios(fixture).filter((s) => selectedBy(only, s.name));
  const captures = await captureStatements(url, 10, scenarios);

  // distinct statements (text + parameters), with the scenarios that run them
  const distinct = new Map<string, { statement: Statement; scenarios: string[] }>();
  for (const s of scenarios) {
    for (const wave of captures.get(s.name)!.waves) {
      for (const st of wave) {
        const key = JSON.stringify(st);
        const entry = distinct.get(key) ?? { statement: st, scenarios: [] };
        if (!entry.scenarios.includes(s.name)) entry.scenarios.push(s.name);
        distinct.set(key, entry);
      }
    }
  }

  const out: string[] = [];
  const summary: string[] = [];
  /** index name → statements (#n: first scenario) whose custom or generic plan uses it */
  const indexUse = new Map<string, Set<string>>();
  const noteIndexes = (lines: string[], label: string) => {
    for (const line of lines) {
      for (const m of line.matchAll(/(?:using|Bitmap Index Scan on) (\w+)/g)) {
        const set = indexUse.get(m[1]!) ?? new Set<string>();
        set.add(label);
        indexUse.set(m[1]!, set);
      }
    }
  };
  const p = (line = '') => out.push(line);
  const [{ version } = { version: '' }] = await sql<{ version: string }[]>`SELECT version()`;
  const settings = await sql<{ name: string; setting: string }[]>`
    SELECT name, setting || coalesce(unit, '') AS setting FROM pg_settings
     WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost', 'jit', 'plan_cache_mode')
     ORDER BY name`;
  let i = 0;
  for (const { statement, scenarios: names } of distinct.values()) {
    i++;
    const conn = await sql.reserve();
    try {
      p(`${'='.repeat(100)}`);
      p(`#${i} — ${names.join(', ')}`);
      p(statement.text.replace(/\s+/g, ' ').trim());
      p(`params: ${JSON.stringify(statement.params)}`);
      p();
      p('-- EXPLAIN (ANALYZE, BUFFERS), parameters known (custom plan):');
      const custom = await conn.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.params as never[]);
      for (const r of custom) p(String(Object.values(r)[0]));
      noteIndexes(custom.map((r) => String(Object.values(r)[0])), `#${i} ${names[0]}`);
      p();

      // as the gateway sends it: prepared, plan_cache_mode = auto (counted as deltas: a statement text shared
      // by several parameter sets is prepared once per connection and keeps its counts)
      const counts = async () => (await conn.unsafe<{ name: string; generic_plans: string; custom_plans: string }[]>(
        'SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE statement = $1', [statement.text]))[0];
      await conn.unsafe('SET plan_cache_mode = auto');
      const before = await counts();
      await timeRuns(conn, statement, 8);
      const after = await counts();
      const prep = after && {
        name: after.name,
        generic_plans: String(Number(after.generic_plans) - Number(before?.generic_plans ?? 0)),
        custom_plans: String(Number(after.custom_plans) - Number(before?.custom_plans ?? 0)),
      };
      await conn.unsafe('SET plan_cache_mode = force_custom_plan');
      const customMs = await timeRuns(conn, statement, runs);
      await conn.unsafe('SET plan_cache_mode = force_generic_plan');
      const genericMs = await timeRuns(conn, statement, runs);
      const autoGeneric = prep ? Number(prep.generic_plans) > 0 : false;
      p(`-- plan cache (8 prepared executions, auto): ${prep ? `generic_plans=${prep.generic_plans}, custom_plans=${prep.custom_plans} → ` +
        `${autoGeneric ? 'switched to the GENERIC plan' : 'stays on custom plans'}` : 'statement not found'}`);
      p(`-- median of ${runs} round trips: forced custom ${customMs} ms, forced generic ${genericMs} ms`);
      if (prep) {
        p('-- generic plan: EXPLAIN (ANALYZE, BUFFERS) EXECUTE under plan_cache_mode = force_generic_plan:');
        const args = statement.params.length > 0 ? `(${statement.params.map(literal).join(', ')})` : '';
        const generic = await conn.unsafe(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE "${prep.name}"${args}`);
        for (const r of generic) p(String(Object.values(r)[0]));
        noteIndexes(generic.map((r) => String(Object.values(r)[0])), `#${i} ${names[0]}`);
      }
      p();
      const exec = custom.map((r) => String(Object.values(r)[0])).find((l) => l.startsWith('Execution Time'));
      const danger = autoGeneric && genericMs > customMs * 1.5 ? '  ← generic plan slower and chosen' : '';
      summary.push(`#${String(i).padEnd(3)} ${(exec ?? '').replace('Execution Time: ', 'exec ').padEnd(16)} custom ${String(customMs).padStart(8)} ms  ` +
        `generic ${String(genericMs).padStart(8)} ms  auto→${autoGeneric ? 'generic' : 'custom '}  ${names[0]}${names.length > 1 ? ` (+${names.length - 1})` : ''}${danger}`);
    } finally {
      conn.release();
    }
  }
  await sql.end();
  const header = [
    `bench:explain — ${database}, scale ${fixture.scale ?? '?'}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    version,
    settings.map((s) => `${s.name}=${s.setting}`).join(', '),
    '',
    `${distinct.size} distinct statements (exec = server execution time of the custom plan under EXPLAIN ANALYZE;`,
    'custom/generic = median client round trip of the prepared statement with the plan cache forced each way;',
    'auto = what PostgreSQL chose after 8 executions, as the gateway sends them):',
    ...summary,
    '',
    'Indexes the plans above use (custom or generic), with the statements they serve:',
    ...[...indexUse].sort(([a], [b]) => a.localeCompare(b)).map(([name, uses]) => `  ${name}: ${[...uses].join('; ')}`),
    '',
  ];
  const text = `${[...header, ...out].join('\n')}\n`;
  process.stdout.write(text);
  const file = values.out ?? `${resultsDir}explain-${fixture.scale ?? database}.txt`;
  writeFileSync(file, text);
  console.error(`wrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
