import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSourceEventStream, execute, GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { onSocketClose } from '../socket-close.js';

// Subscriptions' event streams (SSE), bounded and shared (issue 23):
// - fan-out costs once: an event's selection is executed once per distinct (document, operation,
//   variables, paging) among the streams it reaches, and each result is rendered once into bytes that
//   every stream of the group writes (sharedSubscribe, render);
// - bounded memory: each stream takes its events as they come (its rows never wait unrendered) and writes
//   them to its socket itself, counting the bytes not yet flushed to the kernel. A stream with more than
//   SUBSCRIPTIONS_MAX_PENDING_BYTES waiting (one event of any size is let through when nothing waits), or
//   an event that would take all streams' waiting bytes past SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES, gets a
//   last error event (SLOW_CONSUMER) and `complete`, and its connection is cut if it does not take them;
// - the bytes written are charged to the client's byte budget (HTTP_CLIENT_BYTES_PER_S) as they are
//   written; a client in debt is treated as a slow consumer.

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

export function streamsPlugin(limits: StreamLimits) {
  const counters = { executions: 0, slowConsumers: 0 };
  const heartbeatMs = limits.heartbeatMs ?? 12_000;
  const cutGraceMs = limits.cutGraceMs ?? 5_000;
  let streams = 0;
  // chunks handed to a socket and not yet flushed, each counted once however many streams share it
  const inFlight = new Map<Uint8Array, number>();
  let pendingTotal = 0;
  const hold = (chunk: Uint8Array) => {
    const refs = inFlight.get(chunk) ?? 0;
    if (refs === 0) pendingTotal += chunk.byteLength;
    inFlight.set(chunk, refs + 1);
  };
  const release = (chunk: Uint8Array) => {
    const refs = (inFlight.get(chunk) ?? 1) - 1;
    if (refs > 0) return void inFlight.set(chunk, refs);
    inFlight.delete(chunk);
    pendingTotal -= chunk.byteLength;
  };

  /** Writes the events of `results` to `res` itself; the returned stream only opens and closes the response. */
  function processor(req: IncomingMessage, res: ServerResponse) {
    return (results: AsyncIterable<ExecutionResult>, fetchAPI: { ReadableStream: typeof ReadableStream; Response: typeof Response }) => {
      const iterator = results[Symbol.asyncIterator]();
      let pending = 0; // this stream's bytes not yet flushed
      const unflushed = new Set<{ chunk: Uint8Array }>();
      let ended = false;
      let opened = false;
      const waiting: Uint8Array[] = []; // before the response's head is out
      let close: () => void = () => {};
      const closed = new Promise<void>((resolve) => (close = resolve));
      streams += 1;

      /** Writes `chunk` and charges it to the client's budget; true when the client is then in debt. */
      const write = (chunk: Uint8Array): boolean => {
        if (!opened) {
          waiting.push(chunk);
          pending += chunk.byteLength; // waiting counts too
          return false;
        }
        if (res.destroyed || res.writableEnded) return false;
        const entry = { chunk };
        unflushed.add(entry);
        pending += chunk.byteLength;
        hold(chunk);
        res.write(chunk, () => {
          if (!unflushed.delete(entry)) return;
          pending -= chunk.byteLength;
          release(chunk);
        });
        return limits.charge?.(req, chunk.byteLength) ?? false;
      };
      const finish = () => {
        if (ended) return;
        ended = true;
        streams -= 1;
        clearInterval(heartbeat);
        if (!res.destroyed && !res.writableEnded) write(complete);
        close();
        void iterator.return?.()?.catch(() => {});
      };
      const cut = (why: string) => {
        if (ended) return;
        counters.slowConsumers += 1;
        write(slowConsumer(why));
        finish();
        const timer = setTimeout(() => {
          if (!res.writableFinished) req.socket.destroy();
        }, cutGraceMs);
        timer.unref();
        res.once('finish', () => clearTimeout(timer));
      };
      const heartbeat = setInterval(() => {
        if (pending === 0) write(ping);
      }, heartbeatMs);
      heartbeat.unref();

      const pump = async () => {
        try {
          for (;;) {
            const step = await iterator.next();
            if (ended) return;
            if (step.done) return finish();
            const chunk = render(step.value);
            if (pending > 0 && pending + chunk.byteLength > limits.maxPendingBytes) {
              return cut(`the client left more than ${limits.maxPendingBytes} bytes unread (SUBSCRIPTIONS_MAX_PENDING_BYTES)`);
            }
            if (!inFlight.has(chunk) && pendingTotal > 0 && pendingTotal + chunk.byteLength > limits.maxPendingTotalBytes) {
              return cut(`events waiting for slow clients exceed ${limits.maxPendingTotalBytes} bytes (SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES)`);
            }
            if (write(chunk)) return cut('the client has been sent more than its byte budget (HTTP_CLIENT_BYTES_PER_S)');
          }
        } catch {
          finish();
        }
      };
      // the response or its connection gone (a response pipelined behind another never emits 'close'):
      // whatever the socket never flushed is dropped with it
      let detach = () => {};
      const gone = () => {
        detach();
        finish();
        for (const entry of unflushed) release(entry.chunk);
        unflushed.clear();
        pending = 0;
      };
      res.once('close', gone);
      detach = onSocketClose(req.socket, gone);

      const body = new fetchAPI.ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(ping); // some browsers wait for a first byte
        },
        // the first pull comes once the head and the first chunk are out: from then on events go straight to `res`
        async pull(controller) {
          if (!opened) {
            opened = true;
            for (const chunk of waiting.splice(0)) {
              pending -= chunk.byteLength;
              write(chunk); // charged; a debt is noticed at the next event
            }
          }
          await closed;
          controller.close();
        },
        cancel() {
          finish();
        },
      });
      void pump();
      return new fetchAPI.Response(body, {
        status: 200,
        headers: { 'content-type': 'text/event-stream', connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none' },
      });
    };
  }

  const plugin: Plugin = {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(sharedSubscribe(counters) as Parameters<typeof setSubscribeFn>[0]);
    },
    onResultProcess({ result, acceptableMediaTypes, setResultProcessor, serverContext }) {
      const { req, res } = serverContext as { req?: IncomingMessage; res?: ServerResponse };
      if (!req || !res || Array.isArray(result) || !(Symbol.asyncIterator in result)) return;
      if (!acceptableMediaTypes.includes('text/event-stream')) return;
      setResultProcessor(processor(req, res) as never, 'text/event-stream');
    },
  };
  return {
    plugin,
    stats: (): StreamStats => ({ streams, pendingBytes: pendingTotal, executions: counters.executions, slowConsumers: counters.slowConsumers }),
  };
}
