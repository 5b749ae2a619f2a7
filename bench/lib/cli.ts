// The command-line options every load benchmark shares (`npm run bench`, `npm run bench:peer`): the database,
// the closed-loop load (connections, duration, warm-up), the gateway's pool and the scenario filter.

/** parseArgs options of a load benchmark; spread them into a script's own. */
export const loadOptions = {
  'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/igw_bench' },
  duration: { type: 'string', default: '10' },
  connections: { type: 'string', default: '8' },
  warmup: { type: 'string', default: '2' },
  pool: { type: 'string', default: '10' },
  only: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const loadUsage = '[--database-url URL] [--duration 10] [--connections 8] [--warmup 2] [--pool 10] [--only name,name]';

export interface LoadSettings {
  databaseUrl: string;
  /** the database's name, from the URL */
  database: string;
  seconds: number;
  connections: number;
  warmupSeconds: number;
  poolMax: number;
  /** lower-cased parts of --only, empty when absent */
  only: string[];
}

/** The parsed values of `loadOptions` as numbers; a value that is not a positive number (warm-up: ≥ 0) is refused. */
export function loadSettings(values: { 'database-url'?: string; duration?: string; connections?: string; warmup?: string;
  pool?: string; only?: string }): LoadSettings {
  const num = (flag: string, raw: string | undefined, min: number) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${flag} must be a number ≥ ${min}: ${raw}`);
    return n;
  };
  const databaseUrl = values['database-url']!;
  return {
    databaseUrl,
    database: new URL(databaseUrl).pathname.replace(/^\//, ''),
    seconds: num('duration', values.duration, 0.1),
    connections: num('connections', values.connections, 1),
    warmupSeconds: num('warmup', values.warmup, 0),
    poolMax: num('pool', values.pool, 1),
    only: (values.only ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
  };
}

/** Whether a scenario passes --only: no filter, or one of its names contains one of the parts. */
export function selectedBy(only: string[], ...names: string[]): boolean {
  return only.length === 0 || only.some((p) => names.some((n) => n.toLowerCase().includes(p)));
}
