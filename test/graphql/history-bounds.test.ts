import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { Fixture } from '../support/fixtures.js';
import { lockTable } from '../support/locks.js';
import { gql } from '../support/http.js';
import { loggedGateways, useDatabase } from '../support/gateway.js';

// History scans bounded: a list at a block height (atBlock) scans every history entry its
// offset skips, so a deep offset is refused (HISTORY_MAX_OFFSET, a client error before any statement) and
// counts in the cost; and a request's database time is capped (DB_REQUEST_TIME_BUDGET_MS), so 15 aliases
// of (height, offset, totalCount) cannot multiply it: past the budget its further statements are refused
// with LIMIT_EXCEEDED. Contention is made with a lock held by another session, not with timings.

const HOLDERS = 200;
let height = 0;
const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    const deep = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'deep' });
    for (let i = 0; i < HOLDERS; i++) f.mint(deep, `0x${(0xd0000000 + i).toString(16).padStart(40, '0')}`, String(i + 1));
    height = f.data.transactions.at(-1)!.block_height;
    f.block('eth', String(height + 1), '2024-02-01T00:00:00.000Z', '2024-02-01T00:00:01.000Z');
    await f.load(db.sql);
  },
});
const gatewayWith = loggedGateways(db, { CACHE: false });

const holdersAt = (offset: number, first = 10, alias = 'h') =>
  `${alias}: holders(atBlock: "${height}", first: ${first}, offset: ${offset}) { totalCount edges { node { address balance } } }`;
const tickQuery = (fields: string) => `{ tick(chain: "eth", protocol: "erc-20", tick: "deep") { ${fields} } }`;
const historyStatements = (statements: string[]) => statements.filter((q) => /balance_history/.test(q)).length;

/** The request's log line is written when its response has finished, which may be just after the client has read it. */
async function linesOf(log: { lines: Record<string, any>[] }, reqId: string) {
  const deadline = Date.now() + 5_000;
  while (!log.lines.some((l) => l.reqId === reqId && l.msg === 'request') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return log.lines.filter((l) => l.reqId === reqId);
}

describe('settings', () => {
  it('HISTORY_MAX_OFFSET and DB_REQUEST_TIME_BUDGET_MS have documented defaults', () => {
    const defaults = configSchema.parse({});
    expect([defaults.HISTORY_MAX_OFFSET, defaults.DB_REQUEST_TIME_BUDGET_MS]).toEqual([10_000, 2_000]);
  });
});

describe('deep offsets at a block height', () => {
  it('an offset past HISTORY_MAX_OFFSET with atBlock → LIMIT_EXCEEDED naming it, before any history statement; offset 2147483647 is refused by its cost', async () => {
    const { base, statements, log } = await gatewayWith({ HISTORY_MAX_OFFSET: 100 });
    const before = historyStatements(statements);
    const huge = await gql(base, tickQuery(holdersAt(2_147_483_647)));
    expect(huge.json.errors.map((e: any) => e.extensions.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(huge.json.errors[0].message).toMatch(/^Query Cost limit of 250000 exceeded/);
    const reply = await gql(base, tickQuery(holdersAt(5_000)), undefined, { 'x-request-id': 'deep' });
    expect(reply.status).toBe(200);
    expect(reply.json.errors).toHaveLength(1);
    expect(reply.json.errors[0].extensions.code).toBe('LIMIT_EXCEEDED');
    expect(reply.json.errors[0].extensions.reason).toMatch(/^history offset too deep: at most 100 \(HISTORY_MAX_OFFSET\)/);
    expect(historyStatements(statements)).toBe(before);
    expect((await linesOf(log, 'deep'))).toMatchObject([{ msg: 'request', level: 'info', failure: 'client' }]);

    // at the limit: answered; without atBlock (the current list, no history scan): not this limit
    const atLimit = await gql(base, tickQuery(holdersAt(100, 10)));
    expect(atLimit.json.errors).toBeUndefined();
    expect(atLimit.json.data.tick.h.edges).toHaveLength(HOLDERS - 100 < 10 ? HOLDERS - 100 : 10);
    const now = await gql(base, tickQuery('holders(first: 1, offset: 2147483647) { edges { node { address } } }'));
    expect(now.json.errors).toBeUndefined();
  });

  it('the cost of a list at a height grows with the history its offset skips', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_COST: 2_000, HISTORY_MAX_OFFSET: 1_000_000 });
    const shallow = await gql(base, tickQuery(holdersAt(0, 1)));
    expect(shallow.json.errors).toBeUndefined();
    // 15 aliases × offset 30,000: 15 × 3,000 skipped-entry units, far over 2,000
    const aliases = Array.from({ length: 15 }, (_, i) => holdersAt(30_000 + i, 1, `a${i}`)).join(' ');
    const deep = await gql(base, tickQuery(aliases));
    expect(deep.json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(deep.json.errors[0].message).toMatch(/^Query Cost limit of 2000 exceeded, found \d+/);
    expect(Number(/found (\d+)/.exec(deep.json.errors[0].message)![1])).toBeGreaterThan(15 * 3_000);
  });
});

describe('DB_REQUEST_TIME_BUDGET_MS', () => {
  it('15 aliases of (height, offset, totalCount): once the request has spent its database time, its further statements are refused with LIMIT_EXCEEDED', async () => {
    const { base, statements, log } = await gatewayWith({ DB_REQUEST_TIME_BUDGET_MS: 50, REQUEST_MAX_CONCURRENT_STATEMENTS: 1, DB_STATEMENT_TIMEOUT_MS: 30_000 });
    const aliases = Array.from({ length: 15 }, (_, i) => holdersAt(i * 7, 5, `a${i}`)).join(' ');
    const before = historyStatements(statements);
    // the first statement holds its connection (blocked on the lock) for longer than the whole budget
    const lock = await lockTable(db.sql, 'balance_history');
    let reply: Promise<Awaited<ReturnType<typeof gql>>>;
    try {
      reply = gql(base, tickQuery(aliases), undefined, { 'x-request-id': 'aliases' });
      const deadline = Date.now() + 10_000;
      while (historyStatements(statements) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await lock.release();
    }
    const answer = await reply!;
    expect(answer.status).toBe(200);
    const codes = (answer.json.errors as any[]).map((e) => e.extensions);
    expect(codes.length).toBeGreaterThanOrEqual(1);
    for (const ext of codes) expect(ext).toEqual({ code: 'LIMIT_EXCEEDED', reason: 'request database time budget exceeded' });
    // one statement per alias (and one count each) without the budget: here at most the one that ran
    expect(historyStatements(statements) - before).toBeLessThanOrEqual(2);
    expect((await linesOf(log, 'aliases'))).toMatchObject([{ msg: 'request', level: 'info', failure: 'client', limit: 'request database time budget exceeded' }]);

    // the next request has a budget of its own: its first history statement is sent (on a loaded machine its
    // second may find 50 ms spent already, so only the sending is asserted)
    const sentBefore = historyStatements(statements);
    const next = await gql(base, tickQuery(holdersAt(0, 3)));
    expect(historyStatements(statements)).toBeGreaterThan(sentBefore);
    for (const error of next.json.errors ?? []) expect(error.extensions.code).toBe('LIMIT_EXCEEDED');
  });

  it('JSON-RPC: the batch shares one budget; elements past it get -32005 with the reason', async () => {
    const { base, statements } = await gatewayWith({ DB_REQUEST_TIME_BUDGET_MS: 50, REQUEST_MAX_CONCURRENT_STATEMENTS: 1, DB_STATEMENT_TIMEOUT_MS: 30_000 });
    const sent = statements.length;
    const lock = await lockTable(db.sql, 'ticks');
    const batch = Array.from({ length: 5 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'inds_getTicks', params: [1, id, 'eth', '', '', '', 0, 1] }));
    let reply: Promise<Response>;
    try {
      reply = fetch(`${base}/v2/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
      // the first element's statement is sent and blocked: it holds its connection past the budget
      const deadline = Date.now() + 10_000;
      while (statements.length === sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await lock.release();
    }
    const elements = (await (await reply!).json()) as any[];
    const refused = elements.filter((e) => e.error);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    for (const e of refused) expect(e.error).toEqual({ code: -32005, message: 'limit exceeded', data: { reason: 'request database time budget exceeded' } });
  });
});
