import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { call } from '../support/http.js';

// `npm start` on a machine with no database: the real process, no DATABASE_URL, a fresh data directory.
// It must start PGlite, migrate, seed the demo data and answer both surfaces; a second start reuses the
// directory without seeding again. The first start is the compiled build (`npm start` = node dist/main.js,
// built here into .build-check/ beside dist/ so that sql/ and schema/ are found from the package root the
// same way), the second the dev path (`npm run dev`, tsx on src/).

const dataDir = mkdtempSync(join(tmpdir(), 'igw-embedded-'));
let gateway: GatewayProcess | undefined;

const root = fileURLToPath(new URL('../..', import.meta.url));
const buildDir = join(root, '.build-check');

afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(buildDir, { recursive: true, force: true });
});

describe('the embedded default, end to end', () => {
  it('the compiled build boots with no DATABASE_URL, seeds the demo data and answers GraphQL and JSON-RPC', async () => {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', buildDir],
      { cwd: root, stdio: 'pipe' });
    gateway = await startGatewayProcess({ EMBEDDED_DATA_DIR: dataDir, DB_POOL_MAX: '4' }, 120_000, { entry: join(buildDir, 'main.js') });
    expect(gateway.output()).toMatch(/loaded the demo dataset/);

    const gql = await fetch(`${gateway.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ chains { chain } tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { deployHash } }' }),
    }).then((r) => r.json() as Promise<any>);
    expect(gql.errors).toBeUndefined();
    expect(gql.data.chains.map((c: any) => c.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
    expect(gql.data.tick.deployHash).toBe('0x2f88df8669337ec739d8414df0f3ef32bf166cb73233c965e805b7fa54eef1f2');

    const rpc = await call(gateway.base, 'inds_getTicks', [5, 0, '', '', '', '', 3, 2]);
    expect(rpc.result.inscriptions).toHaveLength(5);
    expect(rpc.result.total).toBe(300);
    expect((await fetch(`${gateway.base}/readyz`)).status).toBe(200);

    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    gateway = undefined;
  }, 240_000); // a fresh PGlite takes 4-7 s and ~700 MB on a quiet machine, far longer on a busy one

  it('the dev path (tsx) starts again on the same directory without seeding twice', async () => {
    gateway = await startGatewayProcess({ EMBEDDED_DATA_DIR: dataDir, DB_POOL_MAX: '4' }, 120_000);
    expect(gateway.output()).not.toMatch(/loaded the demo dataset/);
    const rpc = await call(gateway.base, 'inds_getTicks', [1, 0, '', '', '', '', 0, 2]);
    expect(rpc.result.total).toBe(300);
  }, 240_000);
});
