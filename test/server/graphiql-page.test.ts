import { describe, expect, it } from 'vitest';
import { graphiqlPage } from '../../src/server/graphiql.js';

// GraphiQL's page is rendered in a worker thread (src/graphql/graphiql-render.ts): a failed render must not
// start another one for every load that follows.

describe('GraphiQL\'s page after a failed render', () => {
  it('is not rendered again by every request, only once the retry delay is over', async () => {
    let renders = 0;
    const page = graphiqlPage(async () => {
      renders += 1;
      if (renders === 1) throw new Error('renderer exited');
      return { body: Buffer.from('<!doctype html><html><head><title>t</title></head><body></body></html>'), headers: { 'content-type': 'text/html' } };
    }, { compress: false, retryAfterMs: 100 });
    await expect(page.warm()).rejects.toThrow('renderer exited');
    for (let i = 0; i < 5; i++) await expect(page.warm()).rejects.toThrow('renderer exited');
    expect(renders).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    await expect(page.warm()).resolves.toBeUndefined();
    expect(renders).toBe(2);
  });
});
