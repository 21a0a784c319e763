import type http from 'node:http';
import type { Socket } from 'node:net';

export interface Connections {
  /** Open connections, with a request or without. */
  readonly count: number;
  /**
   * Closes the connections that have not sent a byte yet. One whose request has begun to arrive is
   * left to finish it and be answered (its answer closes it).
   */
  closeUnused(): void;
}

/**
 * The server's connections, and among them those that have not sent a request yet, to close when the
 * server closes. Node's `server.close()` closes idle keep-alive connections but waits for these until
 * the headers timeout (a minute or more): clients open them ahead of time (browsers preconnect; an
 * EventSource closed while it reconnects leaves one), and shutdown must not wait on them.
 */
export function trackConnections(server: http.Server): Connections {
  const open = new Set<Socket>();
  const unused = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    unused.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      unused.delete(socket);
    });
  });
  server.on('request', (req: http.IncomingMessage) => unused.delete(req.socket));
  return {
    get count() {
      return open.size;
    },
    closeUnused() {
      for (const socket of unused) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}
