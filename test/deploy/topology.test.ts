// The database half of deploy/compose.yaml run without Docker (deploy/smoke/local-topology.sh): the
// primary initialised by deploy/postgres/primary-init.sh, the standby started by standby-entrypoint.sh,
// PgBouncer on deploy/pgbouncer/pgbouncer.ini, migrations and seed as the owner role, gateways as the
// reader, and (with nginx installed) deploy/nginx/nginx.conf in front of three of them. Needs root (the servers run as the postgres user), PostgreSQL's server binaries and pgbouncer;
// skipped where they are missing.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { skipIfMissing } from '../support/skips.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pgBin = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').some((v) =>
  existsSync(`/usr/lib/postgresql/${v}/bin/initdb`)) : false;
const onPath = (name: string) => (process.env.PATH ?? '').split(':').some((d) => existsSync(`${d}/${name}`));
const nginx = existsSync('/usr/sbin/nginx') || onPath('nginx');
const missing = [
  process.getuid?.() === 0 ? '' : 'root',
  pgBin ? '' : 'PostgreSQL server binaries',
  onPath('pg_basebackup') ? '' : 'pg_basebackup',
  onPath('pgbouncer') || existsSync('/usr/sbin/pgbouncer') ? '' : 'pgbouncer',
  existsSync(`${root}/dist/main.js`) ? '' : 'dist/ (npm run build)',
].filter(Boolean);

describe("compose's database topology on local binaries", skipIfMissing(missing), () => {
  it('primary with the roles, streaming standby, PgBouncer routing, owner migrations and seed, reader gateways', async () => {
    const run = () => promisify(execFile)('bash', ['deploy/smoke/local-topology.sh'], {
      cwd: root, timeout: 240_000, maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` },
    });
    // on failure, the script's own output (which step, which log) is the report
    let stdout: string;
    try {
      ({ stdout } = await run());
    } catch (error) {
      const x = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`local-topology.sh failed: ${x.message}\n${(x.stdout ?? '').slice(-4000)}\n${(x.stderr ?? '').slice(-4000)}`);
    }
    expect(stdout).toMatch(/standby in recovery: t/);
    expect(stdout).toMatch(/applied migrations: 001_read_model/);
    expect(stdout).toMatch(/loaded the demo dataset/);
    const [, primary, standby] = /ticks: primary (\d+), standby (\d+)/.exec(stdout)!;
    expect(Number(primary)).toBeGreaterThan(0);
    expect(standby).toBe(primary);
    expect(stdout).toMatch(/reader write refused: ok/);
    expect(stdout).toMatch(new RegExp(`pgbouncer/igw -> f\\|${primary} .* pgbouncer/igw_standby -> t\\|${primary}`));
    expect(stdout).toMatch(/role settings through the pooler: on 5s/);
    // primary, standby and PgBouncer on loopback only: three listeners, each 127.0.0.1
    expect(/^listening: (.*)$/m.exec(stdout)?.[1]?.trim().split(' ')).toEqual([
      expect.stringMatching(/^127\.0\.0\.1:\d+$/), expect.stringMatching(/^127\.0\.0\.1:\d+$/), expect.stringMatching(/^127\.0\.0\.1:\d+$/)]);
    expect(stdout).toMatch(/standby-direct: \/readyz 200; inds_getTicks: \{"jsonrpc":"2.0","result":\{"inscriptions":\[/);
    if (nginx) {
      // deploy/nginx/nginx.conf in front of three gateways: health, /metrics kept private, request ids, spread,
      // and a stopped gateway's share answered by the others
      expect(stdout).toMatch(/configuration file .* test is successful/);
      expect(stdout).toMatch(/lb: \/lb-health 200, \/readyz 200, \/metrics 404/);
      expect(stdout).toMatch(/lb: x-request-id passed through: smoke-req-1/);
      expect(stdout).toMatch(/lb: upstreams used: 3/);
      expect(stdout).toMatch(/lb: with one gateway stopped, 9 of 9 answered/);
    } else {
      expect(stdout).toMatch(/skipped: no nginx/);
    }
    expect(stdout).toMatch(/local topology: ok\s*$/);
  }, 260_000);
});
