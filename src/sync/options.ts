// Command-line options of `npm run sync`, validated like the gateway's config (src/config.ts): a bad value
// names the option and stops the command before anything connects.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { isZoneName, parseZone } from './mapping.js';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const schema = z.object({
  source: z.string({ error: 'is required (or set SYNC_SOURCE_URL): mysql://user:pass@host:port/db or sqlite:///path/to/file.db' })
    .regex(/^((mysql|mariadb):\/\/[^/]+\/[^/?#]+.*|sqlite:\/\/\/?\S+)$/, 'must be mysql://user:pass@host:port/db or sqlite:///path/to/file.db'),
  'database-url': z.string({ error: 'is required (or set DATABASE_URL): postgres://user@host:port/db' })
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL'),
  once: z.boolean().default(false),
  'source-time-zone': z.string().default('+00:00')
    .refine((v) => parseZone(v) !== null || isZoneName(v), 'must be a UTC offset like +08:00 or a zone name like Asia/Shanghai'),
  verify: z.boolean().default(false),
  repair: z.boolean().default(false),
  'dry-run': z.boolean().default(false),
  mode: z.enum(['auto', 'binlog', 'polling']).default('auto'),
  // default: derived from the target (src/sync/run.ts defaultServerId)
  'server-id': int(1, 4_294_967_295).optional(),
  'batch-size': int(100, 1_000_000).default(10_000),
  'poll-interval-ms': int(50, 600_000).default(1_000),
  'poll-overlap-s': int(0, 86_400).default(10),
  'gap-expiry-s': int(1, 86_400 * 7).default(600),
  'poll-sweep-ids': int(1_000, 100_000_000).default(50_000),
  'reconcile-interval-s': int(1, 86_400 * 7).default(3_600),
  'metrics-port': int(0, 65_535).default(9_465),
  'metrics-host': z.string().min(1).default('127.0.0.1'),
  'skip-bad-rows': z.boolean().default(false),
  'log-level': z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type SyncOptions = z.infer<typeof schema>;

export class OptionsError extends Error {}

const flags = ['once', 'verify', 'repair', 'dry-run', 'skip-bad-rows', 'help'];
const valued = ['source', 'database-url', 'source-time-zone', 'mode', 'server-id', 'batch-size', 'poll-interval-ms',
  'poll-overlap-s', 'poll-sweep-ids', 'gap-expiry-s', 'reconcile-interval-s', 'metrics-port', 'metrics-host', 'log-level'];

export const usage = `usage: npm run sync -- --source mysql://user:pass@host:3306/db|sqlite:///path/to/file.db --database-url postgres://… [options]
  --once                     backfill (first run) or catch up, then exit
  --source-time-zone +08:00  the zone the indexer host wrote its timestamps in: offset or name (default +00:00)
  --mode auto|binlog|polling how to follow (default auto: binlog when possible)
  --dry-run                  preflight only
  --verify                   compare source and read model, counts and every mapped value (exit 0 same, 1 different)
  --repair                   with --verify: re-copy the differing rows from the source, in one transaction
  --skip-bad-rows            report rows that cannot be mapped and go on (default: stop)
  --metrics-port 9465        Prometheus /metrics (0: any free port)
  --server-id, --batch-size, --poll-interval-ms, --poll-overlap-s, --poll-sweep-ids, --gap-expiry-s, --reconcile-interval-s,
  --metrics-host, --log-level`;

export function parseOptions(argv: string[], env: Record<string, string | undefined> = process.env): SyncOptions | 'help' {
  // '--source-time-zone -05:00': a value starting with a dash would read as an option
  const args = argv.flatMap((a, i) => (a === '--source-time-zone' && /^-\d/.test(argv[i + 1] ?? '') ? [] : i > 0 &&
    argv[i - 1] === '--source-time-zone' && /^-\d/.test(a) ? [`--source-time-zone=${a}`] : [a]));
  let parsed;
  try {
    parsed = parseArgs({
      args, strict: true, allowPositionals: false,
      options: Object.fromEntries([
        ...flags.map((f) => [f, { type: 'boolean' as const }]),
        ...valued.map((f) => [f, { type: 'string' as const }]),
      ]),
    });
  } catch (error) {
    throw new OptionsError(`Invalid options: ${(error as Error).message}\n${usage}`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return 'help';
  const input = {
    ...values,
    source: values.source ?? (env.SYNC_SOURCE_URL || undefined),
    'database-url': values['database-url'] ?? (env.DATABASE_URL || undefined),
  };
  const result = schema.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  --${i.path.join('.')}: ${i.message}`);
    throw new OptionsError(`Invalid options:\n${lines.join('\n')}`);
  }
  return result.data;
}
