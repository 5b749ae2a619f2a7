import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { rpcPaths, type RpcInterface } from '../../src/rpc/openrpc.js';
import { useDatabase, useGateways } from '../support/gateway.js';
import { post } from '../support/http.js';

// rpc.discover advertises where it was asked: PUBLIC_URL when set, else http:// and the request's Host
// header (a plain host[:port] only), never a fixed address; and its answer is never served from the
// response cache, which is keyed on the method and params, not on the Host.

const db = useDatabase();
const gateways = useGateways(db, { CACHE: true }, { ready: false });
const start = async (overrides: Partial<GatewayConfig> = {}) => new URL((await gateways(overrides)).base);

/** rpc.discover over a raw HTTP/1.1 request with the Host header given (fetch does not let a caller set it). */
function discover(base: URL, version: RpcInterface, host: string): Promise<{ servers: { url: string }[]; cache: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.discover', params: [] });
  return new Promise((resolve, reject) => {
    const req = request({
      host: base.hostname, port: base.port, path: rpcPaths[version], method: 'POST', setHost: false,
      headers: { host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ servers: JSON.parse(text).result.servers, cache: String(res.headers['x-cache']) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('rpc.discover: the servers it advertises', () => {
  it.each(['v2', 'v1'] as RpcInterface[])('%s: the Host header it was asked with, on each request (not cached)', async (version) => {
    const base = await start();
    // the response cache answers by now: the same cacheable call is a hit the second time
    const cacheable = { jsonrpc: '2.0', id: 1, method: version === 'v2' ? 'inds_getAllChains' : 'block.LastNumber', params: [[]] };
    await expect.poll(async () => (await post(base.origin, cacheable, rpcPaths[version])).headers.get('x-cache'), { timeout: 10_000 }).toBe('hit');
    const first = await discover(base, version, 'gateway.example:8443');
    expect(first.servers.map((s) => s.url)).toEqual([`http://gateway.example:8443${rpcPaths[version]}`]);
    const second = await discover(base, version, '10.0.0.7');
    expect(second.servers.map((s) => s.url)).toEqual([`http://10.0.0.7${rpcPaths[version]}`]);
    expect([first.cache, second.cache]).toEqual(['bypass', 'bypass']);
    expect((await discover(base, version, '[::1]:8080')).servers[0]!.url).toBe(`http://[::1]:8080${rpcPaths[version]}`);
  });

  it('a Host header that is not a plain host[:port] is not echoed: the checked-in address stands', async () => {
    const base = await start();
    for (const host of ['evil.example/phish?x=', 'a b', 'user@evil.example', `${'a'.repeat(300)}.example`, 'x.example:99999999']) {
      const { servers } = await discover(base, 'v2', host);
      expect(servers.map((s) => s.url), host).toEqual(['http://127.0.0.1:8080/v2/rpc']);
    }
  });

  it('PUBLIC_URL wins over the Host header (with a path prefix, a trailing slash dropped)', async () => {
    const base = await start({ PUBLIC_URL: loadConfig({ PUBLIC_URL: 'https://api.example/gateway/' }).PUBLIC_URL });
    expect((await discover(base, 'v2', 'internal:8080')).servers[0]!.url).toBe('https://api.example/gateway/v2/rpc');
    expect((await discover(base, 'v1', 'internal:8080')).servers[0]!.url).toBe('https://api.example/gateway/v1/rpc');
  });

  it('PUBLIC_URL must be an http(s) URL without query or fragment', () => {
    for (const bad of ['api.example', 'ftp://api.example', 'https://api.example/?a=1', 'https://api.example/#x']) {
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).toThrow(/PUBLIC_URL/);
    }
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080' }).PUBLIC_URL).toBe('http://127.0.0.1:8080');
  });
});
