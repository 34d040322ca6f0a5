import type { Server } from 'node:net';

/**
 * Closes connections past `max` open at once from one client address, before any byte of
 * theirs is read, so one client cannot hold the server's sockets and memory (slow or idle
 * connections). 0 turns it off. The address is the socket's: behind a reverse proxy every
 * connection is the proxy's, so `buildApp` does not apply it with TRUST_PROXY.
 */
export function limitConnectionsPerAddress(server: Server, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
