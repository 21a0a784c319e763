import net from 'node:net';

/** What clients sent through a `PgWireProxy`, in order. */
export interface PgWireLog {
  /** The texts of simple queries: transaction control (`BEGIN`, `COMMIT`, …) and `SET`s travel so. */
  queries: string[];
  /** Statements executed through the extended protocol (Execute messages): parameterized statements. */
  executes: number;
}

/**
 * A TCP proxy in front of a PostgreSQL server that reads the frontend messages passing through it.
 * Tests point a driver at `url` to see which transaction control and how many statements a piece of
 * Cairn sends: behaviour that answers the same either way (a statement in a transaction of its own or
 * alone) but costs round trips.
 */
export class PgWireProxy {
  readonly log: PgWireLog = { queries: [], executes: 0 };
  private readonly sockets = new Set<net.Socket>();
  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {}

  static async start(targetUrl: string): Promise<PgWireProxy> {
    const target = new URL(targetUrl);
    let proxy: PgWireProxy | undefined;
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      proxy!.sockets.add(client).add(upstream);
      const read = proxy!.reader();
      client.on('data', (chunk) => {
        read(chunk);
        upstream.write(chunk);
      });
      upstream.on('data', (chunk) => client.write(chunk));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(targetUrl);
    url.hostname = '127.0.0.1';
    url.port = String((server.address() as net.AddressInfo).port);
    proxy = new PgWireProxy(server, url.toString());
    return proxy;
  }

  /** Forgets what was sent so far. */
  reset(): void {
    this.log.queries.length = 0;
    this.log.executes = 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A parser for one connection's frontend stream: the startup packet (no type byte), then typed messages. */
  private reader(): (chunk: Buffer) => void {
    let buffer = Buffer.alloc(0);
    let started = false;
    return (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          // An SSL or GSS encryption request is answered before the real startup packet follows.
          started = code !== 80877103 && code !== 80877104;
          buffer = buffer.subarray(length);
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) return;
        const type = String.fromCharCode(buffer[0]);
        if (type === 'Q') this.log.queries.push(buffer.subarray(5, 1 + length).toString('utf8').replace(/\0$/, ''));
        else if (type === 'E') this.log.executes++;
        buffer = buffer.subarray(1 + length);
      }
    };
  }
}
