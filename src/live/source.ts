import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Sql } from '../db/client.js';
import { listenLiveEvents, type LiveListener, type NotificationSource } from '../db/live-events.js';
import type { Logger } from '../observability/logger.js';

// Where live notifications come from. Without Redis each gateway LISTENs on its database itself. With
// REDIS_URL, gateways of one database share one LISTEN: the holder of a Redis lock (SET NX PX, renewed
// by its holder only) LISTENs and PUBLISHes each payload; every gateway, the holder included, takes the
// payloads from its Redis subscription. Fail soft: while Redis does not answer, a gateway LISTENs
// itself and ignores Redis; a holder that dies loses the lock after its TTL and another one takes over
// (notifications in that gap are lost, as on any reconnect of a LISTEN). The channel is src/db/live-events.ts.

export type LiveMode = 'starting' | 'listen' | 'redis-leader' | 'redis-follower' | 'stopped';

export interface LiveSourceOptions {
  /**
   * A client of the database, not the request pool's: its one LISTEN connection is shared with the
   * data-version watcher (postgres.js runs every LISTEN of a client on one connection), so live events
   * cost no extra connection.
   */
  sql: Sql;
  /** Where the LISTEN is held instead of `sql` (the embedded engine: src/db/embedded.ts). */
  notifications?: NotificationSource;
  redisUrl?: string;
  /** Lock lifetime; renewed every third of it. */
  lockTtlMs?: number;
  logger: Logger;
  onPayload(payload: string): void;
}

// renews the lock only while this gateway holds it
const renewScript = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const releaseScript = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** The two Redis clients of one database's relay: `pub` holds the lock and publishes, `sub` receives. */
class RedisRelay {
  readonly pub: Redis;
  readonly sub: Redis;

  constructor(url: string, readonly channel: string, readonly lockKey: string, onMessage: (payload: string) => void) {
    const settings = { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 1_000,
      retryStrategy: () => 1_000 };
    this.pub = new Redis(url, settings);
    // a subscriber connection needs its offline queue to re-subscribe after a reconnect; re-subscribed
    // here, not by ioredis (autoResubscribe leaves its SUBSCRIBE's rejection unhandled when the
    // connection drops again before the reply: an unhandled rejection ends the process)
    const subscriber = this.sub = new Redis(url, { ...settings, enableOfflineQueue: true, autoResubscribe: false });
    subscriber.on('ready', () => void subscriber.subscribe(channel).catch(() => {}));
    for (const client of [this.pub, this.sub]) client.on('error', () => {}); // state is read from `status`
    this.sub.on('message', (_channel: string, payload: string) => onMessage(payload));
  }

  async connect() {
    await Promise.all([this.pub.connect().catch(() => {}), this.sub.connect().catch(() => {})]);
    await this.sub.subscribe(this.channel).catch(() => {});
  }

  ready() {
    return this.pub.status === 'ready' && this.sub.status === 'ready';
  }

  /** Leader while this gateway holds (or just took) the lock, follower while another one does. */
  async role(id: string, ttl: number): Promise<LiveMode> {
    const got = await this.pub.set(this.lockKey, id, 'PX', ttl, 'NX');
    const held = got === 'OK' || Number(await this.pub.eval(renewScript, 1, this.lockKey, id, String(ttl))) === 1;
    return held ? 'redis-leader' : 'redis-follower';
  }

  async close(id: string) {
    if (this.ready()) await this.pub.eval(releaseScript, 1, this.lockKey, id).catch(() => {});
    this.pub.disconnect();
    this.sub.disconnect();
  }
}

/** This gateway's own LISTEN, taken and dropped on request; one that lands after it was dropped is undone. */
class OwnListen {
  private listener: LiveListener | null = null;
  private wanted = false;

  constructor(
    private readonly source: Sql | NotificationSource,
    private readonly onNotification: (payload: string) => void,
    private readonly logger: Logger,
    private readonly stopped: () => boolean,
  ) {}

  held() {
    return this.listener !== null;
  }

  async set(on: boolean) {
    this.wanted = on;
    if (on && !this.listener) {
      try {
        const l = await listenLiveEvents(this.source, this.onNotification);
        if (!this.wanted || this.stopped()) await l.unlisten().catch(() => {});
        else this.listener = l;
      } catch (error) {
        this.logger.warn({ err: (error as Error).message }, 'live events: LISTEN failed (retried)');
      }
    } else if (!on && this.listener) {
      const l = this.listener;
      this.listener = null;
      await l.unlisten().catch(() => {});
    }
  }
}

export function createLiveSource(options: LiveSourceOptions) {
  const sql = options.sql;
  const ttl = options.lockTtlMs ?? 6_000;
  const id = randomUUID();
  // `role` switches as soon as the lock says so (it routes payloads); `mode` is what callers see, and it
  // switches only once the role's LISTEN is in place (or its attempt failed and was logged)
  let role: LiveMode = 'starting';
  let mode: LiveMode = 'starting';
  let publishing = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let relay: RedisRelay | null = null;

  function onNotification(payload: string) {
    if (publishing && relay?.ready()) {
      // delivered back to this gateway through its subscription; locally if the publish fails
      relay.pub.publish(relay.channel, payload).catch(() => options.onPayload(payload));
    } else {
      options.onPayload(payload);
    }
  }

  const own = new OwnListen(options.notifications ?? sql, onNotification, options.logger, () => stopped);
  async function setListen(on: boolean, publish: boolean) {
    publishing = publish;
    await own.set(on);
  }

  async function tick() {
    if (stopped) return;
    let next: LiveMode = 'listen';
    if (relay?.ready()) next = await relay.role(id, ttl).catch((): LiveMode => 'listen');
    if (stopped) return;
    if (next !== role) options.logger.info({ mode: next, previous: role }, 'live events source');
    role = next;
    await setListen(next !== 'redis-follower', next === 'redis-leader');
    if (!stopped && role === next) mode = next;
  }

  return {
    mode: () => mode,
    /** Whether this gateway holds a LISTEN now (tests: one per database with Redis). */
    listening: () => own.held(),
    async start(): Promise<void> {
      if (options.redisUrl) {
        const rows = await sql<{ epoch: string }[]>`SELECT epoch FROM data_version`.catch(() => []);
        const epoch = rows[0]?.epoch ?? 'unknown';
        relay = new RedisRelay(options.redisUrl, `igw:live:${epoch}`, `igw:live:${epoch}:listener`, (payload) => {
          if (role === 'redis-leader' || role === 'redis-follower') options.onPayload(payload);
        });
        await relay.connect();
      }
      await tick();
      timer = setInterval(() => void tick(), Math.max(100, Math.floor(ttl / 3)));
      timer.unref();
    },
    async stop(): Promise<void> {
      stopped = true;
      role = 'stopped';
      mode = 'stopped';
      clearInterval(timer);
      await setListen(false, false);
      await relay?.close(id);
    },
  };
}

export type LiveSource = ReturnType<typeof createLiveSource>;
