import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/gateway.js';
import { because } from '../support/skips.js';

// The gateway's sessions are read-only (default_transaction_read_only, a startup parameter): a write
// through its connection is refused by the server with SQLSTATE 25006. The embedded engine ignores
// startup parameters, so there the check is reported as skipped.

const gw = useGateway({
  load: async (db) => {
    await db.sql`INSERT INTO chains (chain, chain_id, name, network_id, display_order) VALUES ('eth', 1, 'Ethereum', 1, 1)`;
  },
});

const readOnlyError = { code: '25006', message: expect.stringMatching(/read-only transaction/) };

describe('the gateway connection', () => {
  it('can read', async () => {
    const rows = await gw.gateway.sql<{ chain: string }[]>`SELECT chain FROM chains`;
    expect(rows.map((r) => r.chain)).toEqual(['eth']);
  });

  it('refuses INSERT with a read-only error (25006)', async (ctx) => {
    ctx.skip(gw.db.engine === 'embedded', because.noStartupParameters);
    await expect(gw.gateway.sql`INSERT INTO chains (chain, chain_id, name, network_id, display_order)
                                VALUES ('bsc', 56, 'BNB', 56, 2)`).rejects.toMatchObject(readOnlyError);
  });

  it('refuses UPDATE and DELETE with a read-only error (25006)', async (ctx) => {
    ctx.skip(gw.db.engine === 'embedded', because.noStartupParameters);
    await expect(gw.gateway.sql`UPDATE chains SET name = 'x'`).rejects.toMatchObject(readOnlyError);
    await expect(gw.gateway.sql`UPDATE ticks SET holders = 0`).rejects.toMatchObject(readOnlyError);
    await expect(gw.gateway.sql`DELETE FROM chains`).rejects.toMatchObject(readOnlyError);
  });

  it('stays read-only inside an explicit transaction and on every pooled connection', async (ctx) => {
    ctx.skip(gw.db.engine === 'embedded', because.noStartupParameters);
    await expect(gw.gateway.sql.begin((tx) => tx`INSERT INTO chains (chain, chain_id, name, network_id, display_order)
                                                  VALUES ('bsc', 56, 'BNB', 56, 2)`)).rejects.toMatchObject(readOnlyError);
    // as many concurrent attempts as the pool has connections
    const attempts = await Promise.allSettled(Array.from({ length: 8 }, () =>
      gw.gateway.sql`WITH pause AS (SELECT pg_sleep(0.05)) UPDATE chains SET ext = 'x' FROM pause`));
    for (const a of attempts) {
      expect(a.status).toBe('rejected');
      expect((a as PromiseRejectedResult).reason).toMatchObject(readOnlyError);
    }
    const [row] = await gw.gateway.sql<{ default_transaction_read_only: string }[]>`SHOW default_transaction_read_only`;
    expect(row!.default_transaction_read_only).toBe('on');
  });

  it('did not change anything', async () => {
    const rows = await gw.db.sql<{ chain: string; name: string; ext: string }[]>`SELECT chain, name, ext FROM chains`;
    expect(rows).toEqual([{ chain: 'eth', name: 'Ethereum', ext: '' }]);
  });
});
