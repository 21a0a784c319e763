import net from 'node:net';

/** What clients sent through a `PgWireProxy`, in order. */
export class PgWireLog {
  /**
   * Simple queries (`Q`) and executions of prepared statements (`E`, named or not, with the SQL they
   * were parsed from), each with the client connection that sent it.
   */
  readonly messages: Array<{ connection: number; type: 'Q' | 'E'; text: string }> = [];

  /** The texts of simple queries: transaction control (`BEGIN`, `COMMIT`, …) and `SET`s travel so. */
  get queries(): string[] {
    return this.messages.filter((m) => m.type === 'Q').map((m) => m.text);
  }

  /** Statements executed through the extended protocol (Execute messages): parameterized statements. */
  get executes(): number {
    return this.messages.filter((m) => m.type === 'E').length;
  }
}

/**
 * A TCP proxy in front of a PostgreSQL server that reads the frontend messages passing through it.
 * Tests point a driver at `url` to see which transaction control and how many statements a piece of
 * Cairn sends: behaviour that answers the same either way (a statement in a transaction of its own or
 * alone) but costs round trips.
 */
export class PgWireProxy {
  readonly log = new PgWireLog();
  private connections = 0;
  private readonly sockets = new Set<net.Socket>();
  /** Client connections accepted so far: a connection a driver opens shows here. */
  get opened(): number {
    return this.connections;
  }

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
    this.log.messages.length = 0;
  }

  /** How many executions of prepared statements matching `statement` were sent, on any connection. */
  executed(statement: RegExp): number {
    return this.log.messages.filter((m) => m.type === 'E' && statement.test(m.text)).length;
  }

  /**
   * The transaction control around the first statement executed that matches `statement`, on its own
   * connection: the BEGIN before it and the COMMIT or ROLLBACK after it, if any (executions in between
   * are passed over). What one piece of work sent, apart from what other connections — a
   * background worker's — sent meanwhile.
   */
  controlAround(statement: RegExp): string[] {
    const at = this.log.messages.findIndex((m) => m.type === 'E' && statement.test(m.text));
    if (at < 0) throw new Error(`no statement matching ${statement} was executed`);
    const own = this.log.messages.filter((m) => m.connection === this.log.messages[at].connection);
    const index = own.indexOf(this.log.messages[at]);
    const control: string[] = [];
    const before = own.slice(0, index).reverse().find((m) => m.type === 'Q');
    if (before && /^BEGIN\b/i.test(before.text)) control.push(before.text);
    const after = own.slice(index + 1).find((m) => m.type === 'Q');
    if (after && /^(COMMIT|ROLLBACK)\b/i.test(after.text)) control.push(after.text);
    return control;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A parser for one connection's frontend stream: the startup packet (no type byte), then typed messages. */
  private reader(): (chunk: Buffer) => void {
    let buffer = Buffer.alloc(0);
    let started = false;
    const connection = ++this.connections;
    const statements = new Map<string, string>();
    const portals = new Map<string, string>();
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
        if (type === 'Q') {
          const text = buffer.subarray(5, 1 + length).toString('utf8').replace(/\0$/, '');
          this.log.messages.push({ connection, type, text });
        } else if (type === 'P') {
          // Parse: the statement's name, then its SQL (NUL-terminated strings); '' names the unnamed one.
          const [name, text] = cStrings(buffer.subarray(5, 1 + length), 2);
          statements.set(name, text);
        } else if (type === 'B') {
          // Bind: the portal's name, then the statement's.
          const [portal, name] = cStrings(buffer.subarray(5, 1 + length), 2);
          portals.set(portal, statements.get(name) ?? '');
        } else if (type === 'E') {
          const [portal] = cStrings(buffer.subarray(5, 1 + length), 1);
          this.log.messages.push({ connection, type, text: portals.get(portal) ?? '' });
        }
        buffer = buffer.subarray(1 + length);
      }
    };
  }
}

/** The first `count` NUL-terminated strings of a message body. */
function cStrings(body: Buffer, count: number): string[] {
  const strings: string[] = [];
  let from = 0;
  for (let i = 0; i < count; i++) {
    const end = body.indexOf(0, from);
    strings.push(body.subarray(from, end).toString('utf8'));
    from = end + 1;
  }
  return strings;
}
