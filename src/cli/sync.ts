// npm run sync -- --source mysql://… --database-url postgres://… [--once] [--dry-run] …
// Copies an indexer's MySQL database into the read model and follows it (src/sync).
import { OptionsError, parseOptions, usage } from '../sync/options.js';
import { runSync } from '../sync/run.js';

try {
  const options = parseOptions(process.argv.slice(2));
  if (options === 'help') {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  process.exit(await runSync(options));
} catch (error) {
  process.stderr.write(`${error instanceof OptionsError ? error.message : String((error as Error).stack ?? error)}\n`);
  process.exit(1);
}
