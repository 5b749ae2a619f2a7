import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import Negotiator from 'negotiator';

// GraphiQL's page is 9 MB of HTML, the same for every request (yoga renders it from fixed options): it is
// fetched from yoga once and each coding compressed once, the first time it is asked for,
// then served from memory. Compressing it on every load took ~130 ms of CPU per request, which anyone can
// ask for. The coding is negotiated from Accept-Encoding (q-values) like every other answer's
// (src/server/http.ts' compressor, the same `negotiator`).

interface Page {
  body: Buffer;
  headers: Record<string, string>;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export type GraphiqlHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Whether yoga would answer this request with GraphiQL's page (its own test: GET accepting text/html). */
export const wantsGraphiql = (req: IncomingMessage) => req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');

export function graphiqlPage(render: () => Promise<Page>, options: { compress: boolean }): GraphiqlHandler {
  let page: Promise<Page> | undefined;
  const coded = new Map<string, Promise<Buffer>>();
  const encode = (coding: 'br' | 'gzip', body: Buffer) => {
    let pending = coded.get(coding);
    if (!pending) {
      pending = coding === 'br'
        ? brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
        : gzipAsync(body, { level: 6 });
      coded.set(coding, pending);
      pending.catch(() => coded.delete(coding)); // tried again by the next request
    }
    return pending;
  };
  return (req, res) => {
    req.resume();
    page ??= render().catch((error: unknown) => {
      page = undefined;
      throw error;
    });
    // (negotiator takes the server's preference for ties; its typings lack that parameter)
    const negotiator = new Negotiator(req) as unknown as { encoding(available: string[], preferred: string[]): string | undefined };
    const coding = options.compress ? negotiator.encoding(['br', 'gzip', 'identity'], ['br', 'gzip']) : 'identity';
    page.then(async ({ body, headers }) => {
      const sent = coding === 'br' || coding === 'gzip' ? await encode(coding, body) : body;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      const vary = res.getHeader('vary');
      res.setHeader('vary', `${vary ? `${String(vary)}, ` : ''}Accept${options.compress ? ', Accept-Encoding' : ''}`);
      if (sent !== body) res.setHeader('content-encoding', coding!);
      res.setHeader('content-length', sent.length);
      res.writeHead(200);
      res.end(sent);
    }).catch(() => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ errors: [{ message: 'GraphiQL is unavailable', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
    });
  };
}
