// The floor of a scenario: the very statements the gateway runs for one request of it, with the same
// parameters, sent straight through postgres.js (prepared, a pool of the same size, the same concurrency,
// the same time). What the gateway adds on top — HTTP, JSON-RPC, GraphQL, loaders, JSON — is the
// difference between its numbers and these.
//
// Capture: an in-process gateway (createGateway with the onQuery hook, which hands over each statement's
// text and bound parameters) answers one request of each scenario. Its store methods are wrapped to learn
// which statements depended on which: a statement starting after others completed goes in a later wave,
// statements started together (a page's total and its ticks) share a wave. The floor replays the waves in
// order, each wave's statements concurrently — the critical path a hand-written server would have.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { createGateway, type Gateway } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { runLoop, type Measurement } from './load.js';
import type { Scenario } from './scenarios.js';

export interface Statement {
  text: string;
  params: unknown[];
}

/** The statements of one request, wave by wave. */
export interface Capture {
  waves: Statement[][];
  /** The reply the in-process gateway gave (checked for errors before anything is measured). */
  status: number;
  reply: string;
}

export const signature = (c: Capture) => JSON.stringify(c.waves);
export const statementCount = (c: Capture) => c.waves.reduce((n, w) => n + w.length, 0);

interface Call { wave: number; statements: Statement[] }

interface Recorder {
  maxCompletedWave: number;
  calls: Call[];
  stray: Statement[];
}

/** Captures the statements of each scenario's request on an in-process gateway. */
export async function captureStatements(url: string, poolMax: number, scenarios: readonly Scenario[]): Promise<Map<string, Capture>> {
  const als = new AsyncLocalStorage<Call>();
  let recorder: Recorder | null = null;
  const config = loadConfig({ DATABASE_URL: url, CACHE: 'off', LOG_LEVEL: 'warn', DB_POOL_MAX: String(poolMax) });
  const gateway = createGateway(config, { url }, {
    onQuery: (text, params) => {
      if (!recorder) return;
      const statement = { text, params: [...(params ?? [])] };
      const call = als.getStore();
      (call ? call.statements : recorder.stray).push(statement);
    },
  });
  wrapStore(gateway, als, () => recorder);
  await gateway.ready;
  await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
  const out = new Map<string, Capture>();
  try {
    for (const s of scenarios) {
      // the first request opens connections and prepares statements; the second is the one recorded
      await post(base, s);
      recorder = { maxCompletedWave: -1, calls: [], stray: [] };
      const { status, reply } = await post(base, s);
      const rec: Recorder = recorder;
      recorder = null;
      if (rec.stray.length > 0) throw new Error(`${s.name}: ${rec.stray.length} statement(s) outside any store call`);
      const waves: Statement[][] = [];
      for (const call of rec.calls) (waves[call.wave] ??= []).push(...call.statements);
      out.set(s.name, { waves: waves.filter((w) => w.length > 0), status, reply });
    }
  } finally {
    await gateway.close();
  }
  return out;
}

async function post(base: string, s: Scenario): Promise<{ status: number; reply: string }> {
  const res = await fetch(`${base}${s.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: s.body });
  return { status: res.status, reply: await res.text() };
}

/**
 * Wraps every method of the gateway's sub-stores (in place: the resolvers and loaders reach the store
 * through the same objects): a call runs in its own async context, so the onQuery hook knows which call
 * a statement belongs to, and gets the wave after the latest wave completed before it started.
 */
function wrapStore(gateway: Gateway, als: AsyncLocalStorage<Call>, recorder: () => Recorder | null) {
  for (const sub of Object.values(gateway.store as Record<string, unknown>)) {
    if (typeof sub !== 'object' || sub === null || typeof (sub as { unsafe?: unknown }).unsafe === 'function') continue;
    const methods = sub as Record<string, unknown>;
    for (const [name, fn] of Object.entries(methods)) {
      if (typeof fn !== 'function') continue;
      methods[name] = function recorded(this: unknown, ...args: unknown[]) {
        const rec = recorder();
        if (!rec) return (fn as (...a: unknown[]) => unknown).apply(this, args);
        const call: Call = { wave: rec.maxCompletedWave + 1, statements: [] };
        rec.calls.push(call);
        const settle = () => {
          rec.maxCompletedWave = Math.max(rec.maxCompletedWave, call.wave);
        };
        return als.run(call, () => Promise.resolve((fn as (...a: unknown[]) => unknown).apply(this, args)))
          .finally(settle);
      };
    }
  }
}

export function floorPool(url: string, poolMax: number) {
  return postgres(url, {
    max: poolMax,
    prepare: true,
    onnotice: () => {},
    connection: { application_name: 'igw-bench-floor', statement_timeout: 5_000 },
  });
}

/**
 * As the gateway sends a statement: prepared, extended protocol. (postgres.js sends an unsafe() without
 * parameters over the simple protocol unless told otherwise; its typings do not list `simple`.)
 */
export const asGateway = { prepare: true, simple: false } as { prepare: boolean };

/** Replays one captured request: its waves in order, the statements of a wave concurrently. */
function replayer(sql: postgres.Sql, capture: Capture) {
  const waves = capture.waves.map((w) => w.map((s) => ({ text: s.text, params: s.params as never[] })));
  return async () => {
    for (const wave of waves) {
      if (wave.length === 1) await sql.unsafe(wave[0]!.text, wave[0]!.params, asGateway);
      else await Promise.all(wave.map((s) => sql.unsafe(s.text, s.params, asGateway)));
    }
  };
}

/**
 * Warm-up, then the measured loop. `probe` is read just before and just after the measured loop (CPU
 * accounting: it runs once the warm-up has opened the pool's connections).
 *
 * `ratePerSecond`: the loop is paced at that many requests per second (load.ts runLoop) instead of closed.
 * The database CPU of a request depends on the rate it comes at, not only on its statements: in the
 * closed loop the floor runs 3–7× as many requests per second as the gateway, its backends find the next
 * statement already waiting (1.65–1.73 sleeps per 2-statement request instead of 2.0) and run it with warm
 * caches, and spend 40–60 % less CPU per request on the very same statements (2026-11-26, scale 0.1,
 * tick list: 0.08–0.11 ms closed vs 0.16–0.20 ms at the gateway's ~750–1,300 req/s; PostgreSQL's own code
 * took 2.2× the samples per request under perf). So the CPU comparison runs the floor at the gateway's rate.
 */
export async function measureFloor<P>(
  sql: postgres.Sql, capture: Capture, connections: number, seconds: number, warmupSeconds: number, probe: () => Promise<P>,
  ratePerSecond?: number,
): Promise<{ measurement: Measurement; before: P; after: P }> {
  const run = replayer(sql, capture);
  if (warmupSeconds > 0) await runLoop(run, connections, warmupSeconds, ratePerSecond);
  const before = await probe();
  const measurement = await runLoop(run, connections, seconds, ratePerSecond);
  const after = await probe();
  return { measurement, before, after };
}
