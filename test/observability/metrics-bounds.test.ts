import { describe, expect, it } from 'vitest';
import { Fixture } from '../support/fixtures.js';
import { gql, request } from '../support/http.js';
import { useGateway } from '../support/gateway.js';

// Labels that carry client input are bounded in every series, the yoga plugin's included: thousands of
// invented operation names, and names of 20,000 characters, leave /metrics small and answering 200.
// (Before: 3,000 names grew it from 123 KB to 28.6 MB; 150 long names made it 256 MB, then 500s.)

const live = useGateway({
  load: async (db) => {
    const f = new Fixture();
    f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'labl' });
    await f.load(db.sql);
  },
  config: { CACHE: true },
});
/** Runs `count` tasks, `width` at a time. */
async function pool(count: number, width: number, task: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) await task(next++);
  }));
}

/** Every value of `label` in a scrape, with the series names it appears on. */
function labelValues(text: string, label: string): Map<string, Set<string>> {
  const values = new Map<string, Set<string>>();
  const pattern = new RegExp(`[{,]${label}="((?:[^"\\\\]|\\\\.)*)"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = pattern.exec(line);
    if (!match) continue;
    const series = line.slice(0, line.indexOf('{'));
    if (!values.has(match[1]!)) values.set(match[1]!, new Set());
    values.get(match[1]!)!.add(series);
  }
  return values;
}

describe('metric labels from client input', () => {
  it('caps operation names in every series: the first 100 distinct, then "other", each at most 64 characters', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    // 3,000 distinct names, half of them failing validation (the plugin's error counter), then 150 names of
    // 20,000 characters, sent both as the document's name and as operationName
    await pool(3_000, 8, async (i) => {
      const reply = await gql(live.base, i % 2 ? `query Op${tag}${i} { __typename }` : `query Op${tag}${i} { nope }`);
      expect(reply.status).toBe(200);
    });
    await pool(150, 4, async (i) => {
      const name = `L${i}${'x'.repeat(20_000)}`;
      const reply = await request(`${live.base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `query ${name} { __typename }`, operationName: name }),
      });
      expect(reply.status).toBe(200);
    });

    const scrape = await request(`${live.base}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.text.length, 'the whole scrape').toBeLessThan(1024 * 1024);
    for (const label of ['operationName', 'operation']) {
      const values = labelValues(scrape.text, label);
      const graphqlNames = [...values.keys()].filter((v) => !v.startsWith('v1:') && !v.startsWith('v2:'));
      expect(graphqlNames.length, label).toBeGreaterThan(10);
      expect(graphqlNames.length, label).toBeLessThanOrEqual(101);
      expect(values.has('other'), `${label}: names past the cap are "other"`).toBe(true);
      for (const value of graphqlNames) expect(value.length).toBeLessThanOrEqual(64);
    }
    // the yoga plugin's series are among those capped
    const series = new Set([...labelValues(scrape.text, 'operationName').values()].flatMap((s) => [...s]));
    expect(series).toContain('graphql_envelop_phase_execute_count');
    expect(series).toContain('graphql_envelop_error_result');
    expect(scrape.text).not.toMatch(/path="/);

    // and the gateway still answers, with a working scrape
    expect((await gql(live.base, '{ __typename }')).status).toBe(200);
    expect((await request(`${live.base}/metrics`)).status).toBe(200);
  });
});

describe('JSON-RPC v1 method names in any letter case', () => {
  /** `name` with each letter's case drawn at random. */
  const randomCase = (name: string) => [...name].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');

  it('label series by the canonical name: 1,500 random spellings add no series', async () => {
    const before = await request(`${live.base}/metrics`);
    // (before: every spelling was a label value of three series: 11,500 calls made a 24 MB scrape)
    const spellings = new Set<string>();
    await pool(100, 4, async () => {
      const batch = Array.from({ length: 15 }, (_, i) => {
        const method = randomCase(i % 3 ? 'inscription.Tick' : 'block.LastNumber');
        spellings.add(method);
        return { jsonrpc: '2.0', id: i, method, params: i % 3 ? ['eth', 'erc-20', 'labl'] : [['eth']] };
      });
      const reply = await request(`${live.base}/v1/rpc`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch),
      });
      expect(reply.status).toBe(200);
      for (const element of JSON.parse(reply.text)) expect(element.error).toBeUndefined();
    });
    expect(spellings.size).toBeGreaterThan(100);
    // unknown names share one label too, in any case
    for (let i = 0; i < 50; i++) {
      const reply = await request(`${live.base}/v1/rpc`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: randomCase(`no.Such${i}`), params: [] }),
      });
      expect(JSON.parse(reply.text).error.code).toBe(-32601);
    }
    const after = await request(`${live.base}/metrics`);
    const v1Values = (text: string) => [...labelValues(text, 'operation').keys()].filter((v) => v.startsWith('v1:'));
    expect(v1Values(after.text).sort()).toEqual(['v1:(unknown)', 'v1:block.LastNumber', 'v1:inscription.Tick']);
    // the scrape grew by those three labels' series only, not by a series per spelling
    expect(after.text.length - before.text.length).toBeLessThan(40 * 1024);
  });
});
