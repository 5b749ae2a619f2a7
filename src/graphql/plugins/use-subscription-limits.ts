import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { readCredentials } from '../../access/gate.js';
import { refill } from '../../access/limits.js';
import { onSocketClose } from '../socket-close.js';

// Caps on open subscriptions, counted from the moment one is admitted until its stream ends (client gone,
// dropped, or shutdown): per client address (the same key as the HTTP per-client caps) and per connection.
// A subscription over a cap gets one error event (TOO_MANY_REQUESTS) and its stream ends.

export interface SubscriptionLimits {
  /** Open subscriptions in all: SUBSCRIPTIONS_MAX_OPEN, within SUBSCRIPTIONS_MAX_CONNECTION_SHARE of the connection table. */
  maxOpen?: number;
  /** SUBSCRIPTIONS_MAX_PER_CLIENT; 0: none. */
  maxPerClient: number;
  /** SUBSCRIPTIONS_MAX_PER_CONNECTION. */
  maxPerConnection: number;
  /** A client address's key, the same as the HTTP listener's per-client caps use (src/server/connections.ts). */
  clientKey: (address: string) => string;
  /**
   * A request made with an API key: its streams are counted per key (whatever its addresses) against the
   * key's own cap (its max_streams, else maxPerClient), not per address. Null: counted per address.
   */
  keyedCap?: (req: IncomingMessage | undefined) => { id: string; max: number } | null;
  /** The share of maxOpen that streams without an API key may hold together now (ANONYMOUS_SHARE; 1: all). */
  anonymousShare?: () => number;
  /** New streams per second without an API key, over all clients (SUBSCRIPTIONS_MAX_NEW_PER_S); 0 or none: not paced. */
  maxNewPerSecond?: number;
}

/** Seconds a client refused for the gateway's stream count is told to wait. */
const busyRetryAfterS = 5;
const tooManyInAll = () => new GraphQLError(
  'Too many open subscriptions on this gateway (SUBSCRIPTIONS_MAX_OPEN, SUBSCRIPTIONS_MAX_CONNECTION_SHARE): retry later',
  // the connection is closed with the answer: a refused client must not keep its place in the connection table
  { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', http: { status: 503, headers: { 'retry-after': String(busyRetryAfterS), connection: 'close' } } } },
);

const tooManyAnonymous = () => new GraphQLError(
  'Too many open subscriptions without an API key on this gateway (ANONYMOUS_SHARE): retry later, or subscribe with a key',
  { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', http: { status: 503, headers: { 'retry-after': String(busyRetryAfterS) } } } },
);

interface Holder { socket: Socket | undefined; keyed: boolean; key: string | null; cap: number }

const tooMany = (what: string) =>
  new GraphQLError(`Too many open subscriptions ${what}: close one first`, { extensions: { code: 'TOO_MANY_REQUESTS' } });

/** An HTTP answer written by the listener itself (src/server/http.ts), before any request body is read. */
export interface EarlyAnswer { status: number; headers: Record<string, string>; body: unknown }

/** The answer to an event-stream request refused before its body is read (the gateway's stream count is full). */
const tooManyInAllAnswer: EarlyAnswer = {
  status: 503,
  headers: { 'retry-after': String(busyRetryAfterS) },
  body: { errors: [{ message: tooManyInAll().message, extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }] },
};

/**
 * Setting a stream up is a whole GraphQL request through yoga (about 1.5–4 ms of the thread), so thousands of
 * clients opening streams at once kept it busy for seconds while cheap requests waited in the accept queue
 * (bench/README.md). Event-stream requests without a key are paced: refused before their body is read, their
 * connection held (src/server/held.ts), so a crowd opening streams costs a short write each.
 */
const openingTooFastAnswer: EarlyAnswer = {
  status: 503,
  headers: { 'retry-after': '1' },
  body: { errors: [{ message: 'Too many subscriptions opening at once on this gateway (SUBSCRIPTIONS_MAX_NEW_PER_S): retry in a second', extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }] },
};

/** A request presenting an API key, valid or not: the access hook checks it (401 if bad) before anything runs. */
const presentsKey = (req: IncomingMessage) => readCredentials(req.headers).kind !== 'none';

/** A bucket of `perSecond` tokens refilled continuously (the quotas' arithmetic): take() is false when it is empty. */
function pace(perSecond: number) {
  const limits = { ratePerS: perSecond, burst: perSecond, dailyAllowance: null };
  const bucket = { tokens: perSecond, ts: performance.now() };
  return {
    take(): boolean {
      refill(bucket, limits, performance.now());
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
  };
}

/** Who holds a stream: its API key or client address (the per-client count), and its connection. */
function holderOf(limits: SubscriptionLimits, req: IncomingMessage | undefined): Holder {
  const socket = req?.socket;
  const keyed = limits.keyedCap?.(req) ?? null;
  const key = keyed ? `key:${keyed.id}` : socket?.remoteAddress !== undefined ? limits.clientKey(socket.remoteAddress) : null;
  return { socket, keyed: keyed !== null, key, cap: keyed ? keyed.max : limits.maxPerClient };
}

export function subscriptionLimitsPlugin(limits: SubscriptionLimits) {
  const perClient = new Map<string, number>();
  const perSocket = new WeakMap<Socket, number>();
  let open = 0;
  let openAnonymous = 0;
  const opening = limits.maxNewPerSecond ? pace(limits.maxNewPerSecond) : null;
  const anonymousFull = () => {
    const share = limits.anonymousShare?.() ?? 1;
    return limits.maxOpen !== undefined && share < 1 && openAnonymous >= Math.max(1, Math.floor(limits.maxOpen * share));
  };
  const plugin: Plugin = {
    // a proxy in front (deploy/nginx buffers responses by default) passes each event on at once
    onResponse({ response }) {
      if (response.headers.get('content-type')?.startsWith('text/event-stream')) response.headers.set('x-accel-buffering', 'no');
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const req = (args.contextValue as { req?: IncomingMessage }).req;
      const holder = holderOf(limits, req);
      const refused = refusal(holder);
      if (refused) return setResultAndStopExecution({ errors: [refused] });
      const release = count(holder);
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) return release();
          return { onEnd: release };
        },
        onSubscribeError: release,
      };
    },
  };

  /** The error refusing one more stream to `holder`, or null. */
  function refusal({ socket, keyed, key, cap }: Holder): GraphQLError | null {
    if (limits.maxOpen !== undefined && open >= limits.maxOpen) return tooManyInAll();
    if (!keyed && anonymousFull()) return tooManyAnonymous();
    if (key !== null && cap > 0 && (perClient.get(key) ?? 0) >= cap) {
      return tooMany(keyed ? 'for this API key (its stream count)' : 'from this client address (SUBSCRIPTIONS_MAX_PER_CLIENT)');
    }
    if (socket && (perSocket.get(socket) ?? 0) >= limits.maxPerConnection) return tooMany('on this connection (SUBSCRIPTIONS_MAX_PER_CONNECTION)');
    return null;
  }

  /** Counts one more stream of `holder`; returns what uncounts it (once). */
  function count({ socket, keyed, key }: Holder): () => void {
    if (key !== null) perClient.set(key, (perClient.get(key) ?? 0) + 1);
    if (socket) perSocket.set(socket, (perSocket.get(socket) ?? 0) + 1);
    open += 1;
    if (!keyed) openAnonymous += 1;
    let released = false;
    let detach = () => {};
    const release = () => {
      if (released) return;
      released = true;
      detach();
      open -= 1;
      if (!keyed) openAnonymous -= 1;
      if (key !== null) {
        const left = (perClient.get(key) ?? 1) - 1;
        if (left > 0) perClient.set(key, left);
        else perClient.delete(key);
      }
      if (socket) perSocket.set(socket, (perSocket.get(socket) ?? 1) - 1);
    };
    // the client gone releases too, whether or not the stream noticed yet: counted on the connection (one
    // listener per socket), since a response pipelined behind another one never emits 'close'
    detach = onSocketClose(socket, release);
    return release;
  }

  return {
    plugin,
    open: () => open,
    // at the cap, the listener refuses an event-stream request before its body is read or parsed (and holds
    // its connection a while: src/server/held.ts), so a crowd of refused clients reconnecting costs as little
    // as possible; the check in onSubscribe stays the bound
    earlyRefusal: (req: IncomingMessage): EarlyAnswer | null => {
      if (limits.maxOpen !== undefined && open >= limits.maxOpen) return tooManyInAllAnswer;
      if (opening && !presentsKey(req) && !opening.take()) return openingTooFastAnswer;
      return null;
    },
  };
}
