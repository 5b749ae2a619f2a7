import type { IncomingMessage } from 'node:http';
import type { Access } from './gate.js';

// A request's access class, set by the listener's access hook (./http-hook.ts) before a surface runs it and
// read by the surfaces for the key's overrides (src/graphql/plugins/use-key-overrides.ts, src/graphql/plugins/use-subscription-limits.ts).
// Absent: the request was not checked (no hook, a preflight), which the surfaces treat as anonymous.

const byRequest = new WeakMap<IncomingMessage, Access>();

export function setAccess(req: IncomingMessage, access: Access): void {
  byRequest.set(req, access);
}

export function accessOf(req: IncomingMessage | undefined): Access | undefined {
  return req ? byRequest.get(req) : undefined;
}
