import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Stops the server on SIGTERM or SIGINT: no new connections, in-flight requests finish, then the
 * database closes and the process exits 0; past `timeoutSeconds`, or on a second signal, it exits
 * 1 anyway.
 *
 * Node's server.close() ends kept-alive connections once they are idle, but not one that was
 * opened and never carried a request (a browser's preconnect, a TLS handshake left waiting):
 * that one held the drain until the timeout. So the connections are tracked here, and once no
 * request is in progress every remaining one is closed. WebSockets are left to the hub, which
 * closes them on app.close() with a SignalR Close message (src/features/notifications/hub.ts).
 */
export function stopOnSignals(app: FastifyInstance, closeResources: () => Promise<void>, timeoutSeconds: number): void {
  const connections = trackConnections(app.server);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C means "now": the operator does not want to wait for the drain.
      app.log.warn({ signal }, 'stopping at once: a second signal while draining');
      process.exit(1);
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new connections; draining in-flight requests');
    const force = setTimeout(() => {
      app.log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, timeoutSeconds * 1000);
    force.unref();
    const closing = app.close();
    connections.closeWhenIdle();
    closing
      .then(closeResources)
      .then(() => {
        app.log.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function trackConnections(server: Server): { closeWhenIdle(): void } {
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let closing = false;
  const closeAllIfIdle = () => {
    if (!closing || inFlight > 0) return;
    for (const socket of sockets) {
      // end() lets a response still in the socket's buffer go out; destroy() is for peers that never close.
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    }
  };
  // 'connection' gives the TCP socket also under TLS, so a handshake never finished is seen too.
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // An upgraded socket is the notifications hub's WebSocket: the hub closes it on app.close()
  // (preClose) with a Close message that lets the apps reconnect; ending it here would cut it first.
  server.on('upgrade', (_request, socket: Socket) => sockets.delete(socket));
  server.on('request', (_request, response) => {
    inFlight += 1;
    response.once('close', () => {
      inFlight -= 1;
      closeAllIfIdle();
    });
  });
  return {
    closeWhenIdle() {
      closing = true;
      closeAllIfIdle();
    },
  };
}
