// npx tsx bench/accept-rate.ts [--busy-ms 60] [--pending 300] [--seconds 3]
//
// How many pending connections Node accepts per event-loop turn. A listener whose loop is kept busy
// --busy-ms per turn (a timer that spins, as the gateway's work does under load) is sent --pending
// connections at once; after --seconds it prints how many it accepted and how many loop turns ran. On Node 20
// (libuv 1.46) it is one accepted connection per turn, whatever is pending: a client that opens a new
// connection waits behind every connection queued before it in the kernel's accept queue, one turn each
// (bench/README.md says what that did and did not explain under the soak's reconnecting attacks). Nothing is
// asserted; the figures are printed.
import net from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'busy-ms': { type: 'string', default: '60' },
    pending: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '3' },
  },
});
const busyMs = Number(values['busy-ms']);
const pending = Number(values.pending);
const seconds = Number(values.seconds);

let accepted = 0;
let turns = 0;
const server = net.createServer((socket) => {
  accepted++;
  socket.destroy();
});
await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4_096 }, resolve));
const { port } = server.address() as net.AddressInfo;
const spin = setInterval(() => {
  turns++;
  const until = performance.now() + busyMs;
  while (performance.now() < until);
}, 0);
const clients = Array.from({ length: pending }, () => net.connect(port, '127.0.0.1').on('error', () => {}));
await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
clearInterval(spin);
console.log(JSON.stringify({
  node: process.version, libuv: process.versions.uv, busyMsPerTurn: busyMs, pending, seconds,
  turns, accepted, acceptedPerTurn: Math.round((accepted / Math.max(1, turns)) * 100) / 100,
}));
for (const c of clients) c.destroy();
server.close();
