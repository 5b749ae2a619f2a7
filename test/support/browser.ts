import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// Headless Chromium for the GraphiQL tests: Debian's package (installed by .ci/run), driven by
// playwright-core, with the flags this machine needs (no background networking: its connections are
// refused here), on a fresh profile directory.

const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'igw-chromium-'));
  // a persistent context on a fresh directory: Playwright passes it as --user-data-dir
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Saves a screenshot as test/artifacts/<name>; with UPDATE_SCREENSHOT=1 also as docs/<name> (docs/graphql.md
 * shows those). Returns its size in bytes.
 */
export async function screenshot(page: Page, name: string): Promise<number> {
  const artifact = join(root, 'test', 'artifacts', name);
  mkdirSync(join(root, 'test', 'artifacts'), { recursive: true });
  await page.screenshot({ path: artifact, fullPage: false });
  if (process.env.UPDATE_SCREENSHOT === '1') {
    mkdirSync(join(root, 'docs'), { recursive: true });
    copyFileSync(artifact, join(root, 'docs', name));
  }
  return statSync(artifact).size;
}
