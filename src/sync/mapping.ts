// Source rows (the indexer's MySQL tables, as mysql2 and zongji decode them: DECIMAL as exact strings,
// TIMESTAMP as 'YYYY-MM-DD HH:MM:SS' read in +00:00, VARBINARY as Buffer) → read-model rows.
// Pure functions: the backfill (COPY), the binlog follow and the polling follow all map through here.

import type {
  BalanceWrite, BlockWrite, ChainWrite, HistoryWrite, MovementWrite, TickKey, TickWrite, TransactionWrite, UtxoWrite,
} from '../db/write-rows.js';

// the read-model row shapes live with the writes (src/db/write-rows.ts); the sync's modules take them from here
export type {
  BalanceWrite, BlockWrite, ChainWrite, HistoryWrite, MovementWrite, TickKey, TickWrite, TransactionWrite, UtxoWrite,
} from '../db/write-rows.js';

/** A source row that cannot be mapped: named by table and id so an operator can find it. */
export class BadRowError extends Error {
  constructor(readonly table: string, readonly id: string, reason: string, readonly column?: string) {
    super(`${table} row ${id}: ${reason}`);
  }
}

export type SourceRow = Record<string, unknown>;

/** '+08:00' → 480 (minutes east of UTC). */
export function parseZone(zone: string): number | null {
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(zone);
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  if (Number(m[2]) > 14 || Number(m[3]) > 59) return null;
  return m[1] === '-' ? -minutes : minutes;
}

/** True for a time-zone name the runtime knows (IANA, e.g. America/New_York: its offset follows DST). */
export function isZoneName(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Minutes east of UTC of a named zone at an instant. */
function zoneOffsetAt(utcMs: number, zone: string): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(utcMs)).map((x) => [x.type, x.value]));
  const wall = Date.UTC(+p.year!, +p.month! - 1, +p.day!, +p.hour!, +p.minute!, +p.second!);
  return Math.round((wall - Math.floor(utcMs / 1000) * 1000) / 60_000);
}

const offsetCache = new Map<string, number>();
/** The offset that turns a wall-clock time of a named zone into UTC (cached per wall-clock hour). */
function wallOffset(wallMs: number, zone: string): number {
  const key = `${zone}|${Math.floor(wallMs / 3_600_000)}`;
  let off = offsetCache.get(key);
  if (off === undefined) {
    off = zoneOffsetAt(wallMs, zone);
    const again = zoneOffsetAt(wallMs - off * 60_000, zone); // across a DST change the first guess is an hour off
    if (again !== off) off = again;
    if (offsetCache.size > 100_000) offsetCache.clear();
    offsetCache.set(key, off);
  }
  return off;
}

export interface MapContext {
  /** minutes east of UTC of the zone the indexer host wrote its timestamps in (a fixed offset)… */
  zoneMinutes: number;
  /** …or its name, when the host's clock follows a zone with daylight-saving time */
  zoneName?: string;
}

/** The zone's offset now (polling reads windows on the indexer host's clock). */
export const currentZoneMinutes = (ctx: MapContext) => (ctx.zoneName ? zoneOffsetAt(Date.now(), ctx.zoneName) : ctx.zoneMinutes);

const wallClock = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

/** '0'…'9' */
const digitAt = (s: string, i: number) => { const c = s.charCodeAt(i); return c >= 48 && c <= 57; };

/**
 * 'YYYY-MM-DD HH:MM:SS' read in UTC → its ISO form, by slicing (the backfill converts millions of them:
 * through Date it was a quarter of the backfill's CPU). Only where that is certainly what Date would give:
 * a year from 1000, a month 01–12, a day up to 28, a time of day 00:00:00–23:59:59; anything else → null
 * (the caller takes the general path).
 */
const wallDigits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
function utcWallIso(s: string): string | null {
  if (s.length !== 19 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 32 || s.charCodeAt(13) !== 58
    || s.charCodeAt(16) !== 58) return null;
  for (const i of wallDigits) if (!digitAt(s, i)) return null;
  const two = (i: number) => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;
  const month = two(5); const day = two(8);
  if (s.charCodeAt(0) === 48 || month < 1 || month > 12 || day < 1 || day > 28 || two(11) > 23 || two(14) > 59 || two(17) > 59) return null;
  return `${s.slice(0, 10)}T${s.slice(11)}.000Z`;
}

/** A wall-clock time written in the source zone → ISO 8601 UTC. null/zero dates stay null. */
export function wallToUtc(value: unknown, zoneMinutes: number, zoneName?: string): string | null {
  if (value === null || value === undefined) return null;
  if (zoneMinutes === 0 && !zoneName && typeof value === 'string') {
    const iso = utcWallIso(value);
    if (iso !== null) return iso;
  }
  if (value instanceof Date) value = value.toISOString().replace('T', ' ').replace('Z', '');
  const m = wallClock.exec(String(value));
  if (!m) throw new Error(`not a timestamp: ${String(value)}`);
  if (m[1] === '0000') return null;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  // a time carrying its own offset (SQLite rows as go-sqlite3 writes them: '2024-03-01 20:01:00+08:00') is absolute
  const own = m[8] ? (m[8] === 'Z' ? 0 : (m[8][0] === '-' ? -1 : 1) * (Number(m[8].slice(1, 3)) * 60 + Number(m[8].slice(-2)))) : null;
  const ms = wall - (own ?? (zoneName ? wallOffset(wall, zoneName) : zoneMinutes)) * 60_000;
  return new Date(ms).toISOString();
}

/** DECIMAL text → the shortest exact plain form ('1000.000000000000000000' → '1000', '-0.50' → '-0.5'). */
export function normalizeDecimal(value: unknown): string {
  const s = typeof value === 'string' ? value : String(value);
  const fast = scanDecimal(s);
  if (fast !== null) return fast;
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const int = m[2]!.replace(/^0+(?=\d)/, '');
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const zero = /^0*$/.test(int) && frac === '';
  return `${m[1] && !zero ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** The usual form (as MySQL sends DECIMAL(38,18)), [-]digits[.digits], normalised by a scan without regular
 *  expressions; null for anything else. */
function scanDecimal(s: string): string | null {
  const p = plainDecimal(s);
  if (!p) return null;
  const n = s.length;
  let a = p.intStart;
  while (a < p.intEnd - 1 && s.charCodeAt(a) === 48) a++;
  let e = n;
  while (e > p.fracStart && s.charCodeAt(e - 1) === 48) e--;
  const int = a === p.intStart && p.intEnd === n ? (p.neg ? s.slice(1) : s) : s.slice(a, p.intEnd);
  if (e <= p.fracStart) return p.neg && int !== '0' ? `-${int}` : int;
  return `${p.neg ? '-' : ''}${int}.${s.slice(p.fracStart, e)}`;
}

/** Where a plain decimal's parts are ([-]digits[.digits]); null when `s` is not one. */
function plainDecimal(s: string): { neg: boolean; intStart: number; intEnd: number; fracStart: number } | null {
  const n = s.length;
  let i = n > 0 && s.charCodeAt(0) === 45 ? 1 : 0;
  const intStart = i;
  while (i < n && digitAt(s, i)) i++;
  const intEnd = i;
  if (intEnd === intStart) return null;
  if (i === n) return { neg: intStart === 1, intStart, intEnd, fracStart: n };
  if (s.charCodeAt(i) !== 46) return null;
  const fracStart = ++i;
  while (i < n && digitAt(s, i)) i++;
  return i === n ? { neg: intStart === 1, intStart, intEnd, fracStart } : null;
}

const hexText = /^(0x)?([0-9a-fA-F]+)$/;

/**
 * tx_hash as the source holds it — 32 raw bytes (rows since early 2024), the 66-character 0x text
 * (older rows, stored as those bytes), or NULL — → '0x' + lower-case hex ('' for NULL).
 */
export function normalizeHash(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') {
    const m = hexText.exec(value);
    return m ? `0x${m[2]!.toLowerCase()}` : value;
  }
  const buf = value as Buffer;
  if (buf.length === 32) return `0x${buf.toString('hex')}`;
  const text = buf.toString('latin1');
  const m = hexText.exec(text);
  if (m && (m[1] || m[2]!.length === 64)) return `0x${m[2]!.toLowerCase()}`;
  return buf.length === 0 ? '' : `0x${buf.toString('hex')}`;
}

const str = (v: unknown) => (v === null || v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
const id = (row: SourceRow) => str(row.id);

export const tickKeyOf = (row: SourceRow): TickKey => ({
  chain: str(row.chain).toLowerCase(), protocol: str(row.protocol).toLowerCase(), tick: str(row.tick).toLowerCase(),
});
export const tickKeyString = (k: TickKey) => `${k.chain}\u0000${k.protocol}\u0000${k.tick}`;

function time(table: string, row: SourceRow, column: string, ctx: MapContext, required = true): string | null {
  let t: string | null;
  try {
    t = wallToUtc(row[column], ctx.zoneMinutes, ctx.zoneName);
  } catch (error) {
    throw new BadRowError(table, id(row), `${column}: ${(error as Error).message}`);
  }
  if (t === null && required) throw new BadRowError(table, id(row), `${column} is empty`);
  return t;
}
function decimal(table: string, row: SourceRow, column: string): string {
  try {
    return normalizeDecimal(row[column]);
  } catch (error) {
    throw new BadRowError(table, id(row), `${column}: ${(error as Error).message}`);
  }
}

/**
 * `updated_at` of a table the indexer upserts (inscriptions, balances, utxos: `ON UPDATE CURRENT_TIMESTAMP`):
 * a row the indexer inserted carries its host's wall clock, written with `created_at` (the same text),
 * and is read in --source-time-zone like `created_at`; once the database updates the row, its own clock
 * stamps it (read as UTC).
 */
function stamped(table: string, row: SourceRow, ctx: MapContext, required = true): string | null {
  const inserted = row.created_at !== undefined && sameTime(row.created_at, row.updated_at);
  return time(table, row, 'updated_at', inserted ? ctx : { zoneMinutes: 0 }, required);
}
const sameTime = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a !== null && a !== undefined && str(a) === str(b);

export function mapChain(row: SourceRow): ChainWrite {
  return {
    chain: str(row.chain).toLowerCase(), chain_id: str(row.chain_id), outer_chain: str(row.outer_chain),
    name: str(row.name), logo: str(row.logo), network_id: str(row.network_id), ext: str(row.ext),
    display_order: Number(row.id),
  };
}

export function mapBlock(row: SourceRow, ctx: MapContext): BlockWrite {
  const r = { ...row, id: row.chain };
  return {
    chain: str(row.chain).toLowerCase(), block_number: str(row.block_number),
    block_time: time('block', r, 'block_time', ctx)!,
    // written by the database's clock (ON UPDATE CURRENT_TIMESTAMP): UTC as read
    indexed_at: time('block', r, 'updated_at', { zoneMinutes: 0 })!,
  };
}

export function mapTick(row: SourceRow, ctx: MapContext): TickWrite {
  const t = 'inscriptions';
  const k = tickKeyOf(row);
  const transferType = Number(row.transfer_type);
  if (![0, 1, 2].includes(transferType)) throw new BadRowError(t, id(row), `transfer_type ${transferType} is not 0, 1 or 2`);
  if (!k.tick || !k.protocol) throw new BadRowError(t, id(row), 'empty protocol or tick');
  return {
    id: id(row), ...k, name: str(row.name), limit_per_mint: decimal(t, row, 'limit_per_mint'),
    deploy_by: str(row.deploy_by), total_supply: decimal(t, row, 'total_supply'), deploy_hash: str(row.deploy_hash),
    deploy_time: time(t, row, 'deploy_time', ctx)!, transfer_type: transferType, decimals: Number(row.decimals),
    created_at: time(t, row, 'created_at', ctx)!, updated_at: stamped(t, row, ctx, false),
  };
}

export function mapBalance(row: SourceRow, ctx: MapContext): BalanceWrite {
  const t = 'balances';
  const balance = decimal(t, row, 'balance');
  const available = decimal(t, row, 'available');
  if (balance.startsWith('-') || available.startsWith('-')) throw new BadRowError(t, id(row), `negative balance ${balance}`);
  if (!str(row.address)) throw new BadRowError(t, id(row), 'empty address');
  return {
    ...tickKeyOf(row), address: str(row.address), balance, available,
    updated_at: stamped(t, row, ctx)!,
  };
}

/** Events 3–6 carry a signed amount: ≥ 0 is a transfer in (3), < 0 a transfer out (4), amount unsigned. */
export function mapMovement(row: SourceRow, ctx: MapContext): MovementWrite {
  const t = 'address_txs';
  const source = Number(row.event);
  let amount = decimal(t, row, 'amount');
  let event: number;
  if (source === 1 || source === 2) event = source;
  else if (source >= 3 && source <= 6) {
    event = amount.startsWith('-') ? 4 : 3;
  } else throw new BadRowError(t, id(row), `event ${String(row.event)} is not 1–6`);
  if (amount.startsWith('-')) amount = amount.slice(1);
  return {
    id: id(row), ...tickKeyOf(row), address: str(row.address), tx_hash: normalizeHash(row.tx_hash), amount, event,
    operate: str(row.operate), created_at: time(t, row, 'created_at', ctx)!, updated_at: time(t, row, 'updated_at', ctx)!,
  };
}

/** PostgreSQL's bigint: the source's `bigint unsigned` columns go up to 2^64 - 1. */
const bigintMax = 9_223_372_036_854_775_807n;

/** A `bigint unsigned` source value the read model's bigint column cannot hold is a bad row (named), not a failed COPY. */
function bigintValue(table: string, row: SourceRow, column: string): string {
  const v = str(row[column]);
  if (/^\d+$/.test(v) && BigInt(v) > bigintMax) {
    throw new BadRowError(table, id(row), `${column} ${v} is above the read model's bigint range (2^63 - 1)`, column);
  }
  return v;
}

export function mapTransaction(row: SourceRow, ctx: MapContext): TransactionWrite {
  const t = 'txs';
  return {
    id: id(row), chain: str(row.chain).toLowerCase(), protocol: str(row.protocol).toLowerCase(),
    block_height: bigintValue(t, row, 'block_height'), position_in_block: bigintValue(t, row, 'position_in_block'),
    block_time: time(t, row, 'block_time', ctx)!, tx_hash: normalizeHash(row.tx_hash), from_address: str(row.from),
    to_address: str(row.to), op: str(row.op), tick: str(row.tick).toLowerCase(), amt: decimal(t, row, 'amt'),
    gas: str(row.gas), gas_price: str(row.gas_price), status: Number(row.status),
    created_at: time(t, row, 'created_at', ctx)!, updated_at: time(t, row, 'updated_at', ctx)!,
  };
}

export function mapUtxo(row: SourceRow, ctx: MapContext): UtxoWrite {
  const t = 'utxos';
  const status = Number(row.status);
  if (status !== 1 && status !== 2) throw new BadRowError(t, id(row), `status ${status} is not 1 or 2`);
  const amount = decimal(t, row, 'amount');
  if (amount.startsWith('-')) throw new BadRowError(t, id(row), `negative amount ${amount}`);
  return {
    id: id(row), ...tickKeyOf(row), address: str(row.address), root_hash: normalizeHash(row.root_hash), amount, status,
    created_at: time(t, row, 'created_at', ctx)!, updated_at: stamped(t, row, ctx)!,
  };
}

/**
 * balance_txn → balance_history. The block height is not in the row: the source read attaches it as
 * `block_height` (its transaction's txs.block_height, same chain and hash: src/sync/source/schema.ts); a
 * binlog row has none and gets it from the read model's transactions when written (src/db/writes.ts).
 * amount stays signed (the change); event is the source's code (0–6).
 */
export function mapBalanceTxn(row: SourceRow, ctx: MapContext): HistoryWrite {
  const t = 'balance_txn';
  const balance = decimal(t, row, 'balance');
  const available = decimal(t, row, 'available');
  if (balance.startsWith('-') || available.startsWith('-')) throw new BadRowError(t, id(row), `negative balance ${balance}`);
  if (!str(row.address)) throw new BadRowError(t, id(row), 'empty address');
  const event = Number(row.event);
  if (!(event >= 0 && event <= 6)) throw new BadRowError(t, id(row), `event ${String(row.event)} is not 0–6`);
  const height = row.block_height === null || row.block_height === undefined ? null : str(row.block_height);
  return {
    id: id(row), ...tickKeyOf(row), address: str(row.address), block_height: height, amount: decimal(t, row, 'amount'),
    balance, available, event, tx_hash: normalizeHash(row.tx_hash), created_at: time(t, row, 'created_at', ctx)!,
  };
}
