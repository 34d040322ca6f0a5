import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';

/** A raw connection to the test server, and a promise that settles when the server closes it. */
async function open(server: TestServer): Promise<{ socket: Socket; closed: Promise<number>; received: () => string }> {
  const { port } = new URL(server.baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const opened = performance.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - opened)));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, closed, received: () => text };
}

describe('slow and greedy clients', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ env: { HEADERS_TIMEOUT_SECONDS: '1', REQUEST_TIMEOUT_SECONDS: '2', KEEP_ALIVE_TIMEOUT_SECONDS: '1', MAX_CONNECTIONS_PER_IP: '20' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('closes a connection whose headers take longer than HEADERS_TIMEOUT_SECONDS', async () => {
    const { socket, closed } = await open(server);
    socket.write('GET /api/alive HTTP/1.1\r\nHost: x\r\n');
    expect(await closed).toBeLessThan(4000);
  });

  it('answers 408 and closes a body dripping past REQUEST_TIMEOUT_SECONDS', async () => {
    const { socket, closed, received } = await open(server);
    socket.write('POST /identity/accounts/prelogin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{');
    const drip = setInterval(() => socket.writable && socket.write(' '), 300);
    try {
      expect(await closed).toBeLessThan(5000);
    } finally {
      clearInterval(drip);
    }
    expect(received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes an idle kept-alive connection after KEEP_ALIVE_TIMEOUT_SECONDS', async () => {
    const { socket, closed, received } = await open(server);
    socket.write('GET /api/alive HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await closed).toBeLessThan(4000);
    expect(received()).toMatch(/^HTTP\/1\.1 200/);
  });

  it('closes connections past MAX_CONNECTIONS_PER_IP from one address, and serves again once they go', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => open(server)));
    const extra = await open(server);
    extra.socket.write('GET /api/alive HTTP/1.1\r\nHost: x\r\n\r\n');
    await extra.closed;
    expect(extra.received()).toBe('');
    for (const { socket } of held) socket.destroy();
    await Promise.all(held.map((h) => h.closed));
    const res = await server.request('GET', '/api/alive');
    expect(res.status).toBe(200);
  });
});
