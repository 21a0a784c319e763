import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { waitFor } from './wait.ts';

/** A request a webhook receiver got. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (undefined for an empty body). */
  json: any;
}

/** How the receiver answers its n-th request (0-based): a status code, or `hang` to never answer. */
export type Behaviour = (req: Received, n: number) => number | 'hang';

/** A real HTTP server on 127.0.0.1 that records what webhooks send it. */
export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Requests whose answer is being held (`hang`). */
  hanging: number;
  respond(behaviour: Behaviour): void;
  /** Waits until at least `n` requests arrived and returns them. */
  waitForRequests(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver; `port` reuses a fixed port (a receiver coming back after being down). */
export async function startReceiver(port = 0): Promise<Receiver> {
  let behaviour: Behaviour = () => 200;
  const held = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    hanging: 0,
    respond(b) {
      behaviour = b;
    },
    async waitForRequests(n, timeoutMs = 10_000) {
      try {
        return await waitFor(() => receiver.requests.length >= n && receiver.requests.slice(), { timeoutMs, what: `${n} webhook request(s) at ${receiver.url}` });
      } catch (err) {
        // How far it got tells a slow delivery from a lost event.
        throw new Error(`${(err as Error).message}: ${receiver.requests.length} arrived`);
      }
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const received: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
      const n = receiver.requests.length;
      receiver.requests.push(received);
      const answer = behaviour(received, n);
      if (answer === 'hang') {
        held.add(res);
        receiver.hanging++;
        res.on('close', () => {
          held.delete(res);
          receiver.hanging--;
        });
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  receiver.port = typeof address === 'object' && address ? address.port : 0;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
