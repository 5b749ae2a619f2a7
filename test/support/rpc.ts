import { expect } from 'vitest';
import { call } from './http.js';

/** Deep equality and the same key order (the wire format is compared as text). */
export function expectExact(actual: unknown, expected: unknown) {
  expect(actual).toEqual(expected);
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
}

/** JSON-RPC calls on the gateway at `base()`: `ok` expects a result, `fails` an error with `code`. */
export function rpcCalls(base: () => string, path = '/v2/rpc') {
  const rpc = (method: string, params: unknown[], at = path) => call(base(), method, params, at);
  return {
    rpc,
    async ok(method: string, params: unknown[]): Promise<any> {
      const reply = await rpc(method, params);
      expect(reply.error, JSON.stringify(reply.error)).toBeUndefined();
      return reply.result;
    },
    async fails(method: string, params: unknown[], code: number): Promise<{ code: number; message: string; data?: any }> {
      const reply = await rpc(method, params);
      expect(reply.result).toBeUndefined();
      expect(reply.error?.code, JSON.stringify(reply)).toBe(code);
      return reply.error;
    },
  };
}
