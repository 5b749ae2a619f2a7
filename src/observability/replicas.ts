import { Counter, Gauge, type Registry } from 'prom-client';
import type { Sources } from '../db/sources.js';

// The database sources as src/db/sources.ts measures them, read at scrape time. A replica is labelled by its
// name (DATABASE_READ_NAMES, default its position from 0), never by its URL or host:port: two replicas behind
// one pooler share a host:port and would merge. Kept apart from metrics.ts: these exist only with sources in
// play (igw_listen_up, which reads sources.listenUp(), is in metrics.ts).

export function replicaMetrics(registry: Registry, sources: Sources): void {
  const registers = [registry];
  new Gauge({
    name: 'igw_replica_lag_seconds',
    help: 'Proven bound, at scrape time, on how far each read replica\'s data is behind the primary\'s (NaN: unknown or unreachable)',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of sources.replicas) this.set({ replica: r.name }, r.lagMs === null ? Number.NaN : r.lagMs / 1000);
    },
  });
  new Gauge({
    name: 'igw_replica_in_rotation',
    help: 'Whether each read replica receives queries (1) or is out of rotation (0: over MAX_REPLICA_LAG_MS, lag unknown, unreachable or refused)',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of sources.replicas) this.set({ replica: r.name }, r.inRotation ? 1 : 0);
    },
  });
  // counted by the sources; a counter here only reports them (it never goes down: neither do they)
  new Counter({
    name: 'igw_db_session_lost_total',
    help: 'Statements that failed because the server session changed under their connection (a prepared statement lost: a transaction pooler without DB_POOLER=pgbouncer)',
    labelNames: ['source'] as const,
    registers,
    collect() {
      this.reset();
      for (const s of [sources.primary, ...sources.replicas]) this.inc({ source: s.role === 'primary' ? 'primary' : `replica:${s.name}` }, s.poolerErrors);
    },
  });
}
