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
 * The server's connections, to close those that have not sent a request yet when the server closes.
 * Node's `server.close()` closes idle keep-alive connections but waits for these until the headers
 * timeout (a minute or more): clients open them ahead of time (browsers preconnect; an EventSource
 * closed while it reconnects leaves one), and shutdown must not wait on them. A connection that has
 * sent nothing has read no byte, so the set alone tells them apart; one listener per connection, no
 * closure, and none per request: a new connection per request (as PocketBase's benchmark sends them)
 * pays for this on every request.
 */
export function trackConnections(server: http.Server): Connections {
  const open = new Set<Socket>();
  function forget(this: Socket): void {
    open.delete(this);
  }
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', forget);
  });
  return {
    get count() {
      return open.size;
    },
    closeUnused() {
      for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}
