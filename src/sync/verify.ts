// --verify: reconciliation of the read model against the source, read once on each side. Per chain the
// row counts of every synced table (and the indexed height); per tick the holders, the minted amount, the
// movement count and the transaction count (tx_cnt). Differences are printed as a table naming table, chain and tick with both values.
// The indexer's own counters (inscriptions_stats) are compared with the read model's as a cross-check,
// reported but not counted: that table may legitimately disagree (its tx_cnt counts every parsed operation).
import type { Sql } from '../db/client.js';
import { statsDisagreements } from './target/compare.js';
import { indexedHeights, rowsPerChain, tickCounts, type CountedTable } from './target/verify.js';
import { normalizeDecimal, tickKeyOf, tickKeyString, type SourceRow } from './mapping.js';
import type { SourceConnection } from './source/connection.js';
import {
  rowsPerSourceChain, sourceHeights, sourceHolders, sourceMints, sourceMovementCounts, sourceStats, sourceTickKeys, sourceTxCounts,
} from './source/counts.js';
import { beginSnapshot, endSnapshot } from './source/reads.js';

export interface Difference {
  check: 'rows' | 'height' | 'holders' | 'minted' | 'movements' | 'transactions' | 'stats';
  table: string;
  chain: string;
  /** protocol/tick, or '' for a per-chain check */
  tick: string;
  source: string;
  readModel: string;
}

export interface VerifyReport { differences: Difference[]; crossCheck: Difference[]; chains: number; ticks: number }

/** source table → the read-model table it fills (rows counted per chain on both sides) */
const perChain: [string, CountedTable][] = [
  ['chain_info', 'chains'], ['block', 'indexed_blocks'], ['inscriptions', 'ticks'], ['balances', 'balances'],
  ['address_txs', 'address_txs'], ['txs', 'transactions'], ['utxos', 'utxos'], ['balance_txn', 'balance_history'],
];

const SCALE = 18;
/** Exact decimal text → integer units of 10^-18 (the source's DECIMAL(38,18)). */
function units(text: string): bigint {
  const [i = '0', f = ''] = normalizeDecimal(text).replace('-', '').split('.');
  const v = BigInt(i) * 10n ** BigInt(SCALE) + BigInt((f + '0'.repeat(SCALE)).slice(0, SCALE) || '0');
  return text.trim().startsWith('-') ? -v : v;
}
function fromUnits(v: bigint): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  const unit = 10n ** BigInt(SCALE);
  return normalizeDecimal(`${neg ? '-' : ''}${a / unit}.${(a % unit).toString().padStart(SCALE, '0')}`);
}

function addTo(map: Map<string, bigint>, key: string, v: bigint) {
  map.set(key, (map.get(key) ?? 0n) + v);
}

/** What the source holds, counted in one snapshot: rows per table and chain, heights, and per tick key the
 *  holders, movements, transactions and minted sum; the tick keys' labels; the indexer's own counters. */
interface SourceCounts {
  rows: Map<string, Map<string, bigint>>;
  heights: Map<string, string>;
  holders: Map<string, bigint>;
  minted: Map<string, bigint>;
  movements: Map<string, bigint>;
  txCounts: Map<string, bigint>;
  /** tick key → 'chain \u0001 protocol/tick' */
  keys: Map<string, string>;
  stats: SourceRow[];
}

async function countSource(conn: SourceConnection): Promise<SourceCounts> {
  const s: SourceCounts = { rows: new Map(), heights: new Map(), holders: new Map(), minted: new Map(), movements: new Map(),
    txCounts: new Map(), keys: new Map(), stats: [] };
  const label = (r: SourceRow) => {
    const k = tickKeyOf(r);
    const key = tickKeyString(k);
    s.keys.set(key, `${k.chain}\u0001${k.protocol}/${k.tick}`);
    return key;
  };
  await beginSnapshot(conn);
  try {
    for (const [table] of perChain) {
      const byChain = new Map<string, bigint>();
      for (const r of await rowsPerSourceChain(conn, table)) addTo(byChain, String(r.chain).toLowerCase(), BigInt(String(r.n)));
      s.rows.set(table, byChain);
    }
    for (const r of await sourceHeights(conn)) s.heights.set(String(r.chain).toLowerCase(), String(r.block_number));
    for (const r of await sourceTickKeys(conn)) label(r);
    for (const r of await sourceHolders(conn)) addTo(s.holders, label(r), BigInt(String(r.n)));
    for (const r of await sourceMovementCounts(conn)) addTo(s.movements, label(r), BigInt(String(r.n)));
    for (const r of await sourceTxCounts(conn)) {
      const k = tickKeyString(tickKeyOf(r));
      if (s.keys.has(k)) addTo(s.txCounts, k, BigInt(String(r.n)));
    }
    // SQLite sums in floating point: its mint amounts come one by one and are summed exactly here
    for (const r of await sourceMints(conn)) addTo(s.minted, label(r), units(String(r.s ?? r.amount)));
    s.stats = await sourceStats(conn);
  } finally {
    await endSnapshot(conn);
  }
  return s;
}

/** Reads both sides and lists the differences. The source is read in one snapshot. */
export async function verify(conn: SourceConnection, sql: Sql): Promise<VerifyReport> {
  const src = await countSource(conn);
  const differences: Difference[] = [];
  for (const [table, target] of perChain) {
    const mine = await rowsPerChain(sql, target);
    const theirs = src.rows.get(table)!;
    for (const chain of [...new Set([...theirs.keys(), ...mine.keys()])].sort()) {
      const a = theirs.get(chain) ?? 0n;
      const b = mine.get(chain) ?? 0n;
      if (a !== b) differences.push({ check: 'rows', table: `${table} → ${target}`, chain, tick: '', source: String(a), readModel: String(b) });
    }
  }
  const myHeights = await indexedHeights(sql);
  for (const [chain, h] of src.heights) {
    const mine = myHeights.get(chain);
    if (mine !== undefined && mine !== h) differences.push({ check: 'height', table: 'block → indexed_blocks', chain, tick: '', source: h, readModel: mine });
  }
  differences.push(...compareTicks(src, await tickCounts(sql)));
  return { differences, crossCheck: await crossCheck(sql, src.stats), chains: new Set([...src.rows.get('inscriptions')!.keys()]).size, ticks: src.keys.size };
}

/** Per tick: holders, minted, movements and transactions against the read model's counters. */
function compareTicks(src: SourceCounts, ticks: Awaited<ReturnType<typeof tickCounts>>): Difference[] {
  const differences: Difference[] = [];
  const seen = new Set<string>();
  for (const t of ticks) {
    const key = tickKeyString(t);
    seen.add(key);
    if (!src.keys.has(key)) continue; // reported by the row counts of inscriptions
    const [chain, tick] = src.keys.get(key)!.split('\u0001') as [string, string];
    const h = src.holders.get(key) ?? 0n;
    if (h !== BigInt(t.holders)) differences.push({ check: 'holders', table: 'balances', chain, tick, source: String(h), readModel: t.holders });
    const m = src.minted.get(key) ?? 0n;
    if (m !== units(t.minted)) differences.push({ check: 'minted', table: 'address_txs', chain, tick, source: fromUnits(m), readModel: normalizeDecimal(t.minted) });
    const n = src.movements.get(key) ?? 0n;
    if (n !== BigInt(t.moves)) differences.push({ check: 'movements', table: 'address_txs', chain, tick, source: String(n), readModel: t.moves });
    const x = src.txCounts.get(key) ?? 0n;
    if (x !== BigInt(t.txs)) differences.push({ check: 'transactions', table: 'txs', chain, tick, source: String(x), readModel: t.txs });
  }
  for (const [key, l] of src.keys) {
    if (seen.has(key)) continue;
    const [chain, tick] = l.split('\u0001') as [string, string];
    differences.push({ check: 'rows', table: 'inscriptions → ticks', chain, tick, source: '1', readModel: '0' });
  }
  return differences;
}

/** The indexer's own counters against the read model's (listed, never counted as differences). */
async function crossCheck(sql: Sql, stats: SourceRow[]): Promise<Difference[]> {
  const out: Difference[] = [];
  for (let i = 0; i < stats.length; i += 5_000) {
    const batch = stats.slice(i, i + 5_000).map((r) => ({ ...tickKeyOf(r), minted: normalizeDecimal(r.minted), holders: String(r.holders), tx_cnt: String(r.tx_cnt) }));
    for (const d of await statsDisagreements(sql, batch)) {
      const tick = `${d.protocol}/${d.tick}`;
      if (d.source_holders !== d.holders) out.push({ check: 'stats', table: 'inscriptions_stats.holders', chain: d.chain, tick, source: d.source_holders, readModel: d.holders });
      if (normalizeDecimal(d.source_minted) !== normalizeDecimal(d.minted)) {
        out.push({ check: 'stats', table: 'inscriptions_stats.minted', chain: d.chain, tick, source: normalizeDecimal(d.source_minted), readModel: normalizeDecimal(d.minted) });
      }
      if (d.source_tx_cnt !== d.tx_cnt) out.push({ check: 'stats', table: 'inscriptions_stats.tx_cnt', chain: d.chain, tick, source: d.source_tx_cnt, readModel: d.tx_cnt });
    }
  }
  return out;
}

function table(rows: Difference[]): string[] {
  const head = ['check', 'table', 'chain', 'tick', 'source', 'read model'];
  const cells = rows.map((d) => [d.check, d.table, d.chain, d.tick || '-', d.source, d.readModel]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => x.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...cells.map(line)];
}

export function formatVerify(r: VerifyReport, limit = 200): string {
  const out: string[] = [];
  if (r.differences.length === 0) {
    out.push(`verify: the read model matches the source (${r.chains} chains, ${r.ticks} ticks: row counts per chain, holders, minted, movements and transactions per tick)`);
  } else {
    out.push(`verify: ${r.differences.length} difference${r.differences.length === 1 ? '' : 's'} between the source and the read model`);
    out.push(...table(r.differences.slice(0, limit)));
    if (r.differences.length > limit) out.push(`… and ${r.differences.length - limit} more`);
  }
  if (r.crossCheck.length) {
    out.push('', `cross-check (not counted): inscriptions_stats disagrees with the read model's counters on ${r.crossCheck.length} value${r.crossCheck.length === 1 ? '' : 's'}`,
      '(its tx_cnt counts every parsed operation; the read model derives its counters from the rows)');
    out.push(...table(r.crossCheck.slice(0, 50)));
    if (r.crossCheck.length > 50) out.push(`… and ${r.crossCheck.length - 50} more`);
  } else {
    out.push('cross-check: inscriptions_stats agrees with the read model\'s counters');
  }
  return out.join('\n');
}
