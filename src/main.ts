import { createGateway, type Gateway } from './app.js';
import { ConfigError, loadConfig, openFileLimit, type Config } from './config.js';
import { createDemoPlayer } from './db/seed/player.js';
import type { EmbeddedDatabase } from './db/embedded.js';
import { prepareDatabase } from './db/prepare.js';
import { addAcceptHandles } from './server/accept-handles.js';
import { createLogger, type Logger } from './observability/logger.js';
import { socketsAtMost } from './server/connections.js';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A crash is never silent: an uncaught exception or an unhandled rejection writes one fatal line with the
// error (through the logger once it exists, else a JSON line on stderr) and the process exits with 70
// (EX_SOFTWARE), so a supervisor sees both why and that it must restart it. Nothing is drained: after an
// unexpected error the process state is not trusted.
const CRASH_EXIT_CODE = 70;
let fatalLogger: Logger | undefined;
function crash(event: 'uncaughtException' | 'unhandledRejection', error: unknown): void {
  try {
    if (fatalLogger) {
      fatalLogger.fatal({ event, err: error }, `${event}: exiting`);
    } else {
      const err = error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : { message: String(error) };
      process.stderr.write(`${JSON.stringify({ level: 'fatal', time: new Date().toISOString(), service: 'inscription-gateway', event, err, msg: `${event}: exiting` })}\n`);
    }
  } finally {
    process.exit(CRASH_EXIT_CODE); // pino flushes its buffered lines on exit
  }
}
process.on('uncaughtException', (error) => crash('uncaughtException', error));
process.on('unhandledRejection', (reason) => crash('unhandledRejection', reason));

// Heap growth: V8 lets the old generation grow to several times the live heap before a full GC when
// collection is cheap; 1.3× keeps the RSS close to the live heap. Growth flags given to node win; a heap
// limit (--max-old-space-size, set by `npm start` from HEAP_MAX_MB) is a ceiling and keeps this policy.
const heapFlags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
const heapPolicy = !/--(heap-growing-percent|max-heap-size)/.test(heapFlags);
if (heapPolicy) setFlagsFromString('--heap-growing-percent=30');

/** One full GC once start-up is over: the next limit is then 1.3× the live heap, not the start-up one's. */
function collectStartupGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

let log = (line: string): void => void process.stdout.write(`${line}\n`);

async function main() {
  const started = Date.now();
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, pretty: config.LOG_FORMAT === 'auto' ? undefined : config.LOG_FORMAT === 'pretty' });
  log = (line) => logger.info(line);
  fatalLogger = logger;
  reportLimits(config, logger);
  const { embedded, target } = await openDatabase(config);
  const gateway = createGateway(config, embedded ? { ...target, notifications: embedded } : target, { logger, warmGraphiql: true });
  await gateway.ready;
  const player = embedded && playsDemo(config) ? await startDemoPlayer(embedded, config, logger) : undefined;
  if (heapPolicy) collectStartupGarbage();
  await listen(gateway, config);
  const accepts = await addAcceptHandles(gateway.server, config.HTTP_ACCEPT_HANDLES);
  if (accepts.count < config.HTTP_ACCEPT_HANDLES) logger.warn(`accepting on ${accepts.count} of ${config.HTTP_ACCEPT_HANDLES} listening handles (HTTP_ACCEPT_HANDLES): no duplicate of the socket could be had`);
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const stop = stopper(gateway, config, async () => {
    accepts.close();
    await player?.stop();
  }, embedded);
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (config.STOP_WITH_PARENT === 'true' || (config.STOP_WITH_PARENT === 'auto' && process.env.npm_lifecycle_event)) {
    watchParent(() => void stop('parent process gone'));
  }
}

/** Says which heap limit applies and warns when the open-file limit leaves too little for the connections. */
function reportLimits(config: Config, logger: Logger): void {
  // the heap limit is a node flag, so it is set by the start command (npm start: HEAP_MAX_MB); say what applies
  // (the old-space limit given to node: V8's heap_size_limit adds the young generation on top of it)
  const oldSpaceMb = /--max-old-space-size[= ](\d+)/.exec(heapFlags)?.[1];
  if (oldSpaceMb) log(`heap limit: ${oldSpaceMb} MB (--max-old-space-size${Number(oldSpaceMb) === config.HEAP_MAX_MB ? ', HEAP_MAX_MB' : ''})`);
  else logger.warn(`heap limit: ${Math.round(getHeapStatistics().heap_size_limit / 2 ** 20)} MB (V8's default: start with node --max-old-space-size=${config.HEAP_MAX_MB}, as npm start does)`);
  reportMallocArenas(logger);
  const fdLimit = openFileLimit();
  const heldFrom = process.env.HTTP_MAX_HELD_CONNECTIONS ? 'HTTP_MAX_HELD_CONNECTIONS' : fdLimit === null ? 'no open-file limit to read' : `what ulimit -n ${fdLimit} leaves`;
  log(`refused connections held at most: ${config.HTTP_MAX_HELD_CONNECTIONS} (${heldFrom})`);
  if (fdLimit !== null && socketsAtMost(config) > fdLimit - 256) {
    logger.warn(`HTTP_MAX_CONNECTIONS=${config.HTTP_MAX_CONNECTIONS} (with the connections waiting and held: ${socketsAtMost(config)} sockets) leaves too few of the ${fdLimit} file descriptors (ulimit -n) for the database pool and the process itself`);
  }
}

/**
 * Says how many malloc arenas glibc may keep. Its default (8 per core) gives the threads that compress, hash
 * and resolve arenas of their own, and what they free is kept: with every attack of bench:soak at once the
 * RSS peaked 70–128 MB higher than with MALLOC_ARENA_MAX=2 (bench/README.md). glibc reads it before the process
 * starts, so the start command sets it (npm start, the image); other C libraries ignore it.
 */
function reportMallocArenas(logger: Logger): void {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  if (!header?.glibcVersionRuntime) return; // not glibc (musl, macOS): no such setting
  const arenas = process.env.MALLOC_ARENA_MAX;
  if (arenas) log(`malloc arenas: at most ${arenas} (MALLOC_ARENA_MAX)`);
  else logger.warn('malloc arenas: glibc\'s default, 8 per core (start with MALLOC_ARENA_MAX=2, as npm start does: memory freed by its threads is otherwise kept)');
}

/** The server at DATABASE_URL, or the embedded engine started here; migrated and seeded as SEED says. */
async function openDatabase(config: Config): Promise<{ embedded?: EmbeddedDatabase; target: { url?: string; socketPath?: string } }> {
  if (config.DATABASE_URL) {
    const target = { url: config.DATABASE_URL };
    if (config.SEED === 'true') await prepareDatabase(target, config, 'always', log);
    return { target };
  }
  log(`starting the embedded PostgreSQL (PGlite) in ${config.EMBEDDED_DATA_DIR}`);
  // loaded only when used: the embedded engine's modules add to the RSS of a gateway that never starts it
  const { startEmbedded } = await import('./db/embedded.js');
  const embedded = await startEmbedded({ dataDir: config.EMBEDDED_DATA_DIR, maxConnections: config.DB_POOL_MAX + 2 });
  const target = { socketPath: embedded.socketPath };
  await prepareDatabase(target, config, config.SEED === 'false' ? 'never' : config.SEED === 'true' ? 'always' : 'if-empty', log);
  return { embedded, target };
}

/** Listens on HOST:PORT and logs the surfaces' addresses. */
async function listen(gateway: Gateway, config: Config): Promise<void> {
  // a deep accept queue (Node's default is 511; the kernel caps it at net.core.somaxconn): a burst of
  // connections that are refused at once (the per-client cap) must not fill it and make other clients'
  // connects wait for a SYN retransmission
  await new Promise<void>((resolve) => gateway.server.listen({ port: config.PORT, host: config.HOST, backlog: 4_096 }, resolve));
  const address = gateway.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  log(`GraphQL:      ${base}/graphql${config.GRAPHQL_INTROSPECTION ? ' (GraphiQL in a browser)' : ''}`);
  log(`JSON-RPC v2:  ${base}/v2/rpc`);
  log(`JSON-RPC v1:  ${base}/v1/rpc`);
  log(`health:       ${base}/healthz, ${base}/readyz`);
  log(`metrics:      ${base}/metrics`);
}

/**
 * The shutdown, run once: stop accepting connections, let in-flight requests finish (requests arriving
 * meanwhile on kept-alive connections get 503), then close the pool. Connections still busy after
 * SHUTDOWN_TIMEOUT_MS are cut and the exit code says so (1).
 */
function stopper(gateway: Gateway, config: Config, stopPlayer: () => Promise<void>, embedded: EmbeddedDatabase | undefined) {
  let stopping = false;
  return async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: finishing in-flight requests (up to ${config.SHUTDOWN_TIMEOUT_MS} ms)`);
    let forced = false;
    const deadline = setTimeout(() => {
      forced = true;
      log('shutdown: drain timeout, closing the remaining connections');
      gateway.server.closeAllConnections();
    }, config.SHUTDOWN_TIMEOUT_MS);
    try {
      await stopPlayer();
      // a kept-alive client sending its next request right after the signal gets 503 + Connection: close, not a reset
      await gateway.close({ drainIdleMs: Math.min(1_000, config.SHUTDOWN_TIMEOUT_MS / 2) });
      log('shutdown: connections drained, database pool closed');
      await embedded?.stop();
    } catch (error) {
      process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
      forced = true;
    }
    clearTimeout(deadline);
    process.exit(forced ? 1 : 0);
  };
}

/** The demo player plays on the embedded engine's demo data: asked for, or by default when the demo is seeded. */
function playsDemo(config: Config): boolean {
  return config.DEMO_PLAYER === 'true' || (config.DEMO_PLAYER === 'auto' && config.SEED !== 'false');
}

async function startDemoPlayer(embedded: EmbeddedDatabase, config: Config, logger: Logger): Promise<{ stop(): Promise<void> }> {
  const sql = embedded.writer();
  const player = createDemoPlayer({
    sql, intervalMs: config.DEMO_PLAYER_INTERVAL_MS, maxMints: config.DEMO_PLAYER_MAX_MINTS, logger,
  });
  await player.start();
  return {
    async stop() {
      await player.stop();
      await sql.end({ timeout: 5 });
    },
  };
}

/**
 * Calls `onGone` once this process's parent has exited (the process is re-parented, its ppid changes).
 * Under `npm start` the parent is npm: a supervisor that stops npm (SIGKILL, or a signal npm does not
 * forward) stops the gateway too, instead of leaving it listening on its port. Polled: Node has no
 * parent-death signal.
 */
function watchParent(onGone: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, 500);
  timer.unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `failed to start: ${(error as Error).message}`}\n`);
  process.exit(1);
});
