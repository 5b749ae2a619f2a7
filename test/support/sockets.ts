import { connect, type Socket } from 'node:net';

// Raw TCP clients for the connection tests: slow, idle or greedy clients from any loopback address
// (Linux routes all of 127/8 to lo, so 127.0.0.2 is a second client next to 127.0.0.1).

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses one HTTP/1.1 response (Content-Length or chunked); null when `data` holds none. */
export function parseResponse(data: string): RawResponse | null {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const [statusLine, ...lines] = data.slice(0, headEnd).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let body = data.slice(headEnd + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, lineEnd), 16);
      if (!(size > 0)) break;
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = decoded;
  } else if (headers['content-length'] !== undefined) {
    body = body.slice(0, Number(headers['content-length']));
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

export interface RawClient {
  socket: Socket;
  /** Resolves once connected. */
  connected: Promise<void>;
  /** Everything received so far (latin1). */
  received(): string;
  /** Resolves with everything received once the server closes the connection (or it fails). */
  closed: Promise<string>;
  /** Writes `chunk` every `everyMs` until the connection closes. */
  trickle(chunk: string, everyMs: number): void;
  destroy(): void;
}

export function openClient(port: number, localAddress = '127.0.0.1', first?: string): RawClient {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let data = '';
  let timer: NodeJS.Timeout | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => { data += chunk; });
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      if (first !== undefined) socket.write(first);
      resolve();
    });
    socket.once('error', reject);
  });
  connected.catch(() => {});
  const closed = new Promise<string>((resolve) => {
    socket.on('error', () => {}); // a reset counts as closed
    socket.once('close', () => {
      clearInterval(timer);
      resolve(data);
    });
  });
  return {
    socket,
    connected,
    received: () => data,
    closed,
    trickle(chunk, everyMs) {
      timer = setInterval(() => {
        if (socket.writable) socket.write(chunk);
      }, everyMs);
    },
    destroy: () => socket.destroy(),
  };
}

/** One request on a fresh connection from `localAddress`; resolves with the response once the server closes. */
export async function exchange(port: number, request: string, localAddress = '127.0.0.1'): Promise<RawResponse | null> {
  const client = openClient(port, localAddress, request);
  return parseResponse(await client.closed);
}
