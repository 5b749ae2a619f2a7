import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Gateway } from '../../src/app.js';

// The tests' HTTP client over real sockets: request (any method, timed), gql/gqlGet (GraphQL), gqlJson (a
// GraphQL reply's body), rpc/post (a JSON-RPC body as is), call (one JSON-RPC call, its reply object), wire
// (node:http, the bytes and headers as sent).

/** Starts the gateway's HTTP server on an ephemeral loopback port; returns its base URL. */
export async function listen(gateway: Gateway): Promise<string> {
  await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
}

export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  ms: number;
}

export async function request(url: string, init: RequestInit = {}): Promise<HttpReply> {
  const started = performance.now();
  const response = await fetch(url, init);
  const text = await response.text();
  const ms = performance.now() - started;
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json, ms };
}

export function gql(base: string, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(variables ? { query, variables } : { query }),
  });
}

/** A GraphQL POST's reply body: data, errors, extensions. */
export async function gqlJson<T = any>(base: string, query: string, variables: Record<string, unknown> = {}): Promise<GraphqlBody<T>> {
  return (await gql(base, query, variables)).json as GraphqlBody<T>;
}

export interface GraphqlBody<T> {
  data?: T;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, any>;
}

/** The path of a GraphQL GET: /graphql with the query and variables in the query string. */
export function graphqlGetPath(query: string, variables?: object): string {
  const vars = variables ? `&variables=${encodeURIComponent(JSON.stringify(variables))}` : '';
  return `/graphql?query=${encodeURIComponent(query)}${vars}`;
}

/** The same query as a GET (what a cache revalidates: If-None-Match on a POST is ignored). */
export function gqlGet(base: string, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(`${base}${graphqlGetPath(query, variables)}`, { headers: { accept: 'application/json', ...headers } });
}

export function rpc(base: string, body: unknown, path = '/v2/rpc', headers: Record<string, string> = {}) {
  return request(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** An HTTP reply without its timing (what `post` returns). */
export type RawReply = Omit<HttpReply, 'ms'>;

/** POSTs a raw body (string = sent as is, anything else = JSON) to `path` (JSON-RPC v2 by default). */
export function post(base: string, body: unknown, path = '/v2/rpc', init: RequestInit = {}): Promise<RawReply> {
  return request(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

let nextId = 1;
/** One JSON-RPC call; returns the parsed reply object. */
export async function call(base: string, method: string, params: unknown[], path = '/v2/rpc'): Promise<any> {
  const reply = await post(base, { jsonrpc: '2.0', id: nextId++, method, params }, path);
  return reply.json;
}

/** A reply read through node:http: headers and body bytes as the server sent them (fetch decompresses). */
export interface WireReply { status: number; headers: IncomingHttpHeaders; body: Buffer }

export interface WireRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The local address to send from (then on a connection of its own). */
  from?: string;
  agent?: Agent;
}

/** A request through node:http (GET unless `method` says otherwise), so hop-by-hop headers and raw bytes are seen. */
export function wire(url: string, init: WireRequest = {}): Promise<WireReply> {
  return new Promise((resolve, reject) => {
    const agent = init.agent ?? (init.from ? false : undefined);
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers ?? {}, localAddress: init.from, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
