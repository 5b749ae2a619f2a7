// The indexer's own per-tick stats (inscriptions_stats) are not copied: the read model derives minted,
// holders and tx count from the rows. They are compared once after the backfill and disagreements are
// logged — the indexer's tx_cnt counts every parsed operation, so some difference is expected.
import type { Sql } from '../db/client.js';
import { statsDisagreements } from './target/compare.js';
import { normalizeDecimal, tickKeyOf } from './mapping.js';
import { sourceStatsPage } from './source/reads.js';
import { connectSource, type SourceTarget } from './source/connection.js';
import type { Logger } from '../observability/logger.js';

export async function crossCheckStats(sql: Sql, target: SourceTarget, log: Logger, batch = 10_000): Promise<number> {
  const conn = await connectSource(target);
  let disagreements = 0;
  const examples: unknown[] = [];
  try {
    let last = '0';
    for (;;) {
      const stats = await sourceStatsPage(conn, last, batch);
      if (!stats.length) break;
      last = String(stats[stats.length - 1]!.id);
      const found = await statsDisagreements(sql, stats.map((r) => ({
        ...tickKeyOf(r), minted: normalizeDecimal(r.minted), holders: String(r.holders), tx_cnt: String(r.tx_cnt),
      })));
      disagreements += found.length;
      examples.push(...found.slice(0, 10 - examples.length));
      if (stats.length < batch) break;
    }
  } finally {
    await conn.end().catch(() => {});
  }
  if (disagreements) {
    log.warn({ ticks: disagreements, examples },
      'inscriptions_stats disagrees with the counts derived from the rows (the read model serves the derived ones)');
  }
  return disagreements;
}
