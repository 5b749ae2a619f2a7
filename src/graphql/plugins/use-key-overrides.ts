import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { Access } from '../../access/gate.js';
import type { PagingConfig } from '../context.js';

// A key's own limits over the gateway's (api_keys.max_page_size, max_cost; sql/018): they only raise a
// limit, never lower it below the default. The operation's context gets the raised page size and a
// `maxCost` that the cost limit (./cost.ts) takes over GRAPHQL_MAX_COST. An answer built with a raised page
// size must not be shared with other clients, nor must such a request be answered from the shared cache:
// `noCache` marks it (the response cache skips a bypassed request).

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

/** A key's raised page-size clamp (api_keys.max_page_size above the default), or null: JSON-RPC's share of the overrides. */
export function raisedPaging(access: Access | undefined, paging: PagingConfig): PagingConfig | null {
  const max = access?.kind === 'key' ? access.key.overrides.maxPageSize : null;
  return max !== null && max > paging.maxPageSize ? { ...paging, maxPageSize: max } : null;
}
