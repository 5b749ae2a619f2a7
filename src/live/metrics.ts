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

/** The event streams' series (src/graphql/plugins/use-streams.ts), read at scrape time. */
export function registerStreamMetrics(registry: Registry, stats: () => { pendingBytes: number; executions: number; slowConsumers: number }): void {
  const registers = [registry];
  new Gauge({
    name: 'igw_subscription_pending_bytes',
    help: 'Rendered event bytes waiting for slow clients, over every stream (SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES)',
    registers,
    collect() {
      this.set(stats().pendingBytes);
    },
  });
  new Counter({
    name: 'igw_live_event_executions_total',
    help: "Executions of a subscription's selection for an event: once per group of subscriptions with the same document and variables",
    registers,
    collect() {
      this.reset();
      this.inc(stats().executions);
    },
  });
  new Counter({
    name: 'igw_subscriptions_slow_consumers_total',
    help: 'Streams cut for leaving too many bytes unread (SUBSCRIPTIONS_MAX_PENDING_BYTES, _TOTAL_BYTES) or for a client over its byte budget',
    registers,
    collect() {
      this.reset();
      this.inc(stats().slowConsumers);
    },
  });
}
