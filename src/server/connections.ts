import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { waitingAtMost, type Config } from '../config.js';
import { connectionTable, cutsPerSweep, type ConnectionTable } from './pressure.js';

// Slow and greedy clients. Node bounds the whole connection count (maxConnections: a connection over it
// is closed on accept, before any JavaScript runs for it) and the time to receive headers and a whole
// request (headersTimeout, requestTimeout); this file adds what Node lacks: a cap per client address,
// counted on the TCP peer, and a minimum body rate, so a body trickled in a byte at a time is cut long
// before the request timeout; and a budget of bytes answered per client address (below).

export type HttpSettings = Pick<Config,
  'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_MIN_BODY_BYTES_PER_S' | 'HTTP_BODY_GRACE_MS' |
  'HTTP_IDLE_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS' | 'HTTP_MAX_REQUESTS_PER_SOCKET' | 'HTTP_MAX_CONNECTIONS' |
  'HTTP_MAX_CONNECTIONS_PER_CLIENT' | 'HTTP_CLIENT_BYTES_PER_S' | 'HTTP_CLIENT_BURST_BYTES'> &
  // the connection table under pressure (src/server/pressure.ts); defaults 90 % and 2 s
  Partial<Pick<Config, 'HTTP_PRESSURE_THRESHOLD_PERCENT' | 'HTTP_PRESSURE_TIMEOUT_MS' | 'HTTP_MAX_INCOMPLETE_PER_CLIENT'>> &
  // refused and cut connections held before they close (src/server/held.ts); default 1,024 for 5 s
  Partial<Pick<Config, 'HTTP_HOLD_REFUSED_MS' | 'HTTP_MAX_HELD_CONNECTIONS'>> &
  // load shedding by cost (src/server/shedding.ts); default off here, on in the gateway's config
  Partial<Pick<Config, 'SHED_EVENT_LOOP_LAG_MS' | 'SHED_CLIENT_MIN_BYTES' | 'SHED_TOTAL_BYTES_PER_S' | 'SHED_NEW_CONNECTIONS_PER_S' | 'SHED_CLIENT_MIN_CONNECTIONS'>>;

/**
 * How many refused and cut connections are held open before they close, and how long (src/server/held.ts):
 * HTTP_MAX_HELD_CONNECTIONS and HTTP_HOLD_REFUSED_MS, or 1,024 for 5 s when a caller gives neither.
 */
export const holdSettings = (settings: HttpSettings): { max: number; ms: number } =>
  ({ max: settings.HTTP_MAX_HELD_CONNECTIONS ?? 1_024, ms: settings.HTTP_HOLD_REFUSED_MS ?? 5_000 });

/**
 * Node's bound on open sockets (server.maxConnections; one over it is closed on accept): the table, as many
 * again waiting unread for their address's turn (HTTP_MAX_INCOMPLETE_PER_CLIENT), and the held ones.
 */
export function socketsAtMost(settings: HttpSettings): number {
  return settings.HTTP_MAX_CONNECTIONS + waitingAtMost(settings) + holdSettings(settings).max;
}

/**
 * How often timeouts and body rates are checked: a quarter of the shortest limit, between 0.1 and 1 s
 * (Node's own default is 30 s, which would let a 10 s headers timeout fire at 40 s).
 */
export function checkInterval(settings: HttpSettings): number {
  const limits = [settings.HTTP_HEADERS_TIMEOUT_MS, settings.HTTP_REQUEST_TIMEOUT_MS];
  if (settings.HTTP_MIN_BODY_BYTES_PER_S > 0) limits.push(Math.max(settings.HTTP_BODY_GRACE_MS, 100));
  return Math.min(1_000, Math.max(100, Math.floor(Math.min(...limits) / 4)));
}

/**
 * The address a client's connections are counted under: an IPv4 address (also when mapped into IPv6),
 * or the /64 of an IPv6 address (one subscriber usually holds a whole /64, so counting single addresses
 * would not bound anyone).
 */
export function clientKey(address: string): string {
  const v4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (v4) return v4[1]!;
  const plain = address.split('%')[0]!.toLowerCase(); // no zone id
  const width = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const [head = '', tail] = plain.split('::');
  const left = width(head);
  const right = tail === undefined ? [] : width(tail);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}

/** A request whose body is still arriving. */
interface Receiving {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  startedAt: number;
  bytesAtStart: number;
}

export interface ConnectionHooks {
  /** A connection over the per-client cap, or shed: answer it (without reading a request) and close it. */
  refuse(socket: Socket, reason: string, retryAfterS: number): void;
  /** Load shedding of connections (src/server/shedding.ts): seconds to refuse this new one for, 0 to keep it. */
  shed?(socket: Socket): number;
  /** A request body slower than the minimum rate, or not received within the request timeout. */
  cut(req: IncomingMessage, res: ServerResponse, path: string, reason: string): void;
}

/**
 * What to do with a request: serve it; ignore it (it came on a refused connection, which is answered and
 * closed already); or answer that the connection has had its requests (pipelined past the limit).
 */
export type Admission = 'serve' | 'ignore' | 'over-limit';

export interface ConnectionTracker {
  /** Registers a request as it arrives. */
  admit(req: IncomingMessage, res: ServerResponse, path: string): Admission;
  /** Ends the request still receiving its body on this socket, if there is one (request timeout). */
  cutReceiving(socket: Socket, reason: string): boolean;
  /** Whether a response is under way on this socket (nothing may then be written to it but that response). */
  busy(socket: Socket): boolean;
  /** The connection table and its pressure (src/server/pressure.ts). */
  table: ConnectionTable;
  /** Calls `then` once every response under way on this socket has been written (at once when none is). */
  afterResponses(socket: Socket, then: () => void): void;
}

export function trackConnections(server: Server, settings: HttpSettings, hooks: ConnectionHooks): ConnectionTracker {
  server.keepAliveTimeout = settings.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  // requests per connection are counted here, not by Node (server.maxRequestsPerSocket), whose answer to a
  // request past the limit is an empty 503
  const maxRequests = settings.HTTP_MAX_REQUESTS_PER_SOCKET;
  const requests = new WeakMap<Socket, number>();
  const inFlight = new WeakMap<Socket, number>();
  const waiting = new WeakMap<Socket, (() => void)[]>();
  const responded = (socket: Socket) => {
    const left = (inFlight.get(socket) ?? 1) - 1;
    inFlight.set(socket, left);
    const then = left === 0 ? waiting.get(socket) : undefined;
    if (then) {
      waiting.delete(socket);
      for (const fn of then) fn();
    }
  };
  // a socket with no traffic either way for this long (a stalled upload or a client that stops reading)
  server.timeout = settings.HTTP_IDLE_TIMEOUT_MS;

  // prepended after the table's listener, so the per-client cap runs first
  const refused = new WeakSet<Socket>();
  const table = pressureTable(server, settings, hooks, refused);
  capPerClient(server, settings.HTTP_MAX_CONNECTIONS_PER_CLIENT, hooks, refused);
  const receiving = new Map<Socket, Receiving>();
  watchBodyRate(server, settings, receiving, hooks);

  return {
    admit(req, res, path) {
      const socket = req.socket;
      if (refused.has(socket)) {
        req.resume();
        return 'ignore';
      }
      table.request(req, res, path);
      inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
      res.once('close', () => responded(socket));
      if (maxRequests > 0) {
        const count = (requests.get(socket) ?? 0) + 1;
        requests.set(socket, count);
        if (count > maxRequests) return 'over-limit';
        if (count === maxRequests) res.setHeader('connection', 'close'); // the last one: Node closes after it
      }
      if (!req.complete) {
        receiving.set(socket, { req, res, path, startedAt: performance.now(), bytesAtStart: socket.bytesRead });
        res.once('close', () => {
          if (receiving.get(socket)?.req === req) receiving.delete(socket);
        });
      }
      return 'serve';
    },
    cutReceiving(socket, reason) {
      const entry = receiving.get(socket);
      if (!entry || entry.req.complete) return false;
      receiving.delete(socket);
      hooks.cut(entry.req, entry.res, entry.path, reason);
      return true;
    },
    busy: (socket) => (inFlight.get(socket) ?? 0) > 0,
    table,
    afterResponses(socket, then) {
      if ((inFlight.get(socket) ?? 0) === 0) return then();
      waiting.set(socket, [...(waiting.get(socket) ?? []), then]);
    },
  };
}

/** Near full, the table makes room by cutting connections that have not completed a request (pressure.ts). */
function pressureTable(server: Server, settings: HttpSettings, hooks: ConnectionHooks, refused: WeakSet<Socket>): ConnectionTable {
  // with the per-client cap off (behind a proxy: one address carries everyone) nothing is counted per address
  const maxIncomplete = settings.HTTP_MAX_CONNECTIONS_PER_CLIENT === 0 ? 0 : settings.HTTP_MAX_INCOMPLETE_PER_CLIENT ?? 0;
  const maxWaiting = maxIncomplete > 0 ? settings.HTTP_MAX_CONNECTIONS : 0;
  // Node closes a connection over maxConnections on accept: the table keeps the admitted ones within
  // HTTP_MAX_CONNECTIONS and lets as many more wait unread for their address's turn, and the refused and cut
  // ones are held apart (src/server/held.ts)
  server.maxConnections = socketsAtMost(settings);
  const table = connectionTable({
    maxConnections: settings.HTTP_MAX_CONNECTIONS,
    thresholdPercent: settings.HTTP_PRESSURE_THRESHOLD_PERCENT ?? 90,
    timeoutMs: settings.HTTP_PRESSURE_TIMEOUT_MS ?? 2_000,
    keyOf: (socket) => (socket.remoteAddress === undefined ? undefined : clientKey(socket.remoteAddress)),
    maxIncompletePerClient: maxIncomplete,
    maxWaiting,
  }, { cut: hooks.cut });
  server.prependListener('connection', (socket: Socket) => {
    if (!refused.has(socket)) table.opened(socket);
  });
  // after Node's own listener (its 'pause' handler stops the socket's reads; a pause before it, or before the
  // read it starts on the next tick, would not): a waiting connection is not read until its turn
  server.on('connection', (socket: Socket) => {
    if (table.waiting(socket)) process.nextTick(() => table.waiting(socket) && socket.pause());
  });
  const pressureTimer = setInterval(() => table.sweep(), Math.min(250, checkInterval(settings))).unref();
  server.once('close', () => clearInterval(pressureTimer));
  return table;
}

/** HTTP_MAX_CONNECTIONS_PER_CLIENT: a connection over it is refused (`hooks.refuse`); returns the refused sockets. */
function capPerClient(server: Server, cap: number, hooks: ConnectionHooks, refused: WeakSet<Socket>): void {
  const perClient = new Map<string, number>();
  // before Node's own connection listener, so that a refused socket is answered before any parsing
  server.prependListener('connection', (socket: Socket) => {
    if (cap === 0) return;
    if (socket.remoteAddress === undefined) return void socket.destroy(); // already gone
    const key = clientKey(socket.remoteAddress);
    const open = perClient.get(key) ?? 0;
    const shedFor = hooks.shed?.(socket) ?? 0;
    if (open >= cap || shedFor > 0) {
      refused.add(socket);
      if (shedFor > 0) hooks.refuse(socket, `server busy and this client address opens new connections among the most: retry after ${shedFor} s`, shedFor);
      else hooks.refuse(socket, 'too many connections from this client address', 1);
      return;
    }
    perClient.set(key, open + 1);
    socket.once('close', () => {
      const left = (perClient.get(key) ?? 1) - 1;
      if (left > 0) perClient.set(key, left);
      else perClient.delete(key);
    });
  });
}

/**
 * The body rate: after the grace period, a body may take BODY_GRACE + received / MIN_RATE (mod_reqtimeout's
 * MinRate rule): 1 byte every 5 s is cut right after the grace period, a slow but real upload is not.
 */
function watchBodyRate(server: Server, settings: HttpSettings, receiving: Map<Socket, Receiving>, hooks: ConnectionHooks): void {
  const minRate = settings.HTTP_MIN_BODY_BYTES_PER_S;
  if (minRate <= 0) return;
  const sweep = () => {
    const now = performance.now();
    let budget = cutsPerSweep; // the rest on the next check: one turn of the event loop cuts a bounded number
    for (const [socket, entry] of receiving) {
      if (budget === 0) break;
      if (entry.req.complete || socket.destroyed) {
        receiving.delete(socket);
        continue;
      }
      const elapsed = now - entry.startedAt - settings.HTTP_BODY_GRACE_MS;
      if (elapsed <= 0) continue;
      const received = socket.bytesRead - entry.bytesAtStart;
      if (received < (elapsed / 1_000) * minRate) {
        receiving.delete(socket);
        budget--;
        hooks.cut(entry.req, entry.res, entry.path, `request body slower than ${minRate} bytes/s`);
      }
    }
  };
  const timer = setInterval(sweep, checkInterval(settings)).unref();
  server.once('close', () => clearInterval(timer));
}

// A token bucket of response bytes per client address, since a client asking for legitimate large pages
// back to back would otherwise keep the one thread serialising its answers while everyone else waits.

export interface ClientBudgetSettings {
  /** Refill rate; 0 turns the budget off. */
  bytesPerS: number;
  burstBytes: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Addresses tracked at most; past it the longest untouched ones are forgotten (they start full again). */
const maxTracked = 100_000;

export interface ClientBudget {
  /** Seconds until the client may be served again, or 0 if it may be served now. */
  retryAfterS(req: IncomingMessage): number;
  /** Charges the bytes of this response to its client once it has been written. */
  charge(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Charges `bytes` of a response still being written (an event stream) at once, so that a stream counts
   * as it goes, not when it ends (those bytes are then not charged again); true when the client is in debt.
   */
  chargeNow(req: IncomingMessage, bytes: number): boolean;
}

export function clientBudget(settings: ClientBudgetSettings, now: () => number = () => performance.now()): ClientBudget {
  const buckets = new Map<string, Bucket>();
  const rate = settings.bytesPerS / 1_000; // per ms

  /** The bucket of `key` refilled up to now; a full one is not kept (absent = full). */
  const refill = (key: string, t: number): Bucket | undefined => {
    const bucket = buckets.get(key);
    if (!bucket) return undefined;
    bucket.tokens = Math.min(settings.burstBytes, bucket.tokens + (t - bucket.at) * rate);
    bucket.at = t;
    if (bucket.tokens >= settings.burstBytes) {
      buckets.delete(key);
      return undefined;
    }
    return bucket;
  };

  const streamed = new WeakMap<IncomingMessage, number>();
  /** Takes `bytes` from the bucket of `key`; the tokens left. */
  const take = (key: string, bytes: number): number => {
    const t = now();
    const bucket = refill(key, t) ?? { tokens: settings.burstBytes, at: t };
    bucket.tokens -= bytes;
    buckets.delete(key); // re-inserted last: Map order is then least recently charged first
    buckets.set(key, bucket);
    if (buckets.size > maxTracked) buckets.delete(buckets.keys().next().value!);
    return bucket.tokens;
  };

  return {
    chargeNow(req, bytes) {
      const address = req.socket.remoteAddress;
      if (settings.bytesPerS === 0 || address === undefined || bytes <= 0) return false;
      streamed.set(req, (streamed.get(req) ?? 0) + bytes);
      return take(clientKey(address), bytes) < 0;
    },
    retryAfterS(req) {
      if (settings.bytesPerS === 0 || req.socket.remoteAddress === undefined) return 0;
      const bucket = refill(clientKey(req.socket.remoteAddress), now());
      if (!bucket || bucket.tokens > 0) return 0;
      return Math.max(1, Math.ceil(-bucket.tokens / settings.bytesPerS));
    },
    charge(req, res) {
      if (settings.bytesPerS === 0) return;
      const socket = req.socket;
      const address = socket.remoteAddress;
      if (address === undefined) return;
      const before = socket.bytesWritten;
      res.once('finish', () => {
        const bytes = socket.bytesWritten - before - (streamed.get(req) ?? 0);
        if (bytes <= 0) return;
        take(clientKey(address), bytes);
      });
    },
  };
}
