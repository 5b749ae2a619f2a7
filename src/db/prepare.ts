import type { Config } from '../config.js';
import { createSql } from './client.js';
import { migrate } from './migrate.js';
import { hostLabel } from './urls.js';
import { isEmpty, seedDemo } from './seed/index.js';

/**
 * Migrates (and, when asked or when the embedded database is empty, seeds) through a short-lived
 * writable connection; the gateway itself only ever connects read-only.
 */
export async function prepareDatabase(
  target: { url?: string; socketPath?: string },
  config: Pick<Config, 'DB_CONNECT_TIMEOUT_S'>,
  seed: 'always' | 'if-empty' | 'never',
  log: (line: string) => void = () => {},
): Promise<void> {
  const sql = createSql({ ...target, poolMax: 1, statementTimeoutMs: 600_000, connectTimeoutS: config.DB_CONNECT_TIMEOUT_S, readOnly: false });
  try {
    const applied = await migrate(sql, undefined, target.url && !target.url.includes(',') ? hostLabel(target.url) : 'the database');
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
