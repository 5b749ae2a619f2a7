import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, screenshot, type Browser } from '../support/browser.js';
import { because, skipUnless } from '../support/skips.js';
import { loadDemo, useGateway } from '../support/gateway.js';

// GraphiQL in a real browser: headless Chromium (Debian's package, driven by playwright-core) loads
// /graphql from the running gateway, runs the pre-filled example query and must show data. The
// screenshot lands in test/artifacts/graphiql.png; UPDATE_SCREENSHOT=1 also copies it to docs/graphiql.png
// (docs/graphql.md shows it).
// Skipped (reported as skipped) where /usr/bin/chromium is not installed.


describe('GraphiQL in headless Chromium', skipUnless(hasChromium, because.noChromium), () => {
  const live = useGateway({ load: loadDemo, config: { CACHE: true } });
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('loads GraphiQL at /graphql, runs the pre-filled example query and shows data', async () => {
    const page = await browser.context.newPage();
    const offsite: string[] = [];
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(live.base) && !url.startsWith('blob:') && !url.startsWith('data:')) offsite.push(url);
    });
    const graphqlCalls: { status: number; body: string }[] = [];
    page.on('response', async (r) => {
      if (r.request().method() === 'POST' && r.url().startsWith(`${live.base}/graphql`)) {
        graphqlCalls.push({ status: r.status(), body: await r.text().catch(() => '') });
      }
    });

    const response = await page.goto(`${live.base}/graphql`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toMatch(/text\/html/);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 30_000 });
    // the example query is pre-filled
    await page.waitForFunction(() => document.querySelector('.graphiql-query-editor')?.textContent?.includes('TopTicks'), undefined, { timeout: 30_000 });

    await page.click('.graphiql-execute-button');
    await page.waitForFunction(
      () => /"totalCount":\s*\d+/.test(document.querySelector('.graphiql-response')?.textContent ?? ''),
      undefined,
      { timeout: 30_000 },
    );
    const shown = await page.textContent('.graphiql-response');
    expect(shown).toContain('"data"');
    expect(shown).toContain('"ticks"');
    expect(shown).toContain('"holders"');
    expect(shown).toContain('sats'); // the demo tick with the most holders
    expect(shown).not.toContain('"errors"');

    const run = graphqlCalls.find((c) => c.body.includes('"ticks"'));
    expect(run?.status).toBe(200);
    expect(JSON.parse(run!.body).extensions.freshness.indexedHeights.btc).toMatch(/^\d+$/);
    expect(offsite, 'GraphiQL is served whole by the gateway (no CDN)').toEqual([]);

    // the copy in docs/ is refreshed on request only (UPDATE_SCREENSHOT=1), so a test run leaves the work tree clean
    expect(await screenshot(page, 'graphiql.png')).toBeGreaterThan(20_000);
    await page.close();
  }, 120_000);
});
