import { request as httpRequest } from 'node:http';

// Continuous load for the fault tests: workers alternate a JSON-RPC call and a GraphQL query, each reply
// classified as ok, a clean "service unavailable" error (-32000 / SERVICE_UNAVAILABLE), or anything else
// (a wrong code, a 5xx, a dropped connection, a timeout), which is a failure.

export type Outcome = 'ok' | 'unavailable' | 'unclean';

export interface Sample {
  surface: 'rpc' | 'graphql';
  start: number;
  end: number;
  outcome: Outcome;
  detail: string;
}

export interface LoadTargets {
  rpc: { method: string; params: (i: number) => unknown[] };
  graphql: (i: number) => string;
}

const defaultTargets: LoadTargets = {
  rpc: { method: 'inds_getTicks', params: (i) => [5, i % 7, '', '', '', '', i % 5, 2] },
  graphql: (i) => `{ ticks(first: 5, offset: ${i % 7}) { totalCount edges { node { tick stats { holders minted } } } } }`,
};

/** Classifies one reply of either surface. */
export function classify(surface: 'rpc' | 'graphql', status: number, text: string): { outcome: Outcome; detail: string } {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return { outcome: 'unclean', detail: `${status} not JSON: ${text.slice(0, 120)}` };
  }
  if (surface === 'rpc') {
    if (status === 200 && body?.result !== undefined && body.error === undefined) return { outcome: 'ok', detail: '200 result' };
    if (body?.error?.code === -32000) return { outcome: 'unavailable', detail: `${status} -32000 ${body.error.data?.reason ?? ''}` };
    return { outcome: 'unclean', detail: `${status} ${text.slice(0, 160)}` };
  }
  const codes = (body?.errors ?? []).map((e: any) => e.extensions?.code);
  if (status === 200 && body?.data && codes.length === 0) return { outcome: 'ok', detail: '200 data' };
  if (codes.length > 0 && codes.every((c: string) => c === 'SERVICE_UNAVAILABLE')) {
    return { outcome: 'unavailable', detail: `${status} SERVICE_UNAVAILABLE ${body.errors[0].message}` };
  }
  return { outcome: 'unclean', detail: `${status} ${text.slice(0, 160)}` };
}

/** One request on its own connection (`agent: false`), so that nothing depends on connection reuse. */
export function exchange(
  base: string, path: string, body: string, timeoutMs = 10_000, headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, {
      method: 'POST',
      agent: false,
      timeout: timeoutMs,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no reply in ${timeoutMs} ms`), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

export interface Load {
  samples: Sample[];
  /** Stops the workers and waits for the requests in flight. */
  stop(): Promise<Sample[]>;
}

export function startLoad(base: string, workers = 6, targets: LoadTargets = defaultTargets, timeoutMs = 10_000): Load {
  const samples: Sample[] = [];
  let running = true;
  let counter = 0;
  const worker = async (w: number) => {
    while (running) {
      const i = counter++;
      const surface = (i + w) % 2 === 0 ? 'rpc' : 'graphql';
      const body = surface === 'rpc'
        ? JSON.stringify({ jsonrpc: '2.0', id: i, method: targets.rpc.method, params: targets.rpc.params(i) })
        : JSON.stringify({ query: targets.graphql(i) });
      const start = performance.now();
      try {
        const reply = await exchange(base, surface === 'rpc' ? '/v2/rpc' : '/graphql', body, timeoutMs);
        samples.push({ surface, start, end: performance.now(), ...classify(surface, reply.status, reply.text) });
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        samples.push({ surface, start, end: performance.now(), outcome: 'unclean', detail: `${e.code ?? ''} ${e.message}` });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const all = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    samples,
    async stop() {
      running = false;
      await all;
      return samples;
    },
  };
}

export function summarise(samples: readonly Sample[]) {
  const by = (o: Outcome) => samples.filter((s) => s.outcome === o).length;
  const details = new Map<string, number>();
  for (const s of samples) if (s.outcome !== 'ok') details.set(s.detail, (details.get(s.detail) ?? 0) + 1);
  return { total: samples.length, ok: by('ok'), unavailable: by('unavailable'), unclean: by('unclean'), details };
}

/**
 * Milliseconds from `back` (the moment the database answered again) until service was full: the end of
 * the last failed request that started after the outage began (0 when nothing failed after `back`).
 */
export function recoveryMs(samples: readonly Sample[], back: number): number {
  const lastFailure = Math.max(...samples.filter((s) => s.outcome !== 'ok').map((s) => s.end), -Infinity);
  return Math.max(0, lastFailure - back);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
