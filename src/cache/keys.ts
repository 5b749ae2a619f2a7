import { createHash } from 'node:crypto';
import { stringify as losslessStringify } from 'lossless-json';

// Cache keys. Layout: `<namespace>:<data version>:<surface>:<digest>`.
// - The namespace pins the build (schema SDL and paging defaults): replicas of another release sharing
//   one Redis never read each other's entries.
// - The data version comes first so the store can refuse, by prefix, any key of a version other than the
//   current one (an If-None-Match header replaying an old ETag included).
// - The digest covers the whole request as an unambiguous JSON array: document, operation name and
//   variables (GraphQL); interface version, method and the exact params (JSON-RPC). Nothing is
//   concatenated bare, so no two different requests share a key (e.g. params ["0xab","c"] / ["0xa","bc"]).

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** JSON with object keys sorted (variables sent as {a,b} and {b,a} are one request). */
function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}

/**
 * What a cached answer depends on besides the request and the data: the schema, the paging defaults, the
 * RPC method tables (documents and reshaping code, as source text).
 */
export function buildFingerprint(...parts: unknown[]): string {
  return JSON.stringify(parts, (_key, value: unknown) => (typeof value === 'function' ? String(value) : value));
}

export function namespaceFor(build: string): string {
  return `igw:${digest(build).slice(0, 12)}`;
}

/** The data version as keys carry it: the database's epoch and its version. */
export const keyVersion = (snapshot: { epoch: string; version: string }) => `${snapshot.epoch}.${snapshot.version}`;

export const versionPrefix = (namespace: string, version: string) => `${namespace}:${version}:`;

export function graphqlKey(
  namespace: string, version: string,
  request: { documentString: string; operationName?: string | null; variableValues?: unknown },
): string {
  const body = JSON.stringify([request.documentString, request.operationName ?? null, stableJson(request.variableValues ?? {})]);
  return `${versionPrefix(namespace, version)}gql:${digest(body)}`;
}

/** Params are taken as received (big numbers keep their exact text): no normalisation, no aliasing. */
export function rpcKey(namespace: string, version: string, iface: 'v1' | 'v2', method: string, params: unknown): string {
  const body = JSON.stringify([iface, method, losslessStringify(params ?? null) ?? 'null']);
  return `${versionPrefix(namespace, version)}rpc:${digest(body)}`;
}
