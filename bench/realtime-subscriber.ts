// `node --import tsx bench/realtime-subscriber.ts URL COUNT TOPIC`: COUNT realtime clients of a Cairn
// server, each subscribed to TOPIC as a guest, for the create-realtime bench case. Commands on stdin,
// one per line, each answered with one JSON line on stdout:
//   status  → {received, drops, lastEventAt}
//   report  → {received, drops, histogram: [[latency ms, count], …]} (then both are reset)
// A line `ready` is printed once every client is subscribed. Latency is the time from the record's
// `created` (set by Cairn just before the write's transaction) to the event's arrival here, on the same
// machine's clock. A stream that ends is counted as a drop, then connected and subscribed again, as the
// PocketBase SDK does. Parsing is minimal, so that this process keeps up with the server.
import http from 'node:http';
import { createInterface } from 'node:readline';

const [url, countText, topic] = process.argv.slice(2);
const { hostname, port } = new URL(url);
const postAgent = new http.Agent({ keepAlive: true, maxSockets: 32 });
const CREATED = '"created":"';

let received = 0;
let drops = 0;
let lastEventAt = 0;
let histogram = new Map<number, number>();

function subscribe(clientId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ clientId, subscriptions: [topic] });
    const req = http.request({ host: hostname, port, method: 'POST', path: '/api/realtime', agent: postAgent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`subscribe answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function onMessage(block: string): void {
  const at = block.indexOf(CREATED);
  if (at === -1) return;
  const now = Date.now();
  const created = Date.parse(block.slice(at + CREATED.length, at + CREATED.length + 24));
  const ms = Math.max(0, now - created);
  histogram.set(ms, (histogram.get(ms) ?? 0) + 1);
  received++;
  lastEventAt = now;
}

/** One client: resolves once subscribed; reconnects by itself when its stream ends. */
function client(): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let subscribed = false;
    const req = http.get({ host: hostname, port, path: '/api/realtime', agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!subscribed && block.includes('event:PB_CONNECT')) {
            subscribed = true;
            const clientId = /"clientId":"(\w+)"/.exec(block)![1];
            subscribe(clientId).then(resolve, reject);
          } else onMessage(block);
        }
      });
      res.on('close', () => {
        if (!subscribed) return reject(new Error('stream closed before PB_CONNECT'));
        drops++;
        setTimeout(() => void client().catch(() => drops++), 200);
      });
    });
    req.on('error', reject);
  });
}

const count = Number(countText);
for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, client));
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'status') process.stdout.write(`${JSON.stringify({ received, drops, lastEventAt })}\n`);
  else if (line === 'report') {
    process.stdout.write(`${JSON.stringify({ received, drops, histogram: [...histogram] })}\n`);
    histogram = new Map();
    received = 0;
  }
}
process.exit(0);
