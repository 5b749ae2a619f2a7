// The Dockerfile's runtime stage without Docker: its file set rebuilt in a temporary directory — package.json
// and the lockfile with `npm ci --omit=dev --ignore-scripts` (what the stage runs), dist/ compiled from this
// tree, sql/ and schema/ — then the migrations CLI and the gateway started from there, on the embedded
// engine, and asked over HTTP. A runtime import of a dev dependency, or a file the stage does not copy,
// fails here. Needs the npm registry (or npm's cache) for the production dependencies.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
/** The runtime stage's ENV (NODE_ENV=production, LOG_FORMAT=json, …), as the container starts with it. */
const imageEnv = Object.fromEntries(dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')).replace(/\\\n/g, ' ')
  .split('\n').filter((l) => l.startsWith('ENV ')).flatMap((l) => [...l.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])));

// only what a container has: no NODE_PATH, NODE_OPTIONS or the test runner's variables
const baseEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? tmpdir(),
  ...(process.env.npm_config_cache ? { npm_config_cache: process.env.npm_config_cache } : {}),
};

let dir = '';
let child: ChildProcess | undefined;
let output = '';
let base = '';

describe('the runtime stage of the Dockerfile, rebuilt in a temporary directory', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'igw-runtime-'));
    // nothing above the directory may lend it packages (Node looks in every parent's node_modules)
    for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules')), d).toBe(false);
    for (const f of ['package.json', 'package-lock.json']) cpSync(join(root, f), join(dir, f));
    cpSync(join(root, 'patches'), join(dir, 'patches'), { recursive: true });
    const install = /npm ci --omit=dev --ignore-scripts[^\n&]*/.exec(dockerfile)![0].trim().split(/\s+/);
    const patch = /npx --no-install patch-package/.exec(dockerfile)![0].split(' ');
    await Promise.all([
      run(install[0]!, install.slice(1), { cwd: dir, env: baseEnv, timeout: 300_000 })
        .then(() => run(patch[0]!, patch.slice(1), { cwd: dir, env: baseEnv, timeout: 120_000 })),
      // dist/ as the build stage makes it (tsconfig.build.json), written into the temporary directory
      run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'),
        '--outDir', join(dir, 'dist')], { cwd: root, timeout: 300_000 }),
    ]);
    cpSync(join(root, 'sql'), join(dir, 'sql'), { recursive: true });
    cpSync(join(root, 'schema'), join(dir, 'schema'), { recursive: true });
  }, 420_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('has the production dependencies and none of the dev ones', () => {
    expect(imageEnv).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '8080', LOG_FORMAT: 'json' });
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>; devDependencies: Record<string, string>;
    };
    for (const name of Object.keys(pkg.dependencies)) expect(existsSync(join(dir, 'node_modules', name)), name).toBe(true);
    for (const name of ['typescript', 'vitest', 'tsx', 'kubernetes-models']) {
      expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
    }
    expect(existsSync(join(dir, 'dist/main.js'))).toBe(true);
    // the driver fixes of patches/ are applied in the stage too (the pool recovers from killed connections)
    expect(readFileSync(join(dir, 'node_modules/postgres/src/connection.js'), 'utf8')).toContain('chunk = nextWriteTimer = null');
    expect(existsSync(join(dir, 'dist/cli/migrate.js'))).toBe(true);
  });

  it('the migrations CLI runs from it (as the migrations Job and compose service do)', async () => {
    const { stdout } = await run(process.execPath, ['dist/cli/migrate.js'], {
      cwd: dir, env: { ...baseEnv, EMBEDDED_DATA_DIR: join(dir, '.data/pglite') }, timeout: 120_000,
    });
    expect(stdout).toMatch(/applied migrations: 001_/);
    expect(stdout).toMatch(/database is up to date/);
  }, 150_000);

  it('the gateway starts from it with the image\'s command and answers /healthz, /readyz and JSON-RPC', async () => {
    // the CMD of the image, with HEAP_MAX_MB expanded by the shell as in the container
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    expect(cmd.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    child = spawn(cmd[0]!, cmd.slice(1), {
      cwd: dir,
      // the image's environment; only where it listens and keeps the embedded data differ here
      env: { ...baseEnv, ...imageEnv, HEAP_MAX_MB: '256', HOST: '127.0.0.1', PORT: '0', EMBEDDED_DATA_DIR: join(dir, '.data/pglite') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start in 120 s:\n${output}`)), 120_000);
      const look = () => {
        const m = /JSON-RPC v2:\s+(http:\/\/[\d.]+:\d+)\/v2\/rpc/.exec(output);
        if (m && /ready in/.test(output)) { clearTimeout(timer); resolve(m[1]!); }
      };
      child!.stdout!.on('data', look);
      child!.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code}:\n${output}`)); });
    });
    // the heap limit reached node (main.ts then leaves V8's heap policy alone)
    expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=256');

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);

    const rpc = await fetch(`${base}/v2/rpc/inds_getAllChains`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }),
    });
    expect(rpc.status).toBe(200);
    const body = await rpc.json() as { id: number; result: { chain: string }[] };
    expect(body.id).toBe(1);
    expect(body.result.map((c) => c.chain)).toEqual(expect.arrayContaining(['btc', 'eth', 'avalanche']));

    const gql = await fetch(`${base}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ chains { name } }' }),
    });
    expect(gql.status).toBe(200);
    expect(((await gql.json()) as { data: { chains: unknown[] } }).data.chains.length).toBeGreaterThan(0);

    // SIGTERM (what docker stop and Kubernetes send) ends it cleanly
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 150_000);
});
