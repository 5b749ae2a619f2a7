import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSourceEventStream, execute, GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { onSocketClose } from '../socket-close.js';

// Subscriptions' event streams (SSE): an event is executed and rendered once per group of identical
// subscriptions, and each stream writes its bytes itself so that a slow consumer (past its own or the total
// pending bytes, or its byte budget) is cut with SLOW_CONSUMER instead of growing memory.

export interface StreamLimits {
  /** SUBSCRIPTIONS_MAX_PENDING_BYTES: rendered bytes one stream may have waiting. */
  maxPendingBytes: number;
  /** SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES: the same over every stream (a chunk shared by streams counts once). */
  maxPendingTotalBytes: number;
  /** Charges bytes written to the client's byte budget; true when the client is now in debt. */
  charge?: (req: IncomingMessage, bytes: number) => boolean;
  /** Heartbeat comment (keeps proxies and the idle timeout from closing a quiet stream). */
  heartbeatMs?: number;
  /** How long a cut stream has to take its last events before its connection is closed. */
  cutGraceMs?: number;
}

export interface StreamStats {
  /** Streams being written. */
  streams: number;
  /** Rendered bytes waiting, over every stream (shared chunks once). */
  pendingBytes: number;
  /** Executions of an event's selection (once per group of identical subscriptions). */
  executions: number;
  /** Streams cut as slow consumers (waiting bytes or byte budget). */
  slowConsumers: number;
}

const encoder = new TextEncoder();
const complete = encoder.encode('event: complete\ndata:\n\n');
const ping = encoder.encode(':\n\n');

// --- shared execution ------------------------------------------------------------------------------------

const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 1;

/** What makes two subscriptions' results for the same event identical. */
function groupKey(args: ExecutionArgs): string {
  let id = documentIds.get(args.document);
  if (id === undefined) documentIds.set(args.document, (id = nextDocumentId++));
  const paging = (args.contextValue as { paging?: unknown } | undefined)?.paging;
  return JSON.stringify([id, args.operationName ?? null, args.variableValues ?? null, paging ?? null]);
}

/** The results of one event per group: a live event is one object pushed to every stream it reaches. */
const executions = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();

function sharedSubscribe(counters: { executions: number }) {
  return async (args: ExecutionArgs) => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    const key = groupKey(args);
    const events = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    const run = (event: unknown): Promise<ExecutionResult> => {
      if (typeof event !== 'object' || event === null) return Promise.resolve(execute({ ...args, rootValue: event }) as ExecutionResult);
      let byKey = executions.get(event);
      if (!byKey) executions.set(event, (byKey = new Map()));
      let result = byKey.get(key);
      if (!result) {
        counters.executions += 1;
        result = Promise.resolve(execute({ ...args, rootValue: event }) as ExecutionResult | Promise<ExecutionResult>);
        byKey.set(key, result);
      }
      return result;
    };
    const iterator: AsyncIterableIterator<ExecutionResult> = {
      async next() {
        const step = await events.next();
        return step.done ? { done: true, value: undefined } : { done: false, value: await run(step.value) };
      },
      async return() {
        await events.return?.();
        return { done: true, value: undefined };
      },
      async throw(error?: unknown) {
        await events.return?.();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return iterator;
  };
}

// --- rendering -------------------------------------------------------------------------------------------

/** An error as the client sees it: no internals (http, originalError, stack). */
function publicError(error: unknown) {
  if (!(error instanceof GraphQLError)) return { message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  const { http: _http, unexpected: _unexpected, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
  return { message: error.message, locations: error.locations, path: error.path, extensions };
}

function eventBytes(result: ExecutionResult): Uint8Array {
  const { http: _http, ...extensions } = (result.extensions ?? {}) as Record<string, unknown>;
  const body = { ...(result.errors ? { errors: result.errors.map(publicError) } : {}),
    ...('data' in result ? { data: result.data } : {}),
    ...(Object.keys(extensions).length > 0 ? { extensions } : {}) };
  return encoder.encode(`event: next\ndata: ${JSON.stringify(body)}\n\n`);
}

/** Rendered events, by their data object (shared by a group) and what else they carry (extensions, errors). */
const renders = new WeakMap<object, Map<string, Uint8Array>>();

function render(result: ExecutionResult): Uint8Array {
  const data = result.data;
  if (typeof data !== 'object' || data === null) return eventBytes(result);
  const rest = JSON.stringify([result.errors?.map(publicError) ?? null, result.extensions ?? null]);
  let byRest = renders.get(data);
  if (!byRest) renders.set(data, (byRest = new Map()));
  let bytes = byRest.get(rest);
  if (!bytes) byRest.set(rest, (bytes = eventBytes(result)));
  return bytes;
}

const slowConsumer = (why: string) => eventBytes({
  errors: [new GraphQLError(`Subscription dropped: ${why}; subscribe again`, { extensions: { code: 'SLOW_CONSUMER' } })],
});

// --- writing ---------------------------------------------------------------------------------------------

/** Chunks handed to sockets and not yet flushed, each counted once however many streams share it. */
class SharedPending {
  private readonly refs = new Map<Uint8Array, number>();
  total = 0;

  has(chunk: Uint8Array): boolean {
    return this.refs.has(chunk);
  }

  hold(chunk: Uint8Array): void {
    const refs = this.refs.get(chunk) ?? 0;
    if (refs === 0) this.total += chunk.byteLength;
    this.refs.set(chunk, refs + 1);
  }

  release(chunk: Uint8Array): void {
    const refs = (this.refs.get(chunk) ?? 1) - 1;
    if (refs > 0) return void this.refs.set(chunk, refs);
    this.refs.delete(chunk);
    this.total -= chunk.byteLength;
  }
}

/** What every stream of one plugin shares: the limits, the waiting bytes and the counters. */
interface StreamsState {
  limits: StreamLimits;
  heartbeatMs: number;
  cutGraceMs: number;
  pending: SharedPending;
  counters: { streams: number; executions: number; slowConsumers: number };
}

type FetchApi = { ReadableStream: typeof ReadableStream; Response: typeof Response };

/** One subscription's event stream: it writes its events to its response itself, counting what waits. */
class EventStream {
  private pending = 0; // this stream's bytes not yet flushed
  private readonly unflushed = new Set<{ chunk: Uint8Array }>();
  private ended = false;
  private opened = false;
  private readonly waiting: Uint8Array[] = []; // before the response's head is out
  private close: () => void = () => {};
  private readonly closed = new Promise<void>((resolve) => (this.close = resolve));
  private readonly heartbeat: NodeJS.Timeout;
  private detach = () => {};

  constructor(
    private readonly req: IncomingMessage, private readonly res: ServerResponse,
    private readonly iterator: AsyncIterator<ExecutionResult>, private readonly state: StreamsState,
  ) {
    state.counters.streams += 1;
    this.heartbeat = setInterval(() => {
      if (this.pending === 0) this.write(ping);
    }, state.heartbeatMs);
    this.heartbeat.unref();
    // the response or its connection gone (a response pipelined behind another never emits 'close')
    const gone = () => this.gone();
    res.once('close', gone);
    this.detach = onSocketClose(req.socket, gone);
  }

  /** Writes `chunk` and charges it to the client's budget; true when the client is then in debt. */
  private write(chunk: Uint8Array): boolean {
    if (!this.opened) {
      this.waiting.push(chunk);
      this.pending += chunk.byteLength; // waiting counts too
      return false;
    }
    if (this.res.destroyed || this.res.writableEnded) return false;
    const entry = { chunk };
    this.unflushed.add(entry);
    this.pending += chunk.byteLength;
    this.state.pending.hold(chunk);
    this.res.write(chunk, () => {
      if (!this.unflushed.delete(entry)) return;
      this.pending -= chunk.byteLength;
      this.state.pending.release(chunk);
    });
    return this.state.limits.charge?.(this.req, chunk.byteLength) ?? false;
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.state.counters.streams -= 1;
    clearInterval(this.heartbeat);
    if (!this.res.destroyed && !this.res.writableEnded) this.write(complete);
    this.close();
    void this.iterator.return?.()?.catch(() => {});
  }

  private cut(why: string): void {
    if (this.ended) return;
    this.state.counters.slowConsumers += 1;
    this.write(slowConsumer(why));
    this.finish();
    const timer = setTimeout(() => {
      if (!this.res.writableFinished) this.req.socket.destroy();
    }, this.state.cutGraceMs);
    timer.unref();
    this.res.once('finish', () => clearTimeout(timer));
  }

  /** Whatever the socket never flushed is dropped with it. */
  private gone(): void {
    this.detach();
    this.finish();
    for (const entry of this.unflushed) this.state.pending.release(entry.chunk);
    this.unflushed.clear();
    this.pending = 0;
  }

  /** Why `chunk` may not be sent (the stream is then cut), or null. */
  private overLimit(chunk: Uint8Array): string | null {
    const { limits, pending } = this.state;
    if (this.pending > 0 && this.pending + chunk.byteLength > limits.maxPendingBytes) {
      return `the client left more than ${limits.maxPendingBytes} bytes unread (SUBSCRIPTIONS_MAX_PENDING_BYTES)`;
    }
    if (!pending.has(chunk) && pending.total > 0 && pending.total + chunk.byteLength > limits.maxPendingTotalBytes) {
      return `events waiting for slow clients exceed ${limits.maxPendingTotalBytes} bytes (SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES)`;
    }
    return null;
  }

  /** Takes the events as they come and writes them, until the stream ends or is cut. */
  async pump(): Promise<void> {
    try {
      for (;;) {
        const step = await this.iterator.next();
        if (this.ended) return;
        if (step.done) return this.finish();
        const chunk = render(step.value);
        const refused = this.overLimit(chunk);
        if (refused) return this.cut(refused);
        if (this.write(chunk)) return this.cut('the client has been sent more than its byte budget (HTTP_CLIENT_BYTES_PER_S)');
      }
    } catch {
      this.finish();
    }
  }

  /** The response's body: it only opens and closes the response; the events go straight to `res`. */
  body(fetchAPI: FetchApi): ReadableStream<Uint8Array> {
    return new fetchAPI.ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(ping); // some browsers wait for a first byte
      },
      // the first pull comes once the head and the first chunk are out
      pull: async (controller) => {
        this.open();
        await this.closed;
        controller.close();
      },
      cancel: () => this.finish(),
    });
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    for (const chunk of this.waiting.splice(0)) {
      this.pending -= chunk.byteLength;
      this.write(chunk); // charged; a debt is noticed at the next event
    }
  }
}

const streamHeaders = { 'content-type': 'text/event-stream', connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none' };

export function streamsPlugin(limits: StreamLimits) {
  const state: StreamsState = {
    limits, heartbeatMs: limits.heartbeatMs ?? 12_000, cutGraceMs: limits.cutGraceMs ?? 5_000,
    pending: new SharedPending(), counters: { streams: 0, executions: 0, slowConsumers: 0 },
  };
  const processor = (req: IncomingMessage, res: ServerResponse) => (results: AsyncIterable<ExecutionResult>, fetchAPI: FetchApi) => {
    const stream = new EventStream(req, res, results[Symbol.asyncIterator](), state);
    const body = stream.body(fetchAPI);
    void stream.pump();
    return new fetchAPI.Response(body, { status: 200, headers: streamHeaders });
  };
  const plugin: Plugin = {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(sharedSubscribe(state.counters) as Parameters<typeof setSubscribeFn>[0]);
    },
    onResultProcess({ result, acceptableMediaTypes, setResultProcessor, serverContext }) {
      const { req, res } = serverContext as { req?: IncomingMessage; res?: ServerResponse };
      if (!req || !res || Array.isArray(result) || !(Symbol.asyncIterator in result)) return;
      if (!acceptableMediaTypes.includes('text/event-stream')) return;
      setResultProcessor(processor(req, res) as never, 'text/event-stream');
    },
  };
  const { counters, pending } = state;
  return {
    plugin,
    stats: (): StreamStats => ({ streams: counters.streams, pendingBytes: pending.total, executions: counters.executions, slowConsumers: counters.slowConsumers }),
  };
}
