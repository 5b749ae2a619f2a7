import type { Config } from '../config.js';
import { createSql } from './client.js';
import { migrate, StandbyError } from './migrate.js';
import { expandHosts, hostLabel } from '../domain/database-urls.js';
import { isEmpty, seedDemo } from './seed/index.js';

/**
 * Migrates (and, when asked or when the embedded database is empty, seeds) through a short-lived
 * writable connection; the gateway itself only ever connects read-only. A multi-host URL is tried host
 * by host (the driver would keep cycling through hosts that refuse): the first primary gets the
 * migrations; standbys are skipped, and if only standbys answer, StandbyError names them.
 */
export async function prepareDatabase(
  target: { url?: string; socketPath?: string },
  config: Pick<Config, 'DB_CONNECT_TIMEOUT_S'>,
  seed: 'always' | 'if-empty' | 'never',
  log: (line: string) => void = () => {},
): Promise<void> {
  if (!target.url) return prepareOne(target, 'the database', config, seed, log);
  const hosts = expandHosts(target.url);
  const standbys: string[] = [];
  let failure: unknown;
  for (const url of hosts) {
    try {
      return await prepareOne({ url }, hostLabel(url), config, seed, log);
    } catch (error) {
      if (!(error instanceof StandbyError)) {
        if (hosts.length === 1) throw error;
        failure ??= error;
        continue;
      }
      standbys.push(error.server);
    }
  }
  if (standbys.length) throw new StandbyError(standbys.join(', '), standbys.length > 1);
  throw failure;
}

async function prepareOne(
  target: { url?: string; socketPath?: string },
  server: string,
  config: Pick<Config, 'DB_CONNECT_TIMEOUT_S'>,
  seed: 'always' | 'if-empty' | 'never',
  log: (line: string) => void,
): Promise<void> {
  const sql = createSql({ ...target, poolMax: 1, statementTimeoutMs: 600_000, connectTimeoutS: config.DB_CONNECT_TIMEOUT_S, readOnly: false });
  try {
    const applied = await migrate(sql, undefined, server);
    if (applied.length > 0) log(`applied migrations: ${applied.join(', ')}`);
    if (seed === 'always' || (seed === 'if-empty' && (await isEmpty(sql)))) {
      const started = Date.now();
      await seedDemo(sql);
      log(`loaded the demo dataset in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
