import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkReply, repoRoot, startServer } from '../../bench/lib/gateway.js';
import { answersDiffer, buildPeerScenarios, decimal, instant, type PeerScenario } from '../../bench/lib/peer-scenarios.js';
import { buildScenarios, loadFixture } from '../../bench/lib/scenarios.js';
import { Fixture, alice, bob, carol, dave, erin } from '../support/fixtures.js';
import { useGateway } from '../support/gateway.js';
import { because } from '../support/skips.js';

// bench:peer's answers-equal step (bench/peer.ts, answersDiffer in bench/lib/peer-scenarios.ts): before anything
// is measured, our reply and PostGraphile's to each scenario must carry the same content. Our side always runs
// here: every scenario answered, its common content not empty, and a change in any compared value caught. The
// peer's side runs when PostGraphile is installed in bench/peer/node_modules (bench:peer installs it on demand).

const live = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const sats = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'sats', decimals: 18, limit_per_mint: '1000.5' });
    const ordi = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'ordi' });
    const pepe = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'pepe' });
    for (const who of [alice, bob, carol, dave, erin]) f.mint(sats, who, '1000');
    f.mint(ordi, alice, '500').mint(ordi, bob, '20').mint(pepe, alice, '7');
    f.transfer(sats, alice, bob, '250').transfer(ordi, alice, carol, '5').transfer(pepe, alice, dave, '3');
    f.block('btc', '840000', '2024-04-20T00:09:27Z', '2024-04-20T00:10:00Z').block('eth', '19000000', '2024-01-13T06:00:00Z', '2024-01-13T06:00:05Z');
    await f.load(db.sql);
  },
});

const peerInstalled = existsSync(`${repoRoot}bench/peer/node_modules/postgraphile/package.json`);

async function post(base: string, body: string): Promise<string> {
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  checkReply(body.slice(0, 60), res.status, text);
  return text;
}

async function scenarios(): Promise<PeerScenario[]> {
  const url = live.db.target.url ?? 'postgres://embedded/test';
  const fixture = await loadFixture(live.db.sql, new URL(url).pathname.slice(1));
  return buildPeerScenarios(fixture, buildScenarios(fixture));
}

/** The first number, address or hash in the reply's data, changed in its last character. */
function tampered(reply: string): string {
  const parsed = JSON.parse(reply) as { data: unknown };
  const data = JSON.stringify(parsed.data).replace(/"(0x[0-9a-fA-F]{8,}|\d+(?:\.\d+)?)"/, (_m, v: string) =>
    `"${v.slice(0, -1)}${v.endsWith('1') ? '2' : '1'}"`);
  return JSON.stringify({ ...parsed, data: JSON.parse(data) });
}

describe("bench:peer's answers-equal step", () => {
  it('our answer to every scenario has content to compare, and a changed value in it is caught', async () => {
    const all = await scenarios();
    expect(all.map((s) => s.name)).toContain('gql getInscriptionByTick');
    for (const s of all) {
      const ours = await post(live.base, s.ours.body);
      const content = s.oursData((JSON.parse(ours) as { data: unknown }).data);
      expect(JSON.stringify(content), s.name).toMatch(/[0-9a-z]/);
      const changed = tampered(ours);
      expect(changed, `${s.name}: nothing to change`).not.toBe(ours);
      expect(s.oursData((JSON.parse(changed) as { data: unknown }).data), s.name).not.toEqual(content);
    }
  });

  it('compares amounts as exact decimals and times as instants, whatever their spelling', () => {
    expect(decimal('1000.500000000000000000')).toBe('1000.5');
    expect(decimal('21000000.0')).toBe('21000000');
    expect(decimal('21000000')).toBe('21000000');
    expect(decimal('0.000000000000000001')).toBe('0.000000000000000001');
    expect(decimal(null)).toBeNull();
    expect(instant('2024-04-20T00:09:27+00:00')).toBe(instant('2024-04-20T00:09:27.000Z'));
    expect(instant('2024-04-20T00:09:27Z')).not.toBe(instant('2024-04-20T00:09:28Z'));
  });

  it('PostGraphile answers every scenario with the same content as ours', async (ctx) => {
    ctx.skip(!peerInstalled, 'needs PostGraphile in bench/peer/node_modules (npm ci in bench/peer, as bench:peer does)');
    ctx.skip(live.db.engine === 'embedded', because.noServerForChild);
    const peer = await startServer({
      label: 'PostGraphile',
      args: ['--import', 'tsx', 'bench/peer/server.ts'],
      env: { DATABASE_URL: live.db.target.url!, DB_POOL_MAX: '2', GRAPHILE_ENV: 'production' },
      probe: async (base) => (await fetch(`${base}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}',
      })).status === 200,
    });
    try {
      for (const s of await scenarios()) {
        const ours = await post(live.base, s.ours.body);
        const theirs = await post(peer.base, s.theirsBody);
        expect(answersDiffer(s, ours, theirs)).toBeNull();
        // and the step would stop the run on a difference
        expect(answersDiffer(s, ours, tampered(theirs)), s.name).toMatch(/the two answers differ/);
      }
    } finally {
      await peer.stop();
    }
  }, 120_000);
});
