// Load generation and measurement: a closed loop of `connections` clients for a fixed time, against the
// gateway over HTTP (autocannon) or against PostgreSQL directly (the floor, see floor.ts). Latencies are
// recorded per response as floats (autocannon's own histogram has 1 ms resolution) and summarised here.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The part of autocannon's API used here (autocannon 9 ships no typings). */
interface AutocannonResult {
  errors: number;
  timeouts: number;
  mismatches: number;
  non2xx: number;
  requests: { total: number; sent: number };
  duration: number;
}
interface AutocannonInstance {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  on(event: 'done', fn: (result: AutocannonResult) => void): void;
  stop(): void;
}
type Autocannon = (opts: Record<string, unknown>, cb?: (err: Error | null, result: AutocannonResult) => void) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface Measurement {
  /** Completed requests per second over the measured window. */
  rps: number;
  requests: number;
  seconds: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Transport errors, timeouts, non-2xx answers and bodies differing from the expected one. */
  failures: number;
}

/** Percentile of an ascending array (nearest rank), in ms rounded to 0.01. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[rank]! * 100) / 100;
}

export function summarise(latencies: number[], seconds: number, failures: number): Measurement {
  const sorted = Float64Array.from(latencies).sort();
  const arr = Array.from(sorted);
  return {
    rps: Math.round((latencies.length / seconds) * 10) / 10,
    requests: latencies.length,
    seconds: Math.round(seconds * 100) / 100,
    p50: percentile(arr, 50),
    p90: percentile(arr, 90),
    p99: percentile(arr, 99),
    max: percentile(arr, 100),
    failures,
  };
}

export interface HttpLoad {
  url: string;
  body: string;
  /** The exact answer expected (the body seen before the run); any other body counts as a failure. */
  expectBody?: string;
  /** Instead of expectBody: a check of each answer's body (false counts as a failure). */
  verifyBody?: (body: string) => boolean;
  /** The body of each request in turn, over all connections (instead of `body` every time). */
  nextBody?: () => string;
  connections: number;
  seconds: number;
}

const dataAge = /"dataAgeSeconds":\d+/g;
const withoutAge = (body: string) => body.replace(dataAge, '"dataAgeSeconds":0');

/**
 * A check that an answer says what `first` said: the same bytes, whatever the data age in seconds (the
 * gateway's GraphQL extensions.freshness.dataAgeSeconds counts seconds since the newest indexed block: it
 * moves during a run, the rest of the answer must not).
 */
export function sameAnswerAs(first: string): (body: string) => boolean {
  const want = withoutAge(first);
  return (body) => body === first || withoutAge(body) === want;
}

/** Closed-loop HTTP load with autocannon: `connections` keep-alive clients, one request in flight each. */
export function runHttp(load: HttpLoad): Promise<Measurement> {
  const verifyBody = load.verifyBody ?? (load.expectBody === undefined ? undefined : sameAnswerAs(load.expectBody));
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const started = performance.now();
    const instance = autocannon(
      {
        url: load.url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: load.body,
        connections: load.connections,
        pipelining: 1,
        duration: load.seconds,
        timeout: 30,
        ...(verifyBody ? { verifyBody } : {}),
        ...(load.nextBody ? { requests: [{ setupRequest: (request: object) => ({ ...request, body: load.nextBody!() }) }] } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const seconds = (performance.now() - started) / 1000;
        const failures = result.errors + result.timeouts + result.non2xx + result.mismatches;
        resolve(summarise(latencies, seconds, failures));
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

/**
 * Closed-loop load of an async function: `connections` workers call `fn` back to back for `seconds`;
 * one call is one request. Used for the floor (statements straight through postgres.js).
 *
 * With `ratePerSecond`, paced instead: request k starts no earlier than k / rate seconds after the start
 * (one schedule shared by the workers, at most `connections` in flight; a worker that falls behind starts
 * its next request at once, so a rate the function cannot reach gives the closed loop's).
 */
export async function runLoop(fn: () => Promise<unknown>, connections: number, seconds: number, ratePerSecond?: number): Promise<Measurement> {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      if (ratePerSecond) {
        const wait = started + (next++ * 1000) / ratePerSecond - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (performance.now() >= deadline) break;
      }
      const t0 = performance.now();
      try {
        await fn();
        latencies.push(performance.now() - t0);
      } catch {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return summarise(latencies, (performance.now() - started) / 1000, failures);
}

/** Resident set size of a process in MB (Linux /proc), or null when it is gone. */
export function rssMb(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Math.round(Number(kb) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the maximum seen. */
export function sampleRss(pid: number, everyMs = 200) {
  let max = rssMb(pid) ?? 0; // since the last reset (one scenario)
  let overall = max;
  const timer = setInterval(() => {
    const v = rssMb(pid);
    if (v !== null && v > max) max = v;
    if (v !== null && v > overall) overall = v;
  }, everyMs);
  timer.unref();
  return {
    peek: () => max,
    reset: () => {
      max = rssMb(pid) ?? 0;
    },
    /** Stops sampling; the largest RSS seen since the start. */
    stop: () => {
      clearInterval(timer);
      return overall;
    },
  };
}

/**
 * CPU time (user + system) a process has used so far, in ms (Linux /proc). The run time in schedstat is in
 * ns, per thread: /proc/<pid>/schedstat is the main thread's alone (a Node process's GC and libuv threads
 * are left out: half of its CPU under allocation-heavy load), so every thread's /proc/<pid>/task/<tid>/schedstat
 * is summed (a thread that has exited is no longer counted: Node's and PostgreSQL's live as long as the
 * process). /proc/<pid>/stat's utime + stime (the fallback) count clock ticks of 10 ms, coarse for a
 * PostgreSQL backend that spends ~100 ms in a 5 s run.
 */
export function cpuMs(pid: number): number | null {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    if (Number.isFinite(ns) && ns > 0) return ns / 1e6;
  } catch {
    // no schedstat (kernel without scheduler statistics) or the process is gone: the tick count below
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the parenthesised command name: state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** 1-, 5-, 15-minute load averages (what the machine was doing meanwhile: it is shared). */
export function loadAverage(): number[] {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return [];
  }
}
