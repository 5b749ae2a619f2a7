import type { Sql } from './client.js';

// The API keys of sql/018_api_keys.sql. The operator's CLI (src/cli/keys.ts) writes them on an admin
// connection; the gateway reads them all (src/access/registry.ts) with its read-only role and LISTENs for
// the trigger's notification. Never a secret here: only its SHA-256.

export const apiKeysChannel = 'igw_api_keys';

export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  secretSha256: Buffer;
  ratePerS: number;
  burst: number;
  /** Admitted requests per UTC day; null: no daily cap. */
  dailyAllowance: number | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** Per-key overrides (null: the gateway's default). */
  maxPageSize: number | null;
  maxCost: number | null;
  maxStreams: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewApiKey {
  name: string;
  prefix: string;
  secretSha256: Buffer;
  ratePerS: number;
  burst: number;
  dailyAllowance?: number | null;
  expiresAt?: Date | null;
  maxPageSize?: number | null;
  maxCost?: number | null;
  maxStreams?: number | null;
}

/** The name or the prefix is taken (SQLSTATE 23505 on one of the two unique indexes). */
export class ApiKeyConflictError extends Error {
  constructor(readonly column: 'name' | 'prefix') {
    super(column === 'name' ? 'a key with this name exists' : 'prefix already in use');
    this.name = 'ApiKeyConflictError';
  }
}

interface Raw {
  id: string; name: string; prefix: string; secret_sha256: Buffer; rate_per_s: number; burst: number;
  daily_allowance: string | null; expires_at: Date | null; revoked_at: Date | null; max_page_size: number | null;
  max_cost: string | null; max_streams: number | null; created_at: Date; updated_at: Date;
}

const num = (v: string | null) => (v === null ? null : Number(v));

function fromRaw(r: Raw): ApiKeyRow {
  return {
    id: String(r.id), name: r.name, prefix: r.prefix, secretSha256: Buffer.from(r.secret_sha256), ratePerS: r.rate_per_s, burst: r.burst,
    dailyAllowance: num(r.daily_allowance), expiresAt: r.expires_at, revokedAt: r.revoked_at, maxPageSize: r.max_page_size,
    maxCost: num(r.max_cost), maxStreams: r.max_streams, createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

/** Every key, revoked and expired ones included (the registry answers them as such), by name. */
export async function readApiKeys(sql: Sql): Promise<ApiKeyRow[]> {
  const rows = await sql<Raw[]>`
    SELECT id::text AS id, name, prefix, secret_sha256, rate_per_s, burst, daily_allowance::text AS daily_allowance, expires_at,
           revoked_at, max_page_size, max_cost::text AS max_cost, max_streams, created_at, updated_at
      FROM api_keys ORDER BY name`;
  return rows.map(fromRaw);
}

export async function insertApiKey(sql: Sql, key: NewApiKey): Promise<ApiKeyRow> {
  try {
    const [row] = await sql<Raw[]>`
      INSERT INTO api_keys (name, prefix, secret_sha256, rate_per_s, burst, daily_allowance, expires_at, max_page_size, max_cost, max_streams)
      VALUES (${key.name}, ${key.prefix}, ${key.secretSha256}, ${key.ratePerS}, ${key.burst},
              ${key.dailyAllowance == null ? null : String(key.dailyAllowance)}, ${key.expiresAt ?? null}, ${key.maxPageSize ?? null},
              ${key.maxCost == null ? null : String(key.maxCost)}, ${key.maxStreams ?? null})
      RETURNING id::text AS id, name, prefix, secret_sha256, rate_per_s, burst, daily_allowance::text AS daily_allowance, expires_at,
                revoked_at, max_page_size, max_cost::text AS max_cost, max_streams, created_at, updated_at`;
    return fromRaw(row!);
  } catch (error) {
    const e = error as { code?: string; constraint_name?: string };
    if (e.code === '23505') throw new ApiKeyConflictError(e.constraint_name?.includes('prefix') ? 'prefix' : 'name');
    throw error;
  }
}

/** Revokes the key of this name (kept as revoked: its usage keeps its name); null when there is none. */
export async function revokeApiKey(sql: Sql, name: string): Promise<{ name: string; prefix: string; revokedAt: Date } | null> {
  const [row] = await sql<{ name: string; prefix: string; revoked_at: Date }[]>`
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE name = ${name} RETURNING name, prefix, revoked_at`;
  return row ? { name: row.name, prefix: row.prefix, revokedAt: row.revoked_at } : null;
}

/** LISTENs for key changes; `onReconnect` runs after every re-established LISTEN (changes meanwhile were missed). */
export function listenApiKeys(sql: Sql, onChange: () => void, onReconnect: () => void): Promise<{ unlisten(): Promise<void> }> {
  return sql.listen(apiKeysChannel, onChange, onReconnect);
}
