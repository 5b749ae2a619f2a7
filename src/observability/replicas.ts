import { Gauge, type Registry } from 'prom-client';
import type { Sources } from '../db/sources.js';

// The read replicas, as the sources last measured them (src/db/sources.ts). The
// replica label is host:port, never a URL (credentials, database name). Kept apart from metrics.ts: these
// exist only with replicas in play (igw_listen_up, which reads sources.listenUp(), is in metrics.ts), and read the sources' state at scrape time.

export function replicaMetrics(registry: Registry, sources: Sources): void {
  const registers = [registry];
  new Gauge({
    name: 'igw_replica_lag_seconds',
    help: 'How far each read replica is behind the primary (0: same data version; NaN: unknown or unreachable)',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of sources.replicas) this.set({ replica: r.label }, r.lagMs === null ? Number.NaN : r.lagMs / 1000);
    },
  });
  new Gauge({
    name: 'igw_replica_in_rotation',
    help: 'Whether each read replica receives queries (1) or is out of rotation (0: lagging over MAX_REPLICA_LAG_MS, unreachable or unsafe)',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of sources.replicas) this.set({ replica: r.label }, r.inRotation ? 1 : 0);
    },
  });
}
