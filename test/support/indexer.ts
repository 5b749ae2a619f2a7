// A source database in the indexer's MySQL schema (test/fixtures/indexer-schema.sql) and a writer that
// writes rows the way the indexer does: one transaction per flush, timestamps of inserts as wall-clock
// text in the indexer host's zone, updates stamped by the database (ON UPDATE CURRENT_TIMESTAMP),
// tx_hash as 32 raw bytes (or the 0x text of older rows), signed transfer amounts, balances upserted.
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll } from 'vitest';

const schema = readFileSync(new URL('../fixtures/indexer-schema.sql', import.meta.url), 'utf8');

export interface MariaServer { host: string; port: number; user: string }
const defaultMaria: MariaServer = { host: '127.0.0.1', port: 3306, user: 'root' };

export interface SourceDb {
  database: string;
  url: string;
  conn: mysql.Connection;
  close(): Promise<void>;
}

export async function createSourceDatabase(server: MariaServer = defaultMaria): Promise<SourceDb> {
  const database = `igw_src_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const conn = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, multipleStatements: true,
    dateStrings: true, supportBigNumbers: true, bigNumberStrings: true });
  await conn.query(`CREATE DATABASE \`${database}\` DEFAULT COLLATE utf8mb4_general_ci`);
  await conn.query(`USE \`${database}\``);
  await conn.query(`SET time_zone = '+00:00'`);
  await conn.query(schema);
  return {
    database,
    url: `mysql://${server.user}@${server.host}:${server.port}/${database}`,
    conn,
    async close() {
      await conn.query(`DROP DATABASE IF EXISTS \`${database}\``).catch(() => {});
      await conn.end().catch(() => {});
    },
  };
}

export interface TickRef { chain: string; protocol: string; tick: string }
type Stmt = [string, unknown[]];

let hashSeed = 0;
/** A 32-byte hash (hex without 0x) for fixtures. */
const nextHash = () => (++hashSeed).toString(16).padStart(8, '0').repeat(8);

/** What the writer needs of a connection: a mysql2 connection, or the SQLite one of ./indexer-sqlite.ts. */
export interface WriterConn {
  query(sql: string, params?: unknown[]): Promise<unknown>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** Writes like the indexer. `zone` is the indexer host's UTC offset in minutes (inserts use its clock).
 *  `dialect` 'sqlite': the same rows as the indexer writes them into its SQLite storage (times with their
 *  offset as go-sqlite3 writes a time.Time, upserts as ON CONFLICT, updated_at stamped by the writer). */
export class IndexerWriter {
  private clock = Date.UTC(2024, 2, 1, 12, 0, 0);
  private height = 1_000_000;
  private sid = 0;
  private pending: Stmt[] = [];
  private readonly balances = new Map<string, bigint>();

  constructor(private readonly conn: WriterConn, private readonly zoneMinutes: number,
    private readonly dialect: 'mysql' | 'sqlite' = 'mysql') {}

  /** A UTC instant as the indexer host writes it: wall-clock text in its zone (SQLite: with the offset). */
  local(ms: number): string {
    const wall = new Date(ms + this.zoneMinutes * 60_000).toISOString().slice(0, 19).replace('T', ' ');
    if (this.dialect === 'mysql') return wall;
    const z = Math.abs(this.zoneMinutes);
    return `${wall}${this.zoneMinutes < 0 ? '-' : '+'}${String(Math.floor(z / 60)).padStart(2, '0')}:${String(z % 60).padStart(2, '0')}`;
  }
  now() { return this.clock; }

  private hashValue(hex: string, form: 'raw' | 'text'): Buffer {
    return form === 'raw' ? Buffer.from(hex, 'hex') : Buffer.from(`0x${hex}`, 'latin1');
  }

  deploy(t: TickRef & { deployBy?: string; totalSupply?: string; limit?: string; hash?: string; decimals?: number; transferType?: number }) {
    this.clock += 60_000;
    const sid = ++this.sid;
    const hash = t.hash ?? `0x${nextHash()}`;
    this.pending.push([`INSERT INTO inscriptions (sid, chain, protocol, tick, name, limit_per_mint, deploy_by, total_supply, decimals,
        deploy_hash, deploy_time, transfer_type, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    [sid, t.chain, t.protocol, t.tick, t.tick, t.limit ?? '1000', t.deployBy ?? '0x1111111111111111111111111111111111111111',
      t.totalSupply ?? '21000000', t.decimals ?? 18, hash, this.local(this.clock), t.transferType ?? 2, this.local(this.clock), this.local(this.clock)]]);
    this.pending.push([`INSERT INTO inscriptions_stats (sid, chain, protocol, tick, minted, mint_first_block, mint_last_block, last_sn,
        holders, tx_cnt, created_at, updated_at) VALUES (?,?,?,?,0,0,0,0,0,0,?,?)`,
    [sid, t.chain, t.protocol, t.tick, this.local(this.clock), this.local(this.clock)]]);
    this.tx(t, 'deploy', t.deployBy ?? '0x1111111111111111111111111111111111111111', '', '0', hash.slice(2), 'text');
    this.movement(t, 1, t.deployBy ?? '0x1111111111111111111111111111111111111111', '0', hash.slice(2), 'text', 'deploy');
    return this;
  }

  private tx(t: TickRef, op: string, from: string, to: string, amt: string, hex: string, form: 'raw' | 'text') {
    this.pending.push([`INSERT INTO txs (chain, protocol, block_height, position_in_block, block_time, tx_hash, \`from\`, \`to\`, op, tick,
        amt, gas, gas_price, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    [t.chain, t.protocol, ++this.height, 0, this.local(this.clock), this.hashValue(hex, form), from, to, op, t.tick, amt, 21000,
      25_000_000_000, 1, this.local(this.clock), this.local(this.clock)]]);
  }

  private movement(t: TickRef, event: number, address: string, amount: string, hex: string, form: 'raw' | 'text', operate: string, related = '') {
    this.pending.push([`INSERT INTO address_txs (chain, event, protocol, operate, tx_hash, address, related_address, amount, tick,
        created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
    [t.chain, event, t.protocol, operate, this.hashValue(hex, form), address, related, amount, t.tick, this.local(this.clock), this.local(this.clock)]]);
  }

  private credit(t: TickRef, address: string, delta: bigint, move: { event: number; hex: string; form: 'raw' | 'text' }, scale = 18n) {
    const key = `${t.chain}|${t.protocol}|${t.tick}|${address.toLowerCase()}`;
    const next = (this.balances.get(key) ?? 0n) + delta;
    this.balances.set(key, next);
    const unit = 10n ** scale;
    const units = (v: bigint) => `${v < 0n ? '-' : ''}${(v < 0n ? -v : v) / unit}.${((v < 0n ? -v : v) % unit).toString().padStart(Number(scale), '0')}`;
    const text = units(next);
    // the per-movement history: the signed change and the balance after it (the indexer's balance_txn)
    this.pending.push([`INSERT INTO balance_txn (chain, protocol, event, address, tick, amount, available, balance, tx_hash, created_at,
        updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
    [t.chain, t.protocol, move.event, address, t.tick, units(delta), this.dialect === 'mysql' ? 0 : '0', text,
      this.hashValue(move.hex, move.form), this.local(this.clock), this.local(this.clock)]]);
    // absolute values, inserted with the host's clock (now, as wall-clock text of its zone); an existing row
    // is updated in place (database clock)
    this.pending.push(this.dialect === 'mysql' ? [`INSERT INTO balances (sid, chain, protocol, address, tick, available, balance, created_at, updated_at)
        VALUES ((SELECT coalesce(max(b.sid), 0) + 1 FROM balances b), ?, ?, ?, ?, 0, ?, ?, ?)
        ON DUPLICATE KEY UPDATE balance = VALUES(balance), available = 0`,
    [t.chain, t.protocol, address, t.tick, text, this.local(Date.now()), this.local(Date.now())]]
      : [`INSERT INTO balances (sid, chain, protocol, address, tick, available, balance, created_at, updated_at)
        VALUES ((SELECT coalesce(max(b.sid), 0) + 1 FROM balances b), ?, ?, ?, ?, '0', ?, ?, ?)
        ON CONFLICT (address, chain, protocol, tick) DO UPDATE SET balance = excluded.balance, available = '0', updated_at = excluded.updated_at`,
      [t.chain, t.protocol, address, t.tick, text, this.local(Date.now()), this.local(Date.now())]]);
  }

  /** amount: a decimal string with up to 18 fractional digits. */
  mint(t: TickRef, address: string, amount: string, form: 'raw' | 'text' = 'raw') {
    this.clock += 60_000;
    const hex = nextHash();
    this.tx(t, 'mint', address, address, amount, hex, form);
    this.movement(t, 2, address, amount, hex, form, 'mint');
    this.credit(t, address, toUnits(amount), { event: 2, hex, form });
    return this;
  }

  transfer(t: TickRef, from: string, to: string, amount: string, form: 'raw' | 'text' = 'raw') {
    this.clock += 60_000;
    const hex = nextHash();
    this.tx(t, 'transfer', from, to, amount, hex, form);
    this.movement(t, 3, from, `-${amount}`, hex, form, 'transfer', to);
    this.movement(t, 3, to, amount, hex, form, 'transfer', from);
    this.credit(t, from, -toUnits(amount), { event: 3, hex, form });
    this.credit(t, to, toUnits(amount), { event: 3, hex, form });
    return this;
  }

  /** Raw statements in the flush (bad rows, odd cases). */
  raw(sql: string, params: unknown[] = []) {
    this.pending.push([sql, params]);
    return this;
  }

  /** The flush: everything queued plus the chain's block row, in one transaction. */
  async flush(chain = 'eth'): Promise<void> {
    this.pending.push(this.dialect === 'mysql' ? [`INSERT INTO block (chain, block_hash, block_number, block_time, chain_id) VALUES (?, ?, ?, ?, 1)
        ON DUPLICATE KEY UPDATE block_hash = VALUES(block_hash), block_number = VALUES(block_number), block_time = VALUES(block_time)`,
    [chain, `0x${nextHash()}`, this.height, this.local(this.clock)]]
      : [`INSERT INTO block (chain, block_hash, block_number, block_time, chain_id, updated_at) VALUES (?, ?, ?, ?, 1, CURRENT_TIMESTAMP)
        ON CONFLICT (chain) DO UPDATE SET block_hash = excluded.block_hash, block_number = excluded.block_number,
        block_time = excluded.block_time, updated_at = CURRENT_TIMESTAMP`,
      [chain, `0x${nextHash()}`, this.height, this.local(this.clock)]]);
    const statements = this.pending;
    this.pending = [];
    await this.conn.beginTransaction();
    try {
      for (const [sql, params] of statements) await this.conn.query(sql, params);
      await this.conn.commit();
    } catch (error) {
      await this.conn.rollback();
      throw error;
    }
  }
}

function toUnits(amount: string, scale = 18): bigint {
  const [i, f = ''] = amount.split('.');
  return BigInt(i!) * 10n ** BigInt(scale) + BigInt((f + '0'.repeat(scale)).slice(0, scale) || '0');
}

/**
 * The test file's (or describe's) source database: a fresh one before its tests, closed after them. Call it
 * before the hooks that write to it; read its fields inside tests and hooks.
 */
export function useSourceDatabase(): SourceDb {
  let src: SourceDb | undefined;
  beforeAll(async () => {
    src = await createSourceDatabase();
  });
  afterAll(async () => {
    await src?.close();
  });
  const get = (): SourceDb => {
    if (!src) throw new Error('useSourceDatabase: the source is read before its beforeAll ran');
    return src;
  };
  return {
    get database() { return get().database; },
    get url() { return get().url; },
    get conn() { return get().conn; },
    close: async () => { await src?.close(); },
  };
}
