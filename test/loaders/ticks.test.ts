import { describe, expect, it } from 'vitest';
import { createLoaders } from '../../src/loaders/index.js';
import { useGateway } from '../support/gateway.js';
import { Fixture } from '../support/fixtures.js';

// The tick loaders prime each other (src/loaders/ticks.ts): found by key, id or deploy hash, a tick is
// then known by id and by key without a statement; never by deploy hash, which two ticks may share.

const HASH = `0x${'ab'.repeat(32)}`;

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    f.tick({ chain: 'eth', protocol: 'p-20', tick: 'first', deploy_hash: HASH });
    f.tick({ chain: 'eth', protocol: 'p-20', tick: 'second', deploy_hash: HASH });
    await f.load(db.sql);
  },
});

describe('tick loaders', () => {
  it('a tick loaded by key is then loaded by id without a statement', async () => {
    const loaders = createLoaders(gw.gateway.store);
    const byKey = await loaders.tickByKey.load({ chain: 'ETH', protocol: 'p-20', tick: 'First' });
    gw.statements.length = 0;
    expect(await loaders.tickById.load(byKey!.id)).toBe(byKey);
    expect(gw.statements).toEqual([]);
  });

  it('a deploy hash two ticks share answers the first, even after the second was loaded another way', async () => {
    const loaders = createLoaders(gw.gateway.store);
    const second = await loaders.tickByKey.load({ chain: 'eth', protocol: 'p-20', tick: 'second' });
    const page = await gw.gateway.store.ticks.list({ chain: 'eth' }, 'ID', { limit: 10, offset: 0, direction: 'ASC' });
    page.rows.forEach(loaders.primeTick);
    const byHash = await loaders.tickByDeployHash.load({ chain: 'eth', deployHash: HASH });
    expect(byHash!.tick).toBe('first');
    expect(Number(byHash!.id)).toBeLessThan(Number(second!.id));
  });
});
