// npm run openrpc:print — writes schema/openrpc.json (v2) and schema/openrpc-v1.json (v1): the OpenRPC
// document of each interface built from its method table, with the result of every example as the
// gateway answers it on the demo dataset (loaded into an in-memory embedded database, so nothing outside
// this process is needed or touched).
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createGateway } from '../app.js';
import { loadConfig } from '../config.js';
import { startEmbedded } from '../db/embedded.js';
import { prepareDatabase } from '../db/prepare.js';
import { buildOpenRpcDocument, exampleKey, openRpcFiles, runExamples, type RpcInterface } from '../rpc/openrpc.js';
import { createRpcTables } from '../rpc/tables.js';

async function main() {
  const config = loadConfig({ LOG_LEVEL: 'silent' });
  const limits = { defaultPageSize: config.DEFAULT_PAGE_SIZE, maxPageSize: config.MAX_PAGE_SIZE };
  const tables = createRpcTables();
  const embedded = await startEmbedded({ maxConnections: config.DB_POOL_MAX + 2 });
  try {
    const target = { socketPath: embedded.socketPath };
    await prepareDatabase(target, config, 'always');
    const gateway = createGateway(config, target);
    try {
      await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
      for (const version of ['v2', 'v1'] as RpcInterface[]) {
        const runs = await runExamples(base, buildOpenRpcDocument(tables[version], version, { limits }), version);
        const failed = runs.filter((r) => r.reply.error || !('result' in r.reply));
        if (failed.length > 0) {
          throw new Error(`examples failed:\n${failed.map((r) => `  ${r.method} ${r.example}: ${JSON.stringify(r.reply.error)}`).join('\n')}`);
        }
        const results = new Map(runs.map((r) => [exampleKey(r.method, r.example), r.reply.result]));
        const file = openRpcFiles[version];
        writeFileSync(file, `${JSON.stringify(buildOpenRpcDocument(tables[version], version, { limits, results }), null, 2)}\n`);
        console.log(`wrote ${file.pathname.split('/').slice(-2).join('/')} (${runs.length} example results recorded)`);
      }
    } finally {
      await gateway.close();
    }
  } finally {
    await embedded.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`openrpc:print failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
