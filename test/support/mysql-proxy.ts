import { connect, createServer, type Server, type Socket } from 'node:net';

// A TCP proxy in front of a MySQL/MariaDB server that records the statements its clients send (text
// protocol COM_QUERY packets): what a process asks of the source, counted on the wire.

export interface MysqlProxy {
  port: number;
  /** the statements sent since the last reset, in order */
  statements(): string[];
  reset(): void;
  close(): Promise<void>;
}

/** COM_QUERY: the first byte of a command packet (sequence id 0) that carries a statement's text. */
const comQuery = 0x03;

function recordQueries(from: Socket, onStatement: (sql: string) => void): void {
  let buf = Buffer.alloc(0);
  from.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 4) {
      const len = buf.readUIntLE(0, 3);
      if (buf.length < 4 + len) break;
      // the handshake response and authentication packets have a sequence id above 0
      if (buf[3] === 0 && buf[4] === comQuery) onStatement(buf.subarray(5, 4 + len).toString('utf8'));
      buf = buf.subarray(4 + len);
    }
  });
}

export async function startMysqlProxy(upstream: { host: string; port: number }): Promise<MysqlProxy> {
  let seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const up = connect({ host: upstream.host, port: upstream.port });
    for (const s of [client, up]) { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}); }
    recordQueries(client, (sql) => seen.push(sql));
    client.pipe(up);
    up.pipe(client);
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    statements: () => [...seen],
    reset: () => { seen = []; },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
