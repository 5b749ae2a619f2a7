import { GraphQLError } from 'graphql';
import type { BlockActivityRow } from '../db/activity.js';
import type { LiveMovementRow } from '../db/movements.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../observability/logger.js';

// In-process fan-out of live events to subscriptions. A notification carries ids only (sql/010); the
// rows are loaded once per notification, and only when a subscription wants them, then pushed to every
// matching subscription. Each subscription has a bounded queue: a client that does not read is dropped
// (one error event, then the stream ends), never buffered without bound.

export type LiveBlock = BlockActivityRow & { inscription_count: number };
export type LiveMovement = LiveMovementRow;

export type Topic =
  | { kind: 'blocks'; chains: ReadonlySet<string> | null }
  | { kind: 'address'; addressKey: string; chain: string | null }
  | { kind: 'tick'; chain: string; protocol: string; tick: string };

/** What a dropped subscription yields last: its resolver throws the error (the client's last event). */
export interface Dropped { dropped: GraphQLError }
export const isDropped = (value: unknown): value is Dropped =>
  typeof value === 'object' && value !== null && (value as Dropped).dropped instanceof GraphQLError;

/** Mints and transfers (the incoming leg: one event per transfer, not two). */
const tickEvents = new Set([2, 3]);

/** Whether a subscription to `topic` gets this movement. */
function wantsMovement(t: Topic, row: LiveMovementRow): boolean {
  if (t.kind === 'address') return t.addressKey === row.address_key && (t.chain === null || t.chain === row.chain);
  return t.kind === 'tick' && tickEvents.has(row.event) && t.chain === row.chain && t.protocol === row.protocol && t.tick === row.tick;
}

class LiveSubscription<T> implements AsyncIterableIterator<T | Dropped> {
  private queue: T[] = [];
  private waiter: ((result: IteratorResult<T | Dropped>) => void) | null = null;
  private done = false;
  private dropError: GraphQLError | null = null;
  private endHooks: (() => void)[] = [];

  constructor(
    readonly topic: Topic,
    private readonly maxQueue: number,
    private readonly hooks: { closed(s: LiveSubscription<T>): void; dropped?(): void; beforeEvent?(): void },
  ) {}

  push(value: T): void {
    if (this.done || this.dropError) return;
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = null;
      this.hooks.beforeEvent?.();
      waiter({ value, done: false });
      return;
    }
    if (this.queue.length >= this.maxQueue) return this.drop();
    this.queue.push(value);
  }

  private drop(): void {
    this.dropError = new GraphQLError(
      `Subscription dropped: the client left ${this.maxQueue} events unread (SUBSCRIPTIONS_MAX_QUEUE); subscribe again`,
      { extensions: { code: 'SLOW_CONSUMER' } },
    );
    this.queue = [];
    this.left();
    this.hooks.dropped?.();
  }

  /** Calls `hook` once the subscription leaves the hub (ended or dropped). */
  onEnd(hook: () => void): void {
    if (this.done || this.dropError) hook();
    else this.endHooks.push(hook);
  }

  private left(): void {
    this.hooks.closed(this);
    for (const hook of this.endHooks.splice(0)) hook();
  }

  /** Ends the stream (shutdown, client gone): a waiting reader gets `done`. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.queue = [];
    this.left();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T | Dropped>> {
    if (this.dropError) {
      const dropped = this.dropError;
      this.dropError = null;
      this.done = true;
      return Promise.resolve({ value: { dropped }, done: false });
    }
    const value = this.queue.shift();
    if (value !== undefined) {
      this.hooks.beforeEvent?.();
      return Promise.resolve({ value, done: false });
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiter = resolve));
  }

  return(): Promise<IteratorResult<T | Dropped>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<T | Dropped>> {
    this.end();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

export interface LiveHubOptions {
  store: Store;
  /** Events a subscription may hold unread before it is dropped (SUBSCRIPTIONS_MAX_QUEUE). */
  maxQueue: number;
  /** Notifications waiting for their rows to load; more are dropped (the database is too slow). */
  maxPending?: number;
  logger?: Logger;
}

export type LiveHub = ReturnType<typeof createLiveHub>;

type LiveEvent = { b?: string; h?: string; m?: string[] };
type Subscriptions = ReadonlySet<LiveSubscription<unknown>>;

const wanting = (subscriptions: Subscriptions, kinds: Topic['kind'][]) =>
  [...subscriptions].filter((s) => kinds.includes(s.topic.kind));

/** Loads one event's rows and pushes them to the subscriptions that want them; returns how many were pushed. */
async function deliver(store: Store, subscriptions: Subscriptions, event: LiveEvent): Promise<number> {
  if (typeof event.b === 'string' && typeof event.h === 'string') return pushBlock(store, subscriptions, event.b, event.h);
  if (Array.isArray(event.m) && event.m.length > 0) return pushMovements(store, subscriptions, event.m);
  return 0;
}

async function pushBlock(store: Store, subscriptions: Subscriptions, chain: string, height: string): Promise<number> {
  const targets = wanting(subscriptions, ['blocks']).filter((s) => s.topic.kind === 'blocks' && (!s.topic.chains || s.topic.chains.has(chain)));
  if (targets.length === 0) return 0;
  const [row] = await store.activity.blocksAt([{ chain, height }]);
  if (!row) return 0;
  for (const s of targets) s.push(row);
  return targets.length;
}

async function pushMovements(store: Store, subscriptions: Subscriptions, ids: string[]): Promise<number> {
  const targets = wanting(subscriptions, ['address', 'tick']);
  if (targets.length === 0) return 0;
  const rows = await store.movements.byIdsWithTick(ids.map(String));
  let pushed = 0;
  for (const row of rows) {
    for (const s of targets) {
      if (!wantsMovement(s.topic, row)) continue;
      s.push(row);
      pushed += 1;
    }
  }
  return pushed;
}

export function createLiveHub(options: LiveHubOptions) {
  const subscriptions = new Set<LiveSubscription<unknown>>();
  const maxPending = options.maxPending ?? 10_000;
  let pending = 0;
  let tail: Promise<void> = Promise.resolve();
  let closed = false;
  let delivered = 0;
  let dropped = 0;

  return {
    /** A notification's payload (from PostgreSQL directly or relayed through Redis): events in order. */
    dispatch(payload: string): void {
      if (closed || subscriptions.size === 0) return;
      if (pending >= maxPending) {
        options.logger?.warn({ pending }, 'live events dropped: rows load slower than notifications arrive');
        return;
      }
      let event: LiveEvent;
      try {
        event = JSON.parse(payload) as typeof event;
      } catch {
        return;
      }
      pending += 1;
      tail = tail.then(async () => {
        const pushed = await deliver(options.store, subscriptions, event);
        delivered += pushed;
      }).catch((error: unknown) => {
        options.logger?.warn({ err: (error as Error).message }, 'cannot load a live event');
      }).finally(() => {
        pending -= 1;
      });
    },
    subscribe<T>(topic: Topic, hooks: { dropped?(): void; beforeEvent?(): void } = {}): LiveSubscription<T> {
      const subscription = new LiveSubscription<T>(topic, options.maxQueue, {
        ...hooks,
        dropped: () => {
          dropped += 1;
          hooks.dropped?.();
        },
        closed: (s) => subscriptions.delete(s as LiveSubscription<unknown>),
      });
      if (closed) subscription.end();
      else subscriptions.add(subscription as LiveSubscription<unknown>);
      return subscription;
    },
    /** Open subscriptions, and events pushed so far (metrics, tests). */
    stats: () => ({ subscriptions: subscriptions.size, delivered, dropped, pending }),
    /** Open subscriptions per kind of topic. */
    openByKind(): Record<Topic['kind'], number> {
      const counts = { blocks: 0, address: 0, tick: 0 };
      for (const s of subscriptions) counts[s.topic.kind] += 1;
      return counts;
    },
    /** Shutdown: every stream ends with its `complete` event. */
    async close(): Promise<void> {
      closed = true;
      for (const s of [...subscriptions]) s.end();
      await tail.catch(() => {});
    },
  };
}
