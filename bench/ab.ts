// npx tsx bench/ab.ts --a DIR [--b DIR]… [--only name,name] [--rounds 3] [--duration 5] [--warmup 1] [--connections 8]
//
// A/B of the gateway's CPU per request: builds (each DIR a checkout with dist/ built, `npm run build`; --b
// may be repeated and defaults to this checkout) started side by side as the benchmark starts its gateway
// (node dist/main.js, cache off, warn-level logs, no byte budget), then per scenario and round each loaded
// in turn (the order rotated every round) with the benchmark's closed loop. Prints CPU ms per request of
// each gateway process (/proc, 10 ms ticks) per round, the medians and each one's ratio to A.
// Interleaving is what makes the comparison hold on a shared machine; absolute figures are the
// benchmark's business.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { freePort } from '../test/support/ports.js';
import { checkReply, repoRoot, waitReady } from './lib/gateway.js';
import { cpuMs, loadAverage, runHttp, sameAnswerAs } from './lib/load.js';
import { loadOptions, loadSettings, selectedBy } from './lib/cli.js';
import { buildScenarios, loadFixture } from './lib/scenarios.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    ...loadOptions,
    a: { type: 'string' },
    b: { type: 'string', multiple: true, default: [repoRoot] },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
  },
  strict: true,
});
if (!values.a) throw new Error('--a DIR is required');
const settings = loadSettings(values);


async function start(dir: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--max-old-space-size=512', resolve(dir, 'dist/main.js')], {
    cwd: dir,
    env: {
      ...process.env, DATABASE_URL: settings.databaseUrl, LOG_LEVEL: 'warn', CACHE: 'off', DB_POOL_MAX: String(settings.poolMax), SEED: 'false',
      HTTP_CLIENT_BYTES_PER_S: '0', PORT: String(port), HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, child);
  return { base, child };
}

async function main() {
  const admin = postgres(settings.databaseUrl, { max: 1, onnotice: () => {} });
  const fixture = await loadFixture(admin, settings.database);
  await admin.end();
  const scenarios = buildScenarios(fixture).filter((s) => selectedBy(settings.only, s.name));
  const dirs = [values.a!, ...values.b!];
  const names = dirs.map((_, i) => String.fromCharCode(65 + i));
  const sides: Record<string, { base: string; child: ChildProcess }> = {};
  for (const [i, dir] of dirs.entries()) sides[names[i]!] = await start(dir);
  const { seconds, connections } = settings;
  console.log(`${dirs.map((d, i) => `${names[i]} = ${d}`).join(', ')}; load average ${loadAverage().join(' ')}`);
  try {
    for (const s of scenarios) {
      const answers: Record<string, string> = {};
      for (const name of names) {
        const r = await fetch(sides[name]!.base + s.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: s.body });
        answers[name] = await r.text();
        checkReply(`${s.name} (${name})`, r.status, answers[name]!);
      }
      const differ = names.filter((n) => !sameAnswerAs(answers.A!)(answers[n]!));
      const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const rps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let round = 0; round < Number(values.rounds); round++) {
        const order = names.map((_, i) => names[(i + round) % names.length]!);
        for (const name of order) {
          const side = sides[name]!;
          const load = { url: side.base + s.path, body: s.body, verifyBody: sameAnswerAs(answers[name]!), connections };
          await runHttp({ ...load, seconds: settings.warmupSeconds });
          const before = cpuMs(side.child.pid!)!;
          const m = await runHttp({ ...load, seconds });
          const used = cpuMs(side.child.pid!)! - before;
          cpu[name]!.push(used / m.requests);
          rps[name]!.push(m.rps);
          if (m.failures) console.log(`  ${name}: ${m.failures} failures`);
        }
      }
      const a = median(cpu.A!);
      console.log(`${s.name}: ${names.map((n) => `${n} ${median(cpu[n]!).toFixed(3)} ms/req (${cpu[n]!.map((x) => x.toFixed(3)).join(' ')}; ` +
        `${median(rps[n]!).toFixed(0)} req/s)${n === 'A' ? '' : ` ${n}/A ${(median(cpu[n]!) / a).toFixed(3)}`}`).join('  ')}` +
        `${differ.length ? `  ANSWERS DIFFER: ${differ.join(',')}` : ''}`);
    }
  } finally {
    for (const side of Object.values(sides)) side.child.kill('SIGTERM');
    console.log(`load average ${loadAverage().join(' ')}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
