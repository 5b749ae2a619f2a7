import { createGateway } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { startEmbedded, type EmbeddedDatabase } from './db/embedded.js';
import { prepareDatabase } from './db/prepare.js';

const log = (line: string) => process.stdout.write(`${line}\n`);

async function main() {
  const started = Date.now();
  const config = loadConfig();
  let embedded: EmbeddedDatabase | undefined;
  let target: { url?: string; socketPath?: string };
  if (config.DATABASE_URL) {
    target = { url: config.DATABASE_URL };
    if (config.SEED === 'true') await prepareDatabase(target, config, 'always', log);
  } else {
    log(`starting the embedded PostgreSQL (PGlite) in ${config.EMBEDDED_DATA_DIR}`);
    embedded = await startEmbedded({ dataDir: config.EMBEDDED_DATA_DIR, maxConnections: config.DB_POOL_MAX + 2 });
    target = { socketPath: embedded.socketPath };
    await prepareDatabase(target, config, config.SEED === 'false' ? 'never' : config.SEED === 'true' ? 'always' : 'if-empty', log);
  }

  const gateway = createGateway(config, target);
  await new Promise<void>((resolve) => gateway.server.listen(config.PORT, config.HOST, resolve));
  const address = gateway.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  log(`GraphiQL:     ${base}/graphql`);
  log(`JSON-RPC v2:  ${base}/v2/rpc`);
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: finishing in-flight requests`);
    gateway.server.closeIdleConnections?.();
    await gateway.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `failed to start: ${(error as Error).message}`}\n`);
  process.exit(1);
});
