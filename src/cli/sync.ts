// npm run sync -- --source mysql://… --database-url postgres://… [--once] [--dry-run] …
// Copies an indexer's MySQL database into the read model and follows it (src/sync).
import { OptionsError, parseOptions, usage } from '../sync/options.js';
import { runSync } from '../sync/run.js';

// postgres.js 3.4.9 can write to a connection it has just closed from a setImmediate callback
// (porsager/postgres#1154, #1208; no fixed release yet). The query on it was already rejected with
// CONNECTION_CLOSED and the sync retries with a new client, so this one error is logged, not fatal.
process.on('uncaughtException', (error) => {
  if (error instanceof TypeError && /reading 'write'/.test(error.message) && /postgres[\\/]src[\\/]connection\.js/.test(error.stack ?? '')) {
    process.stdout.write(`${JSON.stringify({ level: 40, time: new Date().toISOString(), service: 'igw-sync', msg: 'postgres.js wrote to a closed connection (porsager/postgres#1154): ignored, the sync retries' })}\n`);
    return;
  }
  process.stderr.write(`${String(error.stack ?? error)}\n`);
  process.exit(1);
});

// SIGTERM is always honoured: the sync finishes the transaction in hand and exits 0 (src/sync/run.ts), but
// whatever it waits on past the grace period (a server that stopped answering mid-statement), or a second
// signal, ends the process here. Every write is crash-safe (a range or a flush commits with its record;
// kill -9 is tested), so the next run resumes from the last commit.
const graceMs = 10_000;
let signalled = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    const exit = () => {
      process.stdout.write(`${JSON.stringify({ level: 50, time: new Date().toISOString(), service: 'igw-sync', signal,
        msg: 'still busy after the signal: exiting now (the next run resumes from the last commit)' })}\n`);
      process.exit(1);
    };
    if (signalled) exit();
    signalled = true;
    setTimeout(exit, graceMs).unref();
  });
}

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
