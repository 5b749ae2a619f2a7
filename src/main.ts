import { createGateway } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import type { EmbeddedDatabase } from './db/embedded.js';
import { prepareDatabase } from './db/prepare.js';
import { createLogger } from './observability/logger.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Heap growth: when collection is cheap (it is here), V8 lets the old generation grow to ~4× the live heap
// before a full GC — ~60 MB live became ~250 MB more RSS under load (bench/results/). 1.3× keeps the
// gateway under 300 MB for more frequent incremental major GCs (no CPU cost measurable against the
// bench's noise; 1.5× still peaked above 300 MB). Heap flags given to node win.
const heapPolicy = !/--(heap-growing-percent|max-old-space-size|max-heap-size)/.test(
  `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);
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
  let embedded: EmbeddedDatabase | undefined;
  let target: { url?: string; socketPath?: string };
  if (config.DATABASE_URL) {
    target = { url: config.DATABASE_URL };
    if (config.SEED === 'true') await prepareDatabase(target, config, 'always', log);
  } else {
    log(`starting the embedded PostgreSQL (PGlite) in ${config.EMBEDDED_DATA_DIR}`);
    // loaded only when used: the embedded engine's modules add ~45 MB of RSS to a gateway that never starts it
    const { startEmbedded } = await import('./db/embedded.js');
    embedded = await startEmbedded({ dataDir: config.EMBEDDED_DATA_DIR, maxConnections: config.DB_POOL_MAX + 2 });
    target = { socketPath: embedded.socketPath };
    await prepareDatabase(target, config, config.SEED === 'false' ? 'never' : config.SEED === 'true' ? 'always' : 'if-empty', log);
  }

  const gateway = createGateway(config, target, { logger });
  await gateway.ready;
  if (heapPolicy) collectStartupGarbage();
  await new Promise<void>((resolve) => gateway.server.listen(config.PORT, config.HOST, resolve));
  const address = gateway.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  log(`GraphiQL:     ${base}/graphql`);
  log(`JSON-RPC v2:  ${base}/v2/rpc`);
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // Shutdown: stop accepting connections, let in-flight requests finish (requests arriving meanwhile on
  // kept-alive connections get 503), then close the pool. Connections still busy after
  // SHUTDOWN_TIMEOUT_MS are cut and the exit code says so (1).
  let stopping = false;
  const stop = async (signal: string) => {
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
      await gateway.close();
      log('shutdown: connections drained, database pool closed');
      await embedded?.stop();
    } catch (error) {
      process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
      forced = true;
    }
    clearTimeout(deadline);
    process.exit(forced ? 1 : 0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `failed to start: ${(error as Error).message}`}\n`);
  process.exit(1);
});
