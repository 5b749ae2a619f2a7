import type { Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createGateway, type Gateway, type GatewayConfig } from '../../src/app.js';
import { createTestDatabase, testConfig, type TestDatabase } from './db.js';
import { listen } from './http.js';

// The one way a test builds a gateway in its own process: testConfig plus the test's settings, every
// statement its pool sends recorded, listening on an ephemeral loopback port. useGateway adds the test
// file's database around it and tears both down after the file.

export interface TestGateway {
  gateway: Gateway;
  /** http://127.0.0.1:<port> */
  base: string;
  /** Every statement the gateway's pool sent (the watcher has its own connection, not counted). */
  statements: string[];
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Wait for the gateway's start-up (data version known) before answering; default true. */
  ready?: boolean;
}

/** A listening gateway on `db` with testConfig and `config` (CACHE is off unless the test turns it on). */
export async function startTestGateway(
  db: Pick<TestDatabase, 'target'>, config: Partial<GatewayConfig> = {}, options: GatewayOptions = {},
): Promise<TestGateway> {
  const statements: string[] = [];
  const gateway = createGateway({ ...testConfig, ...config }, db.target, {
    onQuery: (q) => statements.push(q),
    logger: options.logger,
  });
  try {
    if (options.ready !== false) await gateway.ready;
    const base = await listen(gateway);
    return { gateway, base, statements, close: () => gateway.close() };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

export interface FileGateway extends TestGateway {
  db: TestDatabase;
}

/**
 * The test file's database and gateway: before its tests a fresh database, `load` run on it (fixture rows,
 * keys …), then a listening gateway; after them both closed. Call at the top of a file or a describe; read
 * the fields inside tests and hooks (they are set once the beforeAll has run).
 */
export function useGateway(
  options: { load?: (db: TestDatabase) => Promise<unknown>; config?: Partial<GatewayConfig> } & GatewayOptions = {},
): FileGateway {
  let db: TestDatabase | undefined;
  let live: TestGateway | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    await options.load?.(db);
    live = await startTestGateway(db, options.config, options);
  });
  afterAll(async () => {
    await live?.close();
    await db?.close();
  });
  const set = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useGateway: ${name} is read before the file's beforeAll ran`);
    return value;
  };
  return {
    get db() { return set(db, 'db'); },
    get gateway() { return set(live, 'gateway').gateway; },
    get base() { return set(live, 'base').base; },
    get statements() { return set(live, 'statements').statements; },
    close: async () => { await live?.close(); },
  };
}
