import type { Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createGateway, type Gateway, type GatewayConfig } from '../../src/app.js';
import { seedDemo } from '../../src/db/seed/index.js';
import { createTestDatabase, testConfig, type TestDatabase } from './db.js';
import { listen } from './http.js';
import { capturingLogger } from './ops.js';

// The one way a test builds a gateway in its own process: testConfig plus the test's settings, every
// statement its pool sends recorded, listening on an ephemeral loopback port. useGateway adds the test
// file's database around it and tears both down after the file; useGateways starts a file's gateways of
// differing settings and closes them after it.

/** A `load` for useDatabase/useGateway: the demo dataset (what `npm start` serves). */
export const loadDemo = (db: Pick<TestDatabase, 'sql'>): Promise<void> => seedDemo(db.sql);

export interface TestGateway {
  gateway: Gateway;
  /** http://127.0.0.1:<port> */
  base: string;
  /** The port it listens on (for raw sockets). */
  port: number;
  /** Every statement the gateway's pool sent (the watcher has its own connection, not counted). */
  statements: string[];
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Wait for the gateway's start-up (data version known) before answering; default true. */
  ready?: boolean;
  /**
   * Open every pool connection first: a new connection makes the driver read the catalog's array types once,
   * which is not a statement of the query under test (statement counts).
   */
  warm?: boolean;
}

/**
 * The gateway on `db` with testConfig and `config` (CACHE is off unless the test turns it on), not listening:
 * every gateway of the in-process tests is built here.
 */
export function buildTestGateway(
  db: Pick<TestDatabase, 'target'>, config: Partial<GatewayConfig> = {}, options: Pick<GatewayOptions, 'logger'> = {},
): { gateway: Gateway; statements: string[] } {
  const statements: string[] = [];
  const gateway = createGateway({ ...testConfig, ...config }, db.target, {
    onQuery: (q) => statements.push(q),
    logger: options.logger,
  });
  return { gateway, statements };
}

/** buildTestGateway, started and listening. */
export async function startTestGateway(
  db: Pick<TestDatabase, 'target'>, config: Partial<GatewayConfig> = {}, options: GatewayOptions = {},
): Promise<TestGateway> {
  const { gateway, statements } = buildTestGateway(db, config, options);
  try {
    if (options.ready !== false) await gateway.ready;
    if (options.warm) {
      const poolMax = config.DB_POOL_MAX ?? testConfig.DB_POOL_MAX;
      await Promise.all(Array.from({ length: poolMax }, () => gateway.sql`SELECT pg_sleep(0.05)`));
    }
    const base = await listen(gateway);
    return { gateway, base, port: Number(new URL(base).port), statements, close: () => gateway.close() };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

/**
 * The test file's database: before its tests a fresh one with `load` run on it (fixture rows, keys …),
 * after them closed. For files whose gateways differ per test (startTestGateway in the test); read the
 * fields inside tests and hooks.
 */
export function useDatabase(options: { load?: (db: TestDatabase) => Promise<unknown> } = {}): TestDatabase {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    await options.load?.(db);
  });
  afterAll(async () => {
    await db?.close();
  });
  const get = (): TestDatabase => {
    if (!db) throw new Error('useDatabase: the database is read before the file\'s beforeAll ran');
    return db;
  };
  return {
    get engine() { return get().engine; },
    get target() { return get().target; },
    get sql() { return get().sql; },
    close: async () => { await db?.close(); },
  };
}

export interface FileGateway extends TestGateway {
  db: TestDatabase;
}

/**
 * The test file's gateway: before its tests a listening gateway (testConfig + `config`) on `db` (a
 * useDatabase), or on a fresh database of its own with `load` run on it; after them all closed. Call at
 * the top of a file or a describe; read the fields inside tests and hooks (set once the beforeAll ran).
 */
export function useGateway(
  options: { db?: TestDatabase; load?: (db: TestDatabase) => Promise<unknown>; config?: Partial<GatewayConfig> } & GatewayOptions = {},
): FileGateway {
  let own: TestDatabase | undefined;
  let live: TestGateway | undefined;
  beforeAll(async () => {
    const db = options.db ?? (own = await createTestDatabase());
    if (own) await options.load?.(own);
    live = await startTestGateway(db, options.config, options);
  });
  afterAll(async () => {
    await live?.close();
    await own?.close();
  });
  const set = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useGateway: ${name} is read before the file's beforeAll ran`);
    return value;
  };
  return {
    get db() { return options.db ?? set(own, 'db'); },
    get gateway() { return set(live, 'gateway').gateway; },
    get base() { return set(live, 'base').base; },
    get port() { return set(live, 'port').port; },
    get statements() { return set(live, 'statements').statements; },
    close: async () => { await live?.close(); },
  };
}

/** The gateways useGateways started: call it to start one more; each is closed after the file. */
export interface GatewayStarter {
  (overrides?: Partial<GatewayConfig>, options?: GatewayOptions & { target?: TestDatabase['target'] }): Promise<TestGateway>;
  /** The gateways started and not closed yet, oldest first. */
  readonly open: readonly TestGateway[];
  /** Closes every open gateway now, each even if one before fails; throws the first failure. */
  closeAll(): Promise<void>;
}

/**
 * Gateways a test file (or describe) starts on `db` (or the `target` given to the call), each with `base`
 * plus its own settings and options, listening; all closed after the file (or describe). An afterAll of
 * the caller's that needs them closed first (a private server stopped after them) calls closeAll.
 */
export function useGateways(
  db: Pick<TestDatabase, 'target'>, base: Partial<GatewayConfig> = {}, options: GatewayOptions = {},
): GatewayStarter {
  const open: TestGateway[] = [];
  const closeAll = async () => {
    const failures: unknown[] = [];
    for (const gw of open.splice(0)) await gw.close().catch((error: unknown) => failures.push(error));
    if (failures.length) throw failures[0];
  };
  afterAll(closeAll);
  const start = async (overrides: Partial<GatewayConfig> = {}, more: GatewayOptions & { target?: TestDatabase['target'] } = {}) => {
    const { target, ...startOptions } = more;
    const live = await startTestGateway(target ? { target } : db, { ...base, ...overrides }, { ...options, ...startOptions });
    open.push(live);
    return live;
  };
  return Object.assign(start, { open: open as readonly TestGateway[], closeAll });
}

/**
 * Gateways a test file starts on `db` with its own settings (on top of `base`), each logging into a
 * captured info-level log; all closed after the file.
 */
export function loggedGateways(db: TestDatabase, base: Partial<GatewayConfig> = {}) {
  const start = useGateways(db, base);
  return async (overrides: Partial<GatewayConfig>) => {
    const log = capturingLogger('info');
    return { ...(await start(overrides, { logger: log.logger })), log };
  };
}
