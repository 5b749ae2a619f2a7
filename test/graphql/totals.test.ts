import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { Fixture } from '../support/fixtures.js';
import { waitFor } from '../support/ops.js';

// A connection whose totalCount is selected starts the total beside its page (graphql/paging.ts totalOf):
// one round trip instead of two in a row. Proven with the page's table locked by another session: the page
// statement waits on the lock, and the total's statement is sent all the same (it would not be if it waited
// for the page). Without totalCount, or with it under @include/@skip, the total stays lazy.

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    for (let i = 0; i < 3; i++) f.tick({ chain: 'eth', protocol: 'erc-20', tick: `tot${i}` });
    f.block('eth', '19000000', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:01.000Z');
    await f.load(db.sql);
  },
  warm: true,
});

const isTotal = (s: string) => /list_totals/.test(s);

describe('a connection total beside its page', () => {
  it('sends the total while the page statement still waits', async () => {
    gw.statements.length = 0;
    const reserved = await gw.db.sql.reserve();
    let answer: Promise<any> | undefined;
    try {
      await reserved`BEGIN`;
      await reserved`LOCK TABLE ticks IN ACCESS EXCLUSIVE MODE`;
      answer = gqlJson(gw.base, '{ ticks(first: 2) { totalCount edges { node { tick } } } }');
      await waitFor(async () => gw.statements.some(isTotal), 5_000, 10);
      expect(gw.statements.filter((s) => /FROM ticks/.test(s) && !isTotal(s))).toHaveLength(1); // the page, waiting
    } finally {
      await reserved`ROLLBACK`;
      reserved.release();
    }
    const result = await answer!;
    expect(result.errors).toBeUndefined();
    expect(result.data.ticks.totalCount).toBe(3);
    expect(result.data.ticks.edges).toHaveLength(2);
  });

  it('stays lazy when totalCount is not selected or sits under @include(if: false)', async () => {
    for (const query of [
      '{ ticks(first: 2) { edges { node { tick } } } }',
      '{ ticks(first: 2) { totalCount @include(if: false) edges { node { tick } } } }',
    ]) {
      gw.statements.length = 0;
      const result = await gqlJson(gw.base, query);
      expect(result.errors, query).toBeUndefined();
      expect(result.data.ticks.edges, query).toHaveLength(2);
      expect(gw.statements.some(isTotal), query).toBe(false);
    }
  });
});
