import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { useDatabase, useGateways } from '../support/gateway.js';

// CORS: with CORS_ORIGIN=* neither surface ever allows credentials (nor echoes the Origin with
// `access-control-allow-credentials: true`); a configured list answers only listed origins, echoed, and
// allows credentials only with CORS_CREDENTIALS=true. GraphQL and JSON-RPC agree.

const db = useDatabase();
const gatewayWith = useGateways(db, {}, { ready: false });

const surfaces = {
  graphql: { path: '/graphql', body: JSON.stringify({ query: '{ __typename }' }) },
  rpc: { path: '/v2/rpc', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }) },
};

/** The CORS headers of a preflight and of the actual POST from `origin`, on one surface. */
async function corsOf(base: string, surface: keyof typeof surfaces, origin: string) {
  const { path, body } = surfaces[surface];
  const preflight = await fetch(`${base}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  const post = await fetch(`${base}${path}`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body });
  expect(preflight.status).toBe(204);
  expect(post.status).toBe(200);
  const pick = (r: Response) => ({
    origin: r.headers.get('access-control-allow-origin'),
    credentials: r.headers.get('access-control-allow-credentials'),
    vary: r.headers.get('vary'),
  });
  return { preflight: pick(preflight), post: pick(post), methods: preflight.headers.get('access-control-allow-methods') };
}

describe('CORS_ORIGIN=* (the default)', () => {
  it('both surfaces answer a plain * and never allow credentials, whatever the Origin', async () => {
    const { base } = await gatewayWith({});
    for (const surface of ['graphql', 'rpc'] as const) {
      for (const origin of ['https://evil.example', 'null', 'http://localhost:3000']) {
        const cors = await corsOf(base, surface, origin);
        for (const answer of [cors.preflight, cors.post]) {
          expect(answer.origin, `${surface} ${origin}`).toBe('*');
          expect(answer.credentials, `${surface} ${origin}`).toBeNull();
        }
        expect(cors.methods).toMatch(/\bPOST\b/);
      }
    }
  });
});

describe('a list of origins', () => {
  const list = 'https://app.example,https://admin.example:8443';

  it('echoes a listed origin with credentials when CORS_CREDENTIALS=true, on both surfaces', async () => {
    const { base } = await gatewayWith({ CORS_ORIGIN: list, CORS_CREDENTIALS: true });
    for (const surface of ['graphql', 'rpc'] as const) {
      for (const origin of ['https://app.example', 'https://admin.example:8443']) {
        const cors = await corsOf(base, surface, origin);
        for (const answer of [cors.preflight, cors.post]) {
          expect(answer).toMatchObject({ origin, credentials: 'true' });
          expect(answer.vary).toMatch(/\bOrigin\b/);
        }
      }
    }
  });

  it('gives an origin not on the list no CORS grant at all (not even `null`)', async () => {
    const { base } = await gatewayWith({ CORS_ORIGIN: list, CORS_CREDENTIALS: true });
    for (const surface of ['graphql', 'rpc'] as const) {
      for (const origin of ['https://evil.example', 'null', 'https://app.example.evil.example', 'http://app.example']) {
        const cors = await corsOf(base, surface, origin);
        for (const answer of [cors.preflight, cors.post]) {
          expect(answer.origin, `${surface} ${origin}`).toBeNull();
          expect(answer.credentials, `${surface} ${origin}`).toBeNull();
          expect(answer.vary).toMatch(/\bOrigin\b/);
        }
      }
    }
  });

  it('allows no credentials unless CORS_CREDENTIALS=true', async () => {
    const { base } = await gatewayWith({ CORS_ORIGIN: list });
    for (const surface of ['graphql', 'rpc'] as const) {
      const cors = await corsOf(base, surface, 'https://app.example');
      for (const answer of [cors.preflight, cors.post]) expect(answer).toMatchObject({ origin: 'https://app.example', credentials: null });
    }
  });
});

describe('configuration', () => {
  it('refuses credentials for any origin, and origins that could never match', () => {
    expect(loadConfig({}).CORS_CREDENTIALS).toBe(false);
    expect(() => loadConfig({ CORS_CREDENTIALS: 'true' })).toThrow(/CORS_CREDENTIALS/);
    expect(() => loadConfig({ CORS_ORIGIN: '*', CORS_CREDENTIALS: 'true' })).toThrow(/CORS_CREDENTIALS/);
    expect(() => loadConfig({ CORS_ORIGIN: 'https://app.example/' })).toThrow(/CORS_ORIGIN/);
    expect(() => loadConfig({ CORS_ORIGIN: 'https://app.example,*' })).toThrow(/CORS_ORIGIN/);
    expect(loadConfig({ CORS_ORIGIN: 'https://app.example,http://localhost:3000', CORS_CREDENTIALS: 'true' }).CORS_CREDENTIALS).toBe(true);
  });
});
