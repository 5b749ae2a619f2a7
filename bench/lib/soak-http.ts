// HTTP plumbing of the soak benchmark (bench/soak.ts): one request over node:http from a chosen local
// address, whose answer is streamed (never held whole: an attack's answer may be 100 MB) while its size,
// status, error codes and a head of the body are kept; and a tally of outcomes by key.
import http from 'node:http';
import net from 'node:net';

export interface Outcome {
  status: number | null;
  /** Error codes found in the body: GraphQL `extensions.code` strings and JSON-RPC numeric codes. */
  codes: Map<string, number>;
  bytes: number;
  ms: number;
  /** Transport failure: an errno code, `timeout`, or the message. */
  error?: string;
  /** First 4 KB of the body (latin1). */
  head: string;
  headers: http.IncomingHttpHeaders;
}

export interface RequestOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: http.Agent;
  /** Source address of the connection (127.0.0.2 for the attackers). */
  localAddress?: string;
  timeoutMs: number;
  /** Gives up reading after this many bytes (the answer is then counted as `truncated`). */
  maxBytes?: number;
}

// `"code":"GRAPHQL_VALIDATION_FAILED"` (GraphQL) or `"code":-32602` (JSON-RPC error objects)
const codePattern = /"code":\s*("[A-Z_]+"|-?\d+)/g;
const carry = 64;

/** Counts the error codes of a body arriving in chunks (a match split across two chunks is counted once). */
class CodeScanner {
  private rest = '';
  readonly codes = new Map<string, number>();
  push(chunk: string, last = false) {
    const text = this.rest + chunk;
    const limit = last ? text.length : Math.max(0, text.length - carry);
    codePattern.lastIndex = 0;
    for (let m = codePattern.exec(text); m; m = codePattern.exec(text)) {
      if (m.index >= limit) break;
      const code = m[1]!.replace(/"/g, '');
      this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
    }
    this.rest = last ? '' : text.slice(limit);
  }
}

export function request(opts: RequestOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const scanner = new CodeScanner();
    let head = '';
    let bytes = 0;
    let done = false;
    const finish = (status: number | null, headers: http.IncomingHttpHeaders, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ status, codes: scanner.codes, bytes, ms: performance.now() - started, error, head, headers });
    };
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    const req = http.request(opts.url, {
      method: opts.method ?? 'POST',
      agent: opts.agent,
      localAddress: opts.localAddress,
      headers: {
        ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
        ...opts.headers,
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish(null, {}, 'timeout');
    }, opts.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => finish(null, {}, e.code ?? e.message));
    req.on('response', (res) => {
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        const text = chunk.toString('latin1');
        if (head.length < 4096) head += text.slice(0, 4096 - head.length);
        scanner.push(text);
        if (opts.maxBytes !== undefined && bytes > opts.maxBytes) {
          res.destroy();
          finish(res.statusCode ?? null, res.headers, 'truncated');
        }
      });
      res.on('end', () => {
        scanner.push('', true);
        finish(res.statusCode ?? null, res.headers);
      });
      res.on('error', (e: NodeJS.ErrnoException) => finish(res.statusCode ?? null, res.headers, e.code ?? e.message));
      res.on('aborted', () => finish(res.statusCode ?? null, res.headers, 'aborted'));
    });
    req.end(body);
  });
}

/** `200 ok`, `200 GRAPHQL_VALIDATION_FAILED`, `413 -32600`, `ERR ECONNREFUSED`, `200 ERR timeout` … */
export function outcomeKey(o: Outcome): string {
  const status = o.status === null ? 'ERR' : String(o.status);
  const codes = [...o.codes.keys()].sort().join('+');
  if (o.error) return o.status === null ? `ERR ${o.error}` : `${status} ERR ${o.error}`;
  return `${status} ${codes || 'ok'}`;
}

/** A normal answer: 200 and no error object anywhere in the body. */
export function isSuccess(o: Outcome): boolean {
  return !o.error && o.status === 200 && o.codes.size === 0 && !/"errors?"\s*:/.test(o.head);
}

/** Raw bytes over a fresh TCP connection; resolves with the status line of the answer (or the error). */
export function rawExchange(host: string, port: number, bytes: string, localAddress: string | undefined, timeoutMs: number):
  Promise<{ statusLine: string | null; error?: string; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    let data = '';
    let done = false;
    const socket = net.connect({ host, port, localAddress });
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const line = data.split('\r\n')[0] ?? '';
      resolve({ statusLine: line ? line.slice(0, 80) : null, error: line ? undefined : error, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.includes('\r\n')) finish();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    socket.on('close', () => finish('closed'));
  });
}

/** Counts outcomes by key, with the largest answer and slowest exchange seen. */
export class Tally {
  readonly counts = new Map<string, number>();
  /** Exchanges that ended (answered, failed or timed out); those cut by the end of the run are not here. */
  completed = 0;
  maxBytes = 0;
  maxMs = 0;
  add(key: string, bytes = 0, ms = 0) {
    this.completed++;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (bytes > this.maxBytes) this.maxBytes = bytes;
    if (ms > this.maxMs) this.maxMs = ms;
  }
  toJSON() {
    return {
      completed: this.completed,
      outcomes: Object.fromEntries([...this.counts.entries()].sort((a, b) => b[1] - a[1])),
      maxBytes: this.maxBytes,
      maxMs: Math.round(this.maxMs),
    };
  }
}
