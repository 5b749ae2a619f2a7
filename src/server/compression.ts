import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants } from 'node:zlib';
import compression from 'compression';

// Response compression for every surface: expressjs' `compression` (node's zlib: brotli, gzip, deflate),
// which negotiates the coding from Accept-Encoding with its q-values (`negotiator`), skips bodies under
// the threshold, HEAD, 204/304 and `Cache-Control: no-transform`, adds `Vary: Accept-Encoding`, and
// streams (a 9 MB GraphiQL page is compressed as it is written). Only the bytes on the wire change: a
// JSON-RPC answer decompresses to exactly the bytes sent uncompressed.
//
// A strong ETag names one representation, so a compressed answer's tag gets the coding as a suffix
// ("key" → "key-br"); If-None-Match accepts every coding's tag of the same answer (src/cache/etag.ts).

export interface CompressionSettings {
  /** Bodies smaller than this are sent as they are (compressing them costs more than it saves). */
  minBytes: number;
}

export function compressor(settings: CompressionSettings): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const compress = compression({
    threshold: settings.minBytes,
    // brotli quality 5 and gzip level 6: within a few per cent of the best ratio on JSON for a fraction of
    // the time (quality 11 takes seconds on the GraphiQL page)
    brotli: { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } },
    level: 6,
    // never an event stream (subscriptions): a compressor holds events back until its buffer fills (yoga's
    // `content-encoding: none` on them keeps compression off too; this does not depend on it)
    filter: (req, res) => !String(res.getHeader('content-type') ?? '').startsWith('text/event-stream') && compression.filter(req, res),
  });
  return (req, res, next) => {
    // runs after compression's own header hook (which sets Content-Encoding) and before the headers go out
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      const coding = this.getHeader('content-encoding');
      const etag = this.getHeader('etag');
      if (typeof coding === 'string' && coding !== 'identity' && typeof etag === 'string' && /^"[^"]*"$/.test(etag)) {
        this.setHeader('etag', `${etag.slice(0, -1)}-${coding}"`);
      }
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
    compress(req as never, res as never, next);
  };
}
