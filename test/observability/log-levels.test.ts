import { describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { alice, Fixture } from '../support/fixtures.js';
import { capturingLogger } from '../support/ops.js';
import { gql, listen, rpc } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';
import { buildTestGateway, useGateway } from '../support/gateway.js';

// Log levels by kind: a client's mistake (NUL in text, a bad cursor or param) is not logged at error and
// never with a stack; a database outage is one warn line without a stack; a real bug (here: a table the
// statements need is gone) is logged at error with its stack.

const onServer = (await findServer()) !== null;

const log = capturingLogger('debug');

const live = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'lvls' });
    f.mint(t, alice, '42');
    await f.load(db.sql);
  },
  config: { CACHE: false },
  logger: log.logger,
});
const linesOf = (id: string) => log.lines.filter((l) => l.reqId === id);
const hasStack = (line: Record<string, any>) => JSON.stringify(line).includes('"stack"');

describe('log levels', () => {
  it('logs client input errors below error and without a stack', async () => {
    const nulAddress = await gql(live.base, `{ balances(address: "0x\\u0000ab") { totalCount } }`, undefined, { 'x-request-id': 'nul-address' });
    expect(nulAddress.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const nulCursor = await gql(live.base, '{ ticks(first: 2, after: "\\u0000abc") { totalCount } }', undefined, { 'x-request-id': 'nul-cursor' });
    expect(nulCursor.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const nulVariable = await gql(live.base, 'query Q($a: String!) { balances(address: $a) { totalCount } }', { a: `${alice}\u0000` }, { 'x-request-id': 'nul-variable' });
    expect(nulVariable.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const badParam = await rpc(live.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: ['x'] }, '/v2/rpc', { 'x-request-id': 'bad-param' });
    expect(badParam.json.error.code).toBe(-32602);
    const nulParam = await rpc(live.base, { jsonrpc: '2.0', id: 1, method: 'inds_getBalancesByAddress', params: [10, 0, `${alice}\u0000`, '', '', '', '', 2] }, '/v2/rpc', { 'x-request-id': 'nul-param' });
    expect(nulParam.json.error.code).toBe(-32602);
    for (const id of ['nul-address', 'nul-cursor', 'nul-variable', 'bad-param', 'nul-param']) {
      const lines = linesOf(id);
      expect(lines.length, id).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line.level, `${id}: ${line.msg}`).not.toBe('error');
        expect(hasStack(line), `${id}: ${line.msg}`).toBe(false);
      }
    }
  });

  it('logs a real internal error at error level with its stack (GraphQL and JSON-RPC)', async () => {
    await live.db.sql`ALTER TABLE chains RENAME TO chains_gone`;
    try {
      const reply = await gql(live.base, '{ chains { chain } }', undefined, { 'x-request-id': 'bug-gql' });
      expect(reply.json.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
      const call = await rpc(live.base, { jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }, '/v2/rpc', { 'x-request-id': 'bug-rpc' });
      expect(call.json.error.code).toBe(-32604);
    } finally {
      await live.db.sql`ALTER TABLE chains_gone RENAME TO chains`;
    }
    for (const id of ['bug-gql', 'bug-rpc']) {
      const errors = linesOf(id).filter((l) => l.level === 'error');
      expect(errors.length, id).toBeGreaterThan(0);
      expect(errors.some(hasStack), id).toBe(true);
      // the client saw none of it
    }
  });

  it('logs a database outage at warn, once per request, without a stack', skipUnless(onServer, because.noServer), async () => {
    const outage = capturingLogger('debug');
    // nothing listens on port 1: every statement fails to connect
    const gateway = buildTestGateway({ target: { url: 'postgres://postgres@127.0.0.1:1/none' } }, { CACHE: false, DB_CONNECT_TIMEOUT_S: 1 }, { logger: outage.logger }).gateway;
    await gateway.ready;
    const base = await listen(gateway);
    try {
      const reply = await gql(base, '{ chains { chain } }', undefined, { 'x-request-id': 'down-gql' });
      expect(reply.json.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      const call = await rpc(base, { jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }, '/v2/rpc', { 'x-request-id': 'down-rpc' });
      expect(call.json.error.code).toBe(-32000);
    } finally {
      await gateway.close();
    }
    expect(outage.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(outage.lines.some(hasStack)).toBe(false);
    expect(outage.lines.filter((l) => l.reqId === 'down-gql' && l.level === 'warn').length).toBeGreaterThan(0);
  });
});
