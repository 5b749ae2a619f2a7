import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { startGatewayProcess } from '../support/gateway-process.js';
import { because, skipUnless } from '../support/skips.js';

// A crash is never silent, on the real process: an uncaught exception and an unhandled rejection each write
// one fatal JSON line naming the error and exit non-zero (70). The failure is forced through a test-only
// module loaded with --import (test/support/crash-hook.ts), which no request can reach. And `npm start`
// runs with an explicit heap limit (HEAP_MAX_MB). Needs a PostgreSQL server the child can reach.

const onServer = (await findServer()) !== null;
const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The JSON lines of a process's output (other lines skipped). */
const jsonLines = (output: string) => output.split('\n').flatMap((line) => {
  try {
    return [JSON.parse(line) as Record<string, any>];
  } catch {
    return [];
  }
});

describe('heap limit', () => {
  it('npm start gives node an explicit heap limit, from HEAP_MAX_MB (default 512)', () => {
    // `exec`: node replaces npm's shell, so the signals npm forwards (SIGTERM, SIGINT) reach the gateway
    // (and glibc's malloc arenas bounded: MALLOC_ARENA_MAX, read by glibc before node starts, so set here)
    expect(scripts.start).toBe('exec env MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} node --max-old-space-size=${HEAP_MAX_MB:-512} dist/main.js');
    expect(scripts.dev).toBe('exec env MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} node --max-old-space-size=${HEAP_MAX_MB:-512} --import tsx src/main.ts');
    expect(loadConfig({}).HEAP_MAX_MB).toBe(512);
    expect(() => loadConfig({ HEAP_MAX_MB: '10' })).toThrow(/HEAP_MAX_MB/);
  });
});

describe('the real process', skipUnless(onServer, because.noServerForChild), () => {
  const db = useDatabase();

  for (const kind of ['exception', 'rejection'] as const) {
    it(`an uncaught ${kind} writes one fatal line with the error and exits 70`, async () => {
      const gateway = await startGatewayProcess(
        { DATABASE_URL: db.target.url!, CRASH_HOOK: kind },
        30_000,
        { nodeArgs: ['--import', './test/support/crash-hook.ts'] },
      );
      try {
        const answer = await fetch(`${gateway.base}/healthz`);
        expect(answer.status).toBe(200);
        gateway.child.kill('SIGUSR2');
        const exit = await gateway.exited;
        expect(exit).toEqual({ code: 70, signal: null });
        const fatal = jsonLines(gateway.output()).filter((line) => line.level === 'fatal');
        expect(fatal).toHaveLength(1);
        expect(fatal[0]).toMatchObject({
          event: kind === 'exception' ? 'uncaughtException' : 'unhandledRejection',
          err: { message: `forced ${kind} (test hook)` },
          msg: expect.stringMatching(/exiting/),
        });
        expect(fatal[0]!.err.stack).toMatch(/crash-hook/);
      } finally {
        await gateway.stop(5_000);
      }
    });
  }

  const glibc = Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);
  it.skipIf(!glibc)('a process started without MALLOC_ARENA_MAX (glibc) warns, naming the setting', async () => {
    const gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, MALLOC_ARENA_MAX: '' }, 30_000);
    try {
      const line = jsonLines(gateway.output()).find((l) => typeof l.msg === 'string' && l.msg.startsWith('malloc arenas:'));
      expect(line?.level).toBe('warn');
      expect(line!.msg).toContain('MALLOC_ARENA_MAX=2');
    } finally {
      await gateway.stop(10_000);
    }
  });

  it('the start command applies HEAP_MAX_MB and the process says which limit is in effect', async () => {
    const gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, HEAP_MAX_MB: '200' }, 30_000, { command: scripts.start });
    try {
      const line = jsonLines(gateway.output()).find((l) => typeof l.msg === 'string' && l.msg.startsWith('heap limit:'));
      expect(line?.level).toBe('info');
      // exactly the configured limit (V8's heap_size_limit would add its young generation: 248 MB here)
      expect(line!.msg).toMatch(/^heap limit: 200 MB \(--max-old-space-size, HEAP_MAX_MB\)$/);
      // glibc's arenas bounded in node's own environment (env execs node: the same pid), and said at start
      expect(readFileSync(`/proc/${gateway.child.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
      const arenas = jsonLines(gateway.output()).find((l) => typeof l.msg === 'string' && l.msg.startsWith('malloc arenas:'));
      expect(arenas).toMatchObject({ level: 'info', msg: 'malloc arenas: at most 2 (MALLOC_ARENA_MAX)' });
      expect((await fetch(`${gateway.base}/healthz`)).status).toBe(200);
      // the start banner names every endpoint the listener serves
      const banner = jsonLines(gateway.output()).map((l) => String(l.msg));
      for (const path of ['/graphql', '/v2/rpc', '/v1/rpc', '/healthz', '/readyz', '/metrics']) {
        expect(banner.some((m) => m.includes(`${gateway.base}${path}`)), path).toBe(true);
      }
    } finally {
      expect(await gateway.stop(10_000)).toEqual({ code: 0, signal: null });
    }
  });
});
