// Figures of a soak run (bench/soak.ts): the JSON written to bench/results/<stamp>-soak.json, the verdicts
// against the targets, and the short markdown beside it.
import type { NormalResult } from './soak-normal.js';

export const soakTargets = { rssMb: 400, normalP99Ms: 50, exits: 0, normalErrors: 0 };

export interface MetricsFigures {
  status: number | null;
  bytes: number;
  series: number;
  /** Distinct values of the `operation` / `operationName` labels. */
  operationLabels: number;
  longestLabel: number;
  ms: number;
  error?: string;
}

export interface SoakResult {
  startedAt: string;
  finishedAt: string;
  label: string | null;
  settings: Record<string, unknown>;
  machine: Record<string, unknown>;
  gateway: {
    command: string;
    env: Record<string, string>;
    pid: number;
    exited: boolean;
    exitCode: number | null;
    exitSignal: string | null;
    exitedAtS: number | null;
    /** The stop at the end (when it was still running): did SIGTERM do, or was SIGKILL needed. */
    shutdown: { killed: boolean; code: number | null; ms: number } | null;
    outputTail: string;
  };
  /** Seconds the attacks actually ran (a run ends early, 3 s after the gateway died). */
  ranSeconds: number;
  rss: { maxMb: number | null; medianMb: number | null; samples: (number | null)[] };
  normal: NormalResult | null;
  attacks: Record<string, { what: string } & Record<string, unknown>>;
  metrics: { atStart: MetricsFigures | null; atEnd: MetricsFigures | null };
  /** After the attacks: seconds until igw_subscriptions_open summed to 0 (null: not within 10 s), and the last sum. */
  subscriptionsDrain?: { seconds: number | null; open: number | null } | null;
  targets: typeof soakTargets;
  verdicts: { rss: boolean; normalP99: boolean; exits: boolean; normalErrors: boolean };
}

export function verdicts(r: Omit<SoakResult, 'verdicts'>): SoakResult['verdicts'] {
  return {
    rss: r.rss.maxMb !== null && r.rss.maxMb <= soakTargets.rssMb,
    normalP99: r.normal !== null && r.normal.p99 <= soakTargets.normalP99Ms,
    exits: !r.gateway.exited,
    normalErrors: r.normal !== null && r.normal.errors === 0,
  };
}

const mark = (ok: boolean) => (ok ? 'met' : '**missed**');

/** The headline lines (also printed at the end of a run). */
export function summaryLines(r: SoakResult): string[] {
  const n = r.normal;
  const g = r.gateway;
  return [
    `gateway RSS max ${r.rss.maxMb ?? '?'} MB, median ${r.rss.medianMb ?? '?'} MB (target ≤ ${soakTargets.rssMb} MB: ${mark(r.verdicts.rss)})`,
    `normal load before the attacks: ${n ? `${n.calm.requests} requests, p50 ${n.calm.p50} ms, p99 ${n.calm.p99} ms, ${n.calm.errors} errors` : '?'}`,
    `normal load under attack: ${n?.requests ?? 0} requests, p50 ${n?.p50 ?? '?'} ms, p99 ${n?.p99 ?? '?'} ms, max ${n?.max ?? '?'} ms ` +
      `(target p99 ≤ ${soakTargets.normalP99Ms} ms: ${mark(r.verdicts.normalP99)})`,
    `normal errors: ${n?.errors ?? '?'}${n && n.errors ? ` (${Object.entries(n.errorKinds).map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''} ` +
      `(target 0: ${mark(r.verdicts.normalErrors)})`,
    `gateway exits: ${g.exited ? `1 — code ${g.exitCode}, signal ${g.exitSignal}, at ${g.exitedAtS} s` : '0'} (target 0: ${mark(r.verdicts.exits)})` +
      (g.shutdown ? `; at the end SIGTERM ${g.shutdown.killed ? 'was not enough: SIGKILL after' : `stopped it (exit ${g.shutdown.code}) in`} ${g.shutdown.ms} ms` : ''),
    `/metrics at the end: ${r.metrics.atEnd ? (r.metrics.atEnd.error ? `failed (${r.metrics.atEnd.error})` :
      `${(r.metrics.atEnd.bytes / 1024).toFixed(0)} KB, ${r.metrics.atEnd.series} series, ${r.metrics.atEnd.operationLabels} operation labels, longest label ${r.metrics.atEnd.longestLabel} chars`) : 'not read'}` +
      (r.metrics.atStart && !r.metrics.atStart.error ? ` (at the start: ${(r.metrics.atStart.bytes / 1024).toFixed(0)} KB, ${r.metrics.atStart.series} series)` : ''),
  ];
}

function outcomes(o: unknown): string {
  if (!o || typeof o !== 'object') return '';
  return Object.entries(o as Record<string, number>).map(([k, v]) => `\`${k}\` ×${v}`).join(', ');
}

export function soakMarkdown(r: SoakResult): string {
  const lines: string[] = [];
  lines.push(`# Soak ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC${r.label ? ` (${r.label})` : ''}`, '');
  lines.push(`\`npm run bench:soak -- ${Object.entries(r.settings).filter(([k]) => !['adminUrl'].includes(k)).map(([k, v]) => `--${k} ${v}`).join(' ')}\`` +
    ` — ran ${r.ranSeconds} s; machine: ${r.machine.cpus} cores, node ${r.machine.node}, load before ${(r.machine.loadBefore as number[]).join(' ')}.`, '');
  for (const l of summaryLines(r)) lines.push(`- ${l}`);
  lines.push('', '| attack | what | completed | outcomes (status + error codes) | largest answer | slowest |', '|---|---|---|---|---|---|');
  for (const [name, a] of Object.entries(r.attacks)) {
    if (name === 'small' || name === 'slow-clients' || name === 'reconnecting-slow') continue;
    lines.push(`| ${name} | ${a.what} | ${a.completed} | ${outcomes(a.outcomes) || '—'}${a.unfinishedAtEnd ? `; ${a.unfinishedAtEnd} unfinished at the end` : ''} | ` +
      `${((a.maxBytes as number) / 1e6).toFixed(2)} MB | ${((a.maxMs as number) / 1000).toFixed(1)} s |`);
  }
  // an attack's own figures (bench/lib/soak-protocol.ts: scrape sizes, APQ victim kept, GraphiQL bytes)
  for (const [name, a] of Object.entries(r.attacks)) {
    if (a.figures) lines.push('', `**${name}**: \`${JSON.stringify(a.figures)}\``);
  }
  const streamProbe = r.attacks['stream-probe'];
  if (streamProbe) {
    lines.push('', `**Stream attacks' probe** (${streamProbe.what}): ${streamProbe.sent} sent, ${streamProbe.successPercent} % answered 200, ` +
      `p50 ${streamProbe.p50Ms} ms, p99 ${streamProbe.p99Ms} ms. Idle streams open at most at once: ${r.attacks['stream-idle']?.maxOpenStreams ?? '—'}. ` +
      `Stream figures of the gateway: at most ${(((streamProbe.maxPendingBytes as number) ?? 0) / 1e6).toFixed(1)} MB waiting for slow clients, ` +
      `${streamProbe.slowConsumers} streams cut as SLOW_CONSUMER, ${streamProbe.eventExecutions} executions for ${streamProbe.eventsDelivered} events delivered.`);
  }
  if (r.subscriptionsDrain !== undefined) {
    const d = r.subscriptionsDrain;
    lines.push('', `**Subscriptions after the attacks**: \`igw_subscriptions_open\` ${d === null ? 'not read (gateway gone)' : d.seconds !== null ? `back to 0 within ${d.seconds} s` : `still ${d.open} after 10 s`}.`);
  }
  const slow = r.attacks['slow-clients'];
  if (slow) {
    const lt = slow.lifetimeS as { min: number; median: number; max: number } | null;
    lines.push('', `**Slow clients**: ${slow.what}. Opened ${slow.opened} (connected ${slow.connected}), at most ${slow.maxOpen} open at once, ` +
      `${slow.openAtEnd} still open at the end, ${slow.pendingAtEnd} still connecting at the end, ${slow.closedByServer} closed by the gateway` +
      `${lt ? ` after ${lt.min}–${lt.max} s (median ${lt.median} s)` : ''}; answers: ${outcomes(slow.replies) || 'none'}; ` +
      `connect errors: ${outcomes(slow.connectErrors) || 'none'}.`);
  }
  const probe = r.attacks.probe;
  if (probe) {
    lines.push('', `**Probe from another address** (issue 23's target: answered ≥ 99 %, p99 ≤ 500 ms): ${probe.sent} sent, ` +
      `${probe.answered} answered (${probe.answeredPercent} %), p50 ${probe.p50Ms} ms, p99 ${probe.p99Ms} ms.` +
      lateProbes(probe.late as { atS: number; ms: number; outcome: string }[] | undefined));
  }
  const reconnecting = r.attacks['reconnecting-slow'];
  if (reconnecting) {
    lines.push('', `**Reconnecting slow bodies**: ${reconnecting.what}. Opened ${reconnecting.opened}, at most ${reconnecting.maxOpen} open at once, ` +
      `${reconnecting.cutByGateway} cut by the gateway; first lines answered: ${outcomes(reconnecting.firstLines) || 'none'}.`);
  }
  const small = r.attacks.small;
  if (small) {
    lines.push('', `**Small probes**: ${small.what}.`, '');
    for (const [probe, t] of Object.entries(small)) {
      if (probe === 'what') continue;
      lines.push(`- ${probe}: ${outcomes((t as { outcomes: unknown }).outcomes)}`);
    }
  }
  if (r.normal) {
    lines.push('', '**Normal load** by request kind:', '', '| kind | requests | errors | p50 ms | p99 ms |', '|---|---|---|---|---|');
    for (const [k, v] of Object.entries(r.normal.byKind)) lines.push(`| ${k} | ${v.requests} | ${v.errors} | ${v.p50} | ${v.p99} |`);
  }
  if (r.gateway.exited) {
    const out = r.gateway.outputTail.split('\n');
    const fatal = out.findIndex((l) => /FATAL ERROR|Last few GCs/.test(l));
    const shown = fatal >= 0 ? out.slice(Math.max(0, fatal - 2), fatal + 8) : out.slice(-15);
    lines.push('', 'Gateway output at its end:', '', '```', shown.map((l) => l.slice(0, 300)).join('\n'), '```');
  }
  lines.push('');
  return lines.join('\n');
}

/** When the probe was late (over 500 ms) or not answered, in seconds from its start (the attacks ramp up first). */
function lateProbes(late: { atS: number; ms: number; outcome: string }[] | undefined): string {
  if (!late?.length) return ' None was later than 500 ms.';
  const shown = late.slice(0, 12).map((l) => `${l.atS} s: ${l.ms} ms${l.outcome === '200 ok' ? '' : ` (${l.outcome})`}`).join(', ');
  return ` Late (over 500 ms) or unanswered: ${late.length} — ${shown}${late.length > 12 ? ', …' : ''}.`;
}
