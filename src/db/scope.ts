// How src/db sees the request a statement belongs to. The db layer does not know what a request is
// (src/observability/request.ts does): the composition root (src/app.ts) passes an accessor in, and the
// sources and the statement runner use it for per-request pins, budgets and time accounting.

/** How one statement spends its time, as the statement runner learns it. */
export interface DbStatementTrack {
  /** It has to wait for a pool connection. */
  queued(): void;
  /** It holds a connection (its database time starts). */
  running(): void;
  /** It settled (result, error or refusal); idempotent. */
  done(): void;
}

/** A request as src/db sees it: an identity (pins and budgets are kept per request) and where it may read. */
export interface DbRequest {
  /** Read from the primary only (a subscription event: a replica may not have replayed its rows yet). */
  readonly primaryOnly?: boolean;
  /** The API key's name the request came with; absent: anonymous (its statements share ANONYMOUS_SHARE of the pool). */
  readonly keyName?: string;
}

export interface RequestScopeAccessor {
  /** The request in progress, undefined outside one. */
  current(): DbRequest | undefined;
  /** Called by the statement runner when a statement asks for a connection. */
  track(): DbStatementTrack;
}

const untracked: DbStatementTrack = { queued() {}, running() {}, done() {} };

/** No requests (tools, or a store built without one): every statement stands alone. */
export const noRequestScope: RequestScopeAccessor = { current: () => undefined, track: () => untracked };
