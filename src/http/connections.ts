import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';

/**
 * Closes, when the server closes, the connections that never sent a request. Node's `server.close()`
 * closes idle keep-alive connections itself but waits for these until the headers timeout (a minute
 * or more): clients open them ahead of time (browsers preconnect; an EventSource that is closed while
 * reconnecting leaves one), and shutdown must not wait on them.
 */
export function closeUnusedConnections(app: FastifyInstance): void {
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (req: { socket: Socket }) => unused.delete(req.socket));
  app.addHook('preClose', (done) => {
    for (const socket of unused) socket.destroy();
    done();
  });
}
