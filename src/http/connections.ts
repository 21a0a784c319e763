import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server's connections that have not sent a request yet, to close when the server closes. Node's
 * `server.close()` closes idle keep-alive connections but waits for these until the headers timeout
 * (a minute or more): clients open them ahead of time (browsers preconnect; an EventSource closed
 * while it reconnects leaves one), and shutdown must not wait on them.
 */
export function unusedConnections(server: http.Server): { closeAll(): void } {
  const unused = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage) => unused.delete(req.socket));
  return {
    closeAll() {
      for (const socket of unused) socket.destroy();
    },
  };
}
