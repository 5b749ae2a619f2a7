// The image built without Docker: the Dockerfile replayed (test/support/dockerfile.ts) — exactly its COPYs
// from the build context (.dockerignore applied) into a clean directory per stage, then its RUNs — and the
// runtime stage's result started with the image's CMD, environment and user. A source file the build
// stage does not copy (src/ importing examples/), a runtime import of a dev dependency, a native module
// without its binding or a patch that fails shows here. Needs root (the image's user is uid 1000, and its
// RUN chowns to it), Node 20 (the base image's) and the npm registry or npm's cache; the SQLite sync also
// needs a PostgreSQL server.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { listFiles, parseDockerfile, replayDockerfile, type BuiltStage } from '../support/dockerfile.js';
import { IndexerWriter } from '../support/indexer.js';
import { createSqliteSource, type SqliteSource } from '../support/indexer-sqlite.js';
import { because, skipIfMissing, skipUnless } from '../support/skips.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const nodeMajor = Number(process.versions.node.split('.')[0]);
const baseIsNode20 = dockerfile.stages.every((s) => /^node:20-bookworm(-slim)?$/.test(s.base));
const missing = [
  process.getuid?.() === 0 ? '' : 'root',
  nodeMajor === 20 ? '' : 'Node 20 (the base image\'s)',
].filter(Boolean);
const onServer = (await findServer()) !== null;
const commit = '0123456789abcdef0123456789abcdef01234567';

/** npm's cache (the cache mount's host side) and user config (the builder's registry settings). */
const npmCache = process.env.npm_config_cache ?? join(homedir(), '.npm');
const npmrc = join(homedir(), '.npmrc');
const baseEnv: Record<string, string> = {
  // the base image's node, npm and npx; the rest of PATH for sh and coreutils
  PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
  ...(existsSync(npmrc) ? { npm_config_userconfig: npmrc } : {}),
};

let dir = '';
let stages: Map<string, BuiltStage>;
let runtime: BuiltStage;
let app = '';
const children: ChildProcess[] = [];

/** A process in the runtime image: its WORKDIR, ENV and USER; container paths of the ENV mapped. */
function inImage(argv: string[], env: Record<string, string> = {}) {
  const mapped = Object.fromEntries(Object.entries(runtime.env).map(([k, v]) => [k, v.startsWith('/') ? join(runtime.root, v) : v]));
  return spawn(argv[0]!, argv.slice(1), {
    cwd: app,
    env: { PATH: baseEnv.PATH!, HOME: join(runtime.root, 'home/node'), ...mapped, ...env },
    uid: runtime.user.uid,
    gid: runtime.user.gid,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function finished(child: ChildProcess): Promise<{ code: number | null; output: string }> {
  let output = '';
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('the Dockerfile, replayed', skipIfMissing(missing), () => {
  beforeAll(async () => {
    expect(baseIsNode20).toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'igw-image-'));
    chmodSync(dir, 0o755); // the image's user reads its files through it
    // nothing above the directory may lend it packages (Node looks in every parent's node_modules)
    for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules')), d).toBe(false);
    stages = await replayDockerfile(dockerfile, {
      context: root, dir, buildArgs: { GIT_COMMIT: commit }, caches: { '/root/.npm': npmCache }, baseEnv,
    });
    runtime = stages.get('runtime')!;
    app = join(runtime.root, runtime.workdir);
    // two npm installs and better-sqlite3's compile: 9 min measured alone at load 15, more beside the suite
  }, 1_800_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // three stages' node_modules: a while on a busy disk
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 300_000);

  it('the build stage compiles src/ from what it copies: no examples/, test/ or bench/ in it', () => {
    const build = stages.get('build')!;
    const top = listFiles(join(build.root, build.workdir)).map((f) => f.split('/')[0]!);
    expect(new Set(top)).toEqual(new Set(['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'schema', 'src', 'node_modules', 'dist']));
    expect(existsSync(join(build.root, build.workdir, 'dist/main.js'))).toBe(true);
  });

  it('the runtime stage: production dependencies only, dist/, sql/, schema/; no sources', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const name of Object.keys(pkg.dependencies)) expect(existsSync(join(app, 'node_modules', name)), name).toBe(true);
    for (const name of ['typescript', 'vitest', 'tsx', 'kubernetes-models', 'dockerfile-ast']) {
      expect(existsSync(join(app, 'node_modules', name)), name).toBe(false);
    }
    for (const f of ['dist/main.js', 'dist/cli/migrate.js', 'dist/cli/sync.js', 'sql/001_read_model.sql', 'schema/openrpc.json']) {
      expect(existsSync(join(app, f)), f).toBe(true);
    }
    for (const f of ['src', 'test', 'examples', 'bench', 'patches', 'tsconfig.json']) expect(existsSync(join(app, f)), f).toBe(false);
    expect(runtime.env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '8080', LOG_FORMAT: 'json' });
    expect(runtime.user).toEqual({ uid: 1000, gid: 1000 });
  });

  it('patches/ applied in the image without an error line; the dev-only patch skipped', () => {
    const deps = stages.get('deps')!;
    const plain = deps.output.replace(/\x1b\[[0-9;]*m/g, '');
    expect(plain).not.toMatch(/^Error:/m);
    expect(plain).toMatch(/Skipping dev-only @open-rpc\/spec-types@0\.0\.2/);
    expect(plain).toMatch(/postgres@3\.4\.9 ✔/);
    // the driver fixes (the pool recovers from killed connections)
    expect(readFileSync(join(app, 'node_modules/postgres/src/connection.js'), 'utf8')).toContain('chunk = nextWriteTimer = null');
  });

  it('better-sqlite3\'s native binding loads as the image\'s user', async () => {
    const child = inImage([process.execPath, '-e',
      "const D=require('better-sqlite3');const d=new D(':memory:');console.log(d.prepare('select sqlite_version() v').get().v)"]);
    children.push(child);
    const { code, output } = await finished(child);
    expect(output).toMatch(/^3\.\d+\.\d+\s*$/);
    expect(code).toBe(0);
  });

  it('the commit: build arg → OCI label → environment', () => {
    expect(runtime.labels['org.opencontainers.image.revision']).toBe(commit);
    expect(runtime.env.GIT_COMMIT).toBe(commit);
  });

  it('the image\'s CMD serves as its user: health, readiness, both surfaces, igw_build_info with the commit; SIGTERM ends it', async () => {
    expect(runtime.cmd.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    const child = inImage(runtime.cmd, { HOST: '127.0.0.1', PORT: '0', HEAP_MAX_MB: '256', DB_POOL_MAX: '4' });
    children.push(child);
    const done = finished(child);
    let output = '';
    child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start in 150 s:\n${output}`)), 150_000);
      child.stdout!.on('data', () => {
        const m = /JSON-RPC v2:\s+(http:\/\/[\d.]+:\d+)\/v2\/rpc/.exec(output);
        if (m && /ready in/.test(output)) { clearTimeout(timer); resolve(m[1]!); }
      });
      void done.then(({ code, output: all }) => { clearTimeout(timer); reject(new Error(`exited with ${code}:\n${all}`)); });
    });
    // the heap limit reached node; the embedded data went where the image's user may write
    expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=256');
    expect(existsSync(join(app, '.data/pglite/PG_VERSION'))).toBe(true);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const rpc = await fetch(`${base}/v2/rpc/inds_getAllChains`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }),
    }).then((r) => r.json() as Promise<{ result: { chain: string }[] }>);
    expect(rpc.result.map((c) => c.chain)).toEqual(expect.arrayContaining(['btc', 'eth', 'avalanche']));
    const gql = await fetch(`${base}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ chains { name } }' }),
    }).then((r) => r.json() as Promise<{ data: { chains: unknown[] } }>);
    expect(gql.data.chains.length).toBeGreaterThan(0);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^igw_build_info\\{version="0\\.1\\.0",commit="${commit}"\\} 1$`, 'm'));
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  }, 200_000);

  describe('the SQLite sync (`npm run sync`) in the image', skipUnless(onServer, because.noServerForChild), () => {
    const db = useDatabase();
    let src: SqliteSource;

    beforeAll(async () => {
      src = createSqliteSource();
      // the image's user reads the indexer's file (and its WAL index)
      chmodSync(dirname(src.path), 0o777);
      const w = new IndexerWriter(src.conn, 0, 'sqlite');
      const tick = { chain: 'eth', protocol: 'erc-20', tick: 'imgs' };
      w.deploy({ ...tick, deployBy: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01', totalSupply: '1000000' });
      await w.flush('eth');
      w.mint(tick, '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A', '1000', 'text');
      await w.flush('eth');
      for (const f of ['indexer.db', 'indexer.db-wal', 'indexer.db-shm']) {
        if (existsSync(join(dirname(src.path), f))) chmodSync(join(dirname(src.path), f), 0o666);
      }
    });
    afterAll(async () => {
      await src?.close();
    });

    it('backfills the read model from the SQLite file and exits (--once)', async () => {
      const child = inImage(['npm', 'run', 'sync', '--', '--source', src.url, '--database-url', db.target.url!, '--once',
        '--source-time-zone', '+00:00']);
      children.push(child);
      const { code, output } = await finished(child);
      expect(output).not.toMatch(/Could not locate the bindings file/);
      expect(code, output.slice(-3000)).toBe(0);
      const [tick] = await db.sql`SELECT tick, minted::text AS minted, holders::int AS holders FROM ticks`;
      expect(tick).toEqual({ tick: 'imgs', minted: '1000', holders: 1 });
    }, 180_000);
  });
});
