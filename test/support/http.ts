import type { AddressInfo } from 'node:net';
import type { Gateway } from '../../src/app.js';

/** Starts the gateway's HTTP server on an ephemeral loopback port; returns its base URL. */
export async function listen(gateway: Gateway): Promise<string> {
  await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
}

export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** POSTs a raw body (string = sent as is, anything else = JSON) and returns status, headers and body. */
export async function post(base: string, body: unknown, path = '/v2/rpc', init: RequestInit = {}): Promise<RawReply> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

let nextId = 1;
/** One JSON-RPC call; returns the parsed reply object. */
export async function call(base: string, method: string, params: unknown[], path = '/v2/rpc'): Promise<any> {
  const reply = await post(base, { jsonrpc: '2.0', id: nextId++, method, params }, path);
  return reply.json;
}
