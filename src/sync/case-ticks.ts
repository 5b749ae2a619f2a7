// Ticks that differ only in case. The indexer lower-cases every tick it parses
// (uxuycom/indexer protocol/metadata.go ParseEVMMetaData: "trim prefix / suffix spaces & case insensitive";
// asc20's exchange does the same), so to it `zebra` and `ZEBRA` are one tick and it never writes a second
// inscription differing only in case. Its `inscriptions` key is binary-collated, though, so a hand edit can:
// the read model, keyed by the lower-cased tick as the indexer reads it, keeps the first (lowest id) and
// reports the later one as a bad row; the rows spelled exactly like the later one (its balances, movements,
// utxos, history) are bad rows too, never mixed into the first tick's.
import type { ShadowedTick } from './target/state.js';
import { BadRowError, tickKeyOf, tickKeyString, type SourceRow } from './mapping.js';

const text = (v: unknown) => (v === null || v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
/** The source's spelling of a row's tick (chain and protocol as the indexer compares them: lower case). */
const spelling = (row: { chain: unknown; protocol: unknown; tick: unknown }) =>
  `${text(row.chain).toLowerCase()}\u0000${text(row.protocol).toLowerCase()}\u0000${text(row.tick)}`;

export class ShadowedTicks {
  private readonly bySpelling = new Map<string, ShadowedTick>();
  constructor(rows: ShadowedTick[] = []) {
    for (const r of rows) this.bySpelling.set(spelling(r), r);
  }
  get size(): number { return this.bySpelling.size; }
  add(r: ShadowedTick): void { this.bySpelling.set(spelling(r), r); }
  /** a child row (balances, address_txs, utxos, balance_txn) of a shadowed inscription: a bad row */
  check(table: string, row: SourceRow): void {
    const s = this.bySpelling.get(spelling(row as { chain: unknown; protocol: unknown; tick: unknown }));
    if (!s) return;
    throw new BadRowError(table, text(row.id), `tick ${JSON.stringify(s.tick)} is inscription ${s.id}, which differs only in case ` +
      `from inscription ${s.first_id} (skipped: the indexer lower-cases ticks)`, 'tick');
  }
}

/** The bad-row error of an inscription whose tick an earlier one (`firstId`) already has in another case. */
export function caseDuplicate(row: SourceRow, firstId: string): { error: BadRowError; shadow: ShadowedTick } {
  const k = tickKeyOf(row);
  const shadow = { id: text(row.id), chain: k.chain, protocol: k.protocol, tick: text(row.tick), first_id: firstId };
  const error = new BadRowError('inscriptions', shadow.id, `tick ${JSON.stringify(shadow.tick)} differs only in case from inscription ` +
    `${firstId}'s (${k.chain}/${k.protocol}/${k.tick}): the indexer lower-cases ticks, so they are one tick; the first is kept`, 'tick');
  return { error, shadow };
}

/** Tracks the lower-cased key → id of the inscriptions seen (the read model's and the new ones). */
export class TickKeys {
  private readonly ids: Map<string, string>;
  constructor(known: Iterable<[string, string]> = []) { this.ids = new Map(known); }
  /** the earlier inscription this one duplicates in another case, or null (then it is recorded) */
  claim(row: SourceRow): string | null {
    const k = tickKeyString(tickKeyOf(row));
    const holder = this.ids.get(k);
    const id = text(row.id);
    if (holder !== undefined && holder !== id) return holder;
    this.ids.set(k, id);
    return null;
  }
}
