// npm run db:migrate — applies sql/ to DATABASE_URL, or to the embedded data directory. Failures are one
// line on stderr and exit code 1 (an operator's mistake, such as a standby's URL, is not a crash).
import { ConfigError, loadConfig } from '../config.js';
import { startEmbedded } from '../db/embedded.js';
import { StandbyError } from '../db/migrate.js';
import { prepareDatabase } from '../db/prepare.js';

async function main() {
  const config = loadConfig();
  const seed = process.argv.includes('--seed') ? 'always' : 'never';
  if (config.DATABASE_URL) {
    await prepareDatabase({ url: config.DATABASE_URL }, config, seed, console.log);
  } else {
    const db = await startEmbedded({ dataDir: config.EMBEDDED_DATA_DIR, maxConnections: 2 });
    try {
      await prepareDatabase({ socketPath: db.socketPath }, config, seed, console.log);
    } finally {
      await db.stop();
    }
  }
  console.log('database is up to date');
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError || error instanceof StandbyError
    ? error.message
    : `migration failed: ${(error as Error).message ?? String(error)}`;
  process.stderr.write(`${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
});
