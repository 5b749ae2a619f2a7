// Prometheus metrics of the sync on its own port (the gateway's /metrics is another process's):
// lag, rows applied per table, source position, mode, errors.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry } from 'prom-client';

export function createSyncMetrics() {
  const registry = new Registry();
  const m = {
    registry,
    lagSeconds: new Gauge({ name: 'igw_sync_lag_seconds', help: 'Seconds between the source commit of the newest change seen and now (0 when caught up)', registers: [registry] }),
    lagEvents: new Gauge({ name: 'igw_sync_lag_events', help: 'Source transactions received but not yet applied', registers: [registry] }),
    rowsApplied: new Counter({ name: 'igw_sync_rows_applied_total', help: 'Source rows applied to the read model', labelNames: ['table', 'phase'], registers: [registry] }),
    transactions: new Counter({ name: 'igw_sync_transactions_total', help: 'Read-model transactions committed by the follow', registers: [registry] }),
    position: new Gauge({ name: 'igw_sync_source_position', help: 'Binlog offset of the last applied source transaction', labelNames: ['file'], registers: [registry] }),
    mode: new Gauge({ name: 'igw_sync_mode', help: '1 for the mode in use (binlog, polling, backfill)', labelNames: ['mode'], registers: [registry] }),
    errors: new Counter({ name: 'igw_sync_errors_total', help: 'Errors by kind (source, target, bad_row)', labelNames: ['kind'], registers: [registry] }),
    badRows: new Counter({ name: 'igw_sync_bad_rows_total', help: 'Source rows that could not be mapped', labelNames: ['table'], registers: [registry] }),
    pollRows: new Counter({ name: 'igw_sync_poll_rows_read_total', help: 'Polling: balance and utxo rows read, by how (derived from new movements, or the safety-net sweep)', labelNames: ['read'], registers: [registry] }),
    pollSeconds: new Counter({ name: 'igw_sync_poll_seconds_total', help: 'Polling: time spent per phase of a cycle (source reads, balance comparison, PostgreSQL apply)', labelNames: ['phase'], registers: [registry] }),
    lastApplied: new Gauge({ name: 'igw_sync_last_applied_timestamp_seconds', help: 'When the follow last committed', registers: [registry] }),
  };
  return {
    ...m,
    setMode(mode: 'backfill' | 'binlog' | 'polling') {
      for (const x of ['backfill', 'binlog', 'polling']) m.mode.set({ mode: x }, x === mode ? 1 : 0);
    },
    setPosition(file: string, pos: number) {
      m.position.reset();
      m.position.set({ file }, pos);
    },
  };
}
export type SyncMetrics = ReturnType<typeof createSyncMetrics>;

export async function serveMetrics(metrics: SyncMetrics, host: string, port: number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.registry.metrics().then((body) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(body);
      }, () => { res.writeHead(500); res.end(); });
      return;
    }
    res.writeHead(req.url === '/healthz' ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(req.url === '/healthz' ? 'ok\n' : 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
