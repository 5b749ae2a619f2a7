// npm run db:migrate — applies sql/ to DATABASE_URL, or to the embedded data directory.
import { loadConfig } from '../config.js';
import { startEmbedded } from '../db/embedded.js';
import { prepareDatabase } from '../db/prepare.js';

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
