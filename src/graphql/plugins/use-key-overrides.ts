import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { Access } from '../../access/gate.js';
import { raisedPaging, type PagingConfig } from '../context.js';

// A key's own limits over the gateway's, which only ever raise them: its page size and cost limit
// (./use-cost-limit.ts) go into the operation's context, and a raised page size keeps the request out of the
// shared cache (`noCache`), since its answer must not be served to other clients.

export interface KeyOverrideOptions {
  paging: PagingConfig;
  maxCost: number;
  accessOf: (req: IncomingMessage | undefined) => Access | undefined;
  /** Marks a request to be answered without the response cache (src/cache/graphql.ts's snapshots.bypass). */
  noCache: (request: Request) => void;
}

export function keyOverridesPlugin(options: KeyOverrideOptions): Plugin {
  const raised = (req: IncomingMessage | undefined) => {
    const access = options.accessOf(req);
    if (access?.kind !== 'key') return null;
    const { maxCost } = access.key.overrides;
    return {
      maxPageSize: raisedPaging(access, options.paging)?.maxPageSize ?? null,
      maxCost: maxCost !== null && maxCost > options.maxCost ? maxCost : null,
    };
  };
  return {
    onParams({ request, context }) {
      if (raised((context as { req?: IncomingMessage }).req)?.maxPageSize) options.noCache(request);
    },
    onContextBuilding({ context, extendContext }) {
      const limits = raised((context as { req?: IncomingMessage }).req);
      if (!limits) return;
      extendContext({
        ...(limits.maxPageSize ? { paging: { ...options.paging, maxPageSize: limits.maxPageSize } } : {}),
        ...(limits.maxCost ? { maxCost: limits.maxCost } : {}),
      } as never);
    },
  };
}
