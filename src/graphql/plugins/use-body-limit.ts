import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// GRAPHQL_MAX_BODY_BYTES with yoga's errors and statuses but without its per-request stream pipeline: a body
// with a Content-Length cannot carry more (Node's parser stops there), so only a chunked one is counted.

const tooLarge = () =>
  new GraphQLError('Request body too large', { extensions: { http: { status: 413 }, code: 'REQUEST_ENTITY_TOO_LARGE' } });
const badLength = () =>
  new GraphQLError('Content-Length header is invalid.', { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } });

// a single non-negative integer only (comma-joined values are a request-smuggling pattern)
const contentLengthPattern = /^\d+$/;

/** Register after the request parsers (yoga: with `maxRequestBodySize: false`, as the last plugin). */
export function bodyLimitPlugin(limit: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const contentLength = request.headers.get('content-length');
      if (contentLength != null) {
        if (!contentLengthPattern.test(contentLength)) throw badLength();
        if (Number(contentLength) > limit) throw tooLarge();
        return; // the declared length bounds the body
      }
      if (requestParser == null || request.body == null) return;
      const parse = requestParser;
      setRequestParser((req) => {
        const body = req.body;
        if (!body) return parse(req);
        // a native stream needs the native TransformStream
        const Transform = body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
        let read = 0;
        const counted = body.pipeThrough(new Transform({
          transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>) {
            read += chunk.byteLength;
            if (read > limit) return controller.error(tooLarge());
            controller.enqueue(chunk);
          },
        }));
        return parse(new fetchAPI.Request(req.url, {
          method: req.method, headers: req.headers, signal: req.signal, body: counted, duplex: 'half',
        } as RequestInit));
      });
    },
  };
}
