import { Counter, Gauge, type Registry } from 'prom-client';
import type { LiveHub } from './hub.js';
import type { LiveSource } from './source.js';

// Live-update series, read from the hub and the source at scrape time (nothing is counted twice).
export function registerLiveMetrics(registry: Registry, hub: LiveHub, source: LiveSource | null): void {
  const registers = [registry];
  new Gauge({
    name: 'igw_subscriptions_open',
    help: 'Open GraphQL subscriptions, by field (blocks, addressActivity, tickActivity)',
    labelNames: ['field'] as const,
    registers,
    collect() {
      const open = hub.openByKind();
      this.set({ field: 'blocks' }, open.blocks);
      this.set({ field: 'addressActivity' }, open.address);
      this.set({ field: 'tickActivity' }, open.tick);
    },
  });
  new Counter({
    name: 'igw_live_events_delivered_total',
    help: 'Live events pushed to subscriptions',
    registers,
    collect() {
      this.reset();
      this.inc(hub.stats().delivered);
    },
  });
  new Counter({
    name: 'igw_subscriptions_dropped_total',
    help: 'Subscriptions dropped for leaving SUBSCRIPTIONS_MAX_QUEUE events unread',
    registers,
    collect() {
      this.reset();
      this.inc(hub.stats().dropped);
    },
  });
  new Gauge({
    name: 'igw_live_source',
    help: 'Where live events come from: 1 for the current mode (listen: own LISTEN; redis-leader: LISTENs and publishes; redis-follower: from Redis)',
    labelNames: ['mode'] as const,
    registers,
    collect() {
      this.reset();
      if (source) this.set({ mode: source.mode() }, 1);
    },
  });
}
