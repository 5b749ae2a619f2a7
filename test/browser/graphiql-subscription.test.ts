import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, screenshot, type Browser } from '../support/browser.js';
import { alice, Fixture } from '../support/fixtures.js';
import { indexMint, waitFor } from '../support/ops.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// A subscription in GraphiQL, in headless Chromium: GraphiQL opens with a `blocks` subscription (the
// ?query= parameter), runs it over SSE, the test commits a block as the indexer would, and the result
// pane must show it. Screenshot: test/artifacts/graphiql-subscription.png; UPDATE_SCREENSHOT=1 also copies
// it to docs/graphiql-subscription.png (docs/graphql.md shows it). Skipped where /usr/bin/chromium is missing.

const tick = { chain: 'eth', protocol: 'erc-20', tick: 'live' };
const query = `# Each newly indexed block of Ethereum, as soon as it is committed.
subscription NewBlocks {
  blocks(chains: ["eth"]) {
    chainName
    height
    time
    transactionCount
    inscriptionCount
    tickCount
    addressCount
  }
}
`;

describe('a subscription in GraphiQL (headless Chromium)', skipUnless(hasChromium, because.noChromium), () => {
  const db = useDatabase();
  let live: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    const f = new Fixture();
    f.mint(f.tick(tick), alice, '10');
    f.block('eth', '19000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:01.000Z');
    await f.load(db.sql);
    live = await startTestGateway(db, { CACHE: true });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await live?.close();
  });

  it('runs a blocks subscription and shows the block committed after it started', async () => {
    const page = await browser.context.newPage();
    const response = await page.goto(`${live.base}/graphql?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 30_000 });
    await page.waitForFunction(() => document.querySelector('.graphiql-query-editor')?.textContent?.includes('NewBlocks'), undefined, { timeout: 30_000 });
    await page.click('.graphiql-execute-button');
    await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 1, 30_000, 50);

    await indexMint(db.sql, tick, alice, '5');
    await page.waitForFunction(
      () => /"height":\s*"19000001"/.test(document.querySelector('.graphiql-response')?.textContent ?? ''),
      undefined,
      { timeout: 30_000 },
    );
    const shown = await page.textContent('.graphiql-response');
    expect(shown).toMatch(/"inscriptionCount":\s*1/);
    expect(shown).not.toContain('"errors"');

    expect(await screenshot(page, 'graphiql-subscription.png')).toBeGreaterThan(20_000);
    await page.close();
  }, 120_000);
});
