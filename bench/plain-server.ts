// The calibration server of `npm run bench`: a plain node:http server that answers a POST by running one
// scenario's captured statements (bench/lib/floor.ts: its waves in order, a wave's statements together)
// through postgres.js and sending the rows back as JSON. No GraphQL, no JSON-RPC, no loaders, no
// validation: what any hand-written HTTP service pays for the same SQL on this machine. The issue puts
// such a server at about 0.5× of pgbench here; the gateway is held to 0.4× of the floor.
//
// Started by bench/run.ts as a child: `tsx bench/plain-server.ts <captures.json> <database-url> <pool>`,
// where captures.json maps a URL path (/0, /1, …) to a capture. It prints `listening <port>` when ready.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { asGateway, floorPool, type Capture } from './lib/floor.js';

const [file, url, pool] = process.argv.slice(2);
if (!file || !url) {
  console.error('usage: tsx bench/plain-server.ts <captures.json> <database-url> [pool]');
  process.exit(2);
}
const captures = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Capture>;
const sql = floorPool(url, Number(pool ?? 10));
// as the floor's replayer (prepared, extended protocol), but keeping each statement's rows: a server sends them
const runs = new Map(Object.entries(captures).map(([path, capture]) => {
  const waves = capture.waves.map((w) => w.map((s) => ({ text: s.text, params: s.params as never[] })));
  return [path, async () => {
    const out: unknown[] = [];
    for (const wave of waves) out.push(await Promise.all(wave.map((s) => sql.unsafe(s.text, s.params, asGateway))));
    return out;
  }] as const;
}));

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const run = runs.get(req.url ?? '');
    if (!run) {
      res.writeHead(404).end();
      return;
    }
    JSON.parse(Buffer.concat(chunks).toString('utf8')); // a server reads its request
    run().then(
      (rows) => {
        const text = JSON.stringify({ result: rows });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
      () => {
        res.writeHead(500).end();
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening ${(server.address() as { port: number }).port}`);
});
process.on('SIGTERM', () => {
  server.close();
  void sql.end({ timeout: 2 }).then(() => process.exit(0));
});
