import { AsyncResource } from 'node:async_hooks';
import { IncomingMessage, ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

/** Runs just before a response's status line and headers are written; `status` is the one about to go out. */
export type HeadHook = (res: GatewayResponse, status: number) => void;

/**
 * The listener's response class (createServer's `ServerResponse` option): a layer that must adjust headers
 * once they are final (compression's ETag and Vary) registers a hook here instead of replacing writeHead.
 */
export class GatewayResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  private headHooks: HeadHook[] | undefined;

  /** Adds `hook`, run once when the headers are written (by writeHead, or implicitly by write/end). */
  beforeHead(hook: HeadHook): void {
    (this.headHooks ??= []).push(hook);
  }

  override writeHead(status: number, ...rest: unknown[]): this {
    const hooks = this.headHooks;
    if (!hooks) return (super.writeHead as (status: number, ...rest: unknown[]) => this)(status, ...rest);
    this.headHooks = undefined;
    // the headers given here are set first, so that the hooks see the response's final headers
    const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
    setHeaders(this, rest[reason === undefined ? 0 : 1] as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined);
    this.statusCode = status;
    for (const hook of hooks) hook(this, status);
    return reason === undefined ? super.writeHead(this.statusCode) : super.writeHead(this.statusCode, reason);
  }
}

function setHeaders(res: ServerResponse, headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): void {
  if (Array.isArray(headers)) {
    if (headers.length && Array.isArray(headers[0])) for (const [k, v] of headers as unknown as [string, string][]) res.setHeader(k, v);
    else for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1]!);
  } else if (headers) {
    for (const k of Object.keys(headers)) if (k) res.setHeader(k, headers[k]!);
  }
}

/**
 * The listener's request class (createServer's `IncomingMessage` option). Its own events ('data', 'end')
 * come from the socket's async context; once bound, they run in the context its handler was called in, so
 * that work started on 'end' (the JSON-RPC layer, yoga's body reader) keeps that handler's context.
 */
export class GatewayRequest extends IncomingMessage {
  private context: AsyncResource | undefined;

  /** Binds this request's events from now on to the current async context. */
  bindEvents(): void {
    this.context ??= new AsyncResource('igw.request');
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const context = this.context;
    return context ? context.runInAsyncScope(super.emit, this, event, ...args) : super.emit(event, ...args);
  }
}
