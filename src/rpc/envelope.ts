import { TextDecoder } from 'node:util';
import { isLosslessNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';
import { isJsonText } from '../domain/json-text.js';
import { rpcErrors, type RpcError } from './errors.js';

// The JSON-RPC 2.0 envelope: parsing a body (big integers kept as their source text),
// checking one request object, and writing one reply in the interface's member order. Nothing here knows
// HTTP or the methods.

export type Id = string | number | LosslessNumber | null;
export interface Reply {
  id: Id;
  result?: unknown;
  error?: RpcError;
  /** The result went through the response cache (a hit, or just stored): it may be JSON text already. */
  cached?: boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
// Safe integers become numbers; anything else (fractions, exponents, big integers) keeps its exact text.
const parseNumber = (text: string) => {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
  }
  return new LosslessNumber(text);
};

/** The parsed body, or the -32700 reply for one that is not UTF-8 JSON. */
export function parseBody(body: Buffer): { value: unknown } | { reply: Reply } {
  try {
    const text = decoder.decode(body);
    if (text.trim() === '') throw new SyntaxError('empty body');
    return { value: parseLossless(text, null, parseNumber) };
  } catch {
    return { reply: { id: null, error: rpcErrors.parse() } };
  }
}

function idText(id: Id): string {
  if (id === null) return 'null';
  if (isLosslessNumber(id)) return id.value;
  return JSON.stringify(id);
}

/** Envelope in the interface's member order: jsonrpc, result | error, id. */
export function serialise(reply: Reply): string {
  // a result from the cache (or just stored in it) is JSON text already; any other is a plain value
  const body = reply.error ? `"error":${JSON.stringify(reply.error)}`
    : `"result":${reply.cached && isJsonText(reply.result) ? reply.result.text : JSON.stringify(reply.result ?? null)}`;
  return `{"jsonrpc":"2.0",${body},"id":${idText(reply.id)}}`;
}

/** A request that passed the envelope checks. */
export interface Request { id: Id; notification: boolean; method: string; params: unknown[] }

/**
 * Checks one element of a body: a request to dispatch, or the reply that refuses it (null: a
 * notification that is refused gets no reply).
 */
export function checkRequest(element: unknown): { request: Request } | { reply: Reply | null } {
  if (typeof element !== 'object' || element === null || Array.isArray(element)) {
    return { reply: { id: null, error: rpcErrors.invalidRequest('a request must be an object') } };
  }
  const request = element as Record<string, unknown>;
  const hasId = 'id' in request;
  const rawId = request.id;
  const validId = rawId === null || typeof rawId === 'string' || typeof rawId === 'number' || isLosslessNumber(rawId);
  if (hasId && !validId) return { reply: { id: null, error: rpcErrors.invalidRequest('id must be a string, a number or null') } };
  const id = (hasId ? rawId : null) as Id;
  if (request.jsonrpc !== '2.0') return { reply: { id, error: rpcErrors.invalidRequest('jsonrpc must be "2.0"') } };
  if (typeof request.method !== 'string') return { reply: { id, error: rpcErrors.invalidRequest('method must be a string') } };
  const params = request.params;
  if (params !== undefined && typeof params !== 'object') return { reply: { id, error: rpcErrors.invalidRequest('params must be an array') } };
  if (params !== null && params !== undefined && !Array.isArray(params)) {
    return { reply: hasId ? { id, error: rpcErrors.invalidParams('params must be an array (they are positional)') } : null };
  }
  return { request: { id, notification: !hasId, method: request.method, params: (params ?? []) as unknown[] } };
}
