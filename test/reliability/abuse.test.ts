/**
 * Slow and abusive clients: slow headers, slow bodies, oversize bodies and a flood of
 * connections from one address, while a well-behaved client (from another loopback address,
 * 127.0.0.2) keeps calling; its latency is printed and must stay low.
 *
 * The time limits themselves (headers, body, keep-alive) are tested in
 * src/http/connection-limits.test.ts.
 */
import { connect, type Socket } from 'node:net';
import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { httpRequest, startTestServer, type TestServer } from '../support/test-server.js';


let server: TestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});
/** Connects from 127.0.0.2 (undici's own `connect.localAddress` is not honoured, so the socket is made here). */
const wellBehaved = new Agent({
  connections: 1,
  connect: (options, callback) => {
    const socket = connect({ host: options.hostname, port: Number(options.port), localAddress: '127.0.0.2' });
    socket.once('connect', () => callback(null, socket));
    socket.once('error', (error) => callback(error, null));
  },
});
afterAll(async () => wellBehaved.close());

/** A raw connection from 127.0.0.1; `closed` settles when the server ends it. */
function open(baseUrl: string): Promise<{ socket: Socket; closed: Promise<number> }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const opened = Date.now();
    const socket = connect({ host: hostname, port: Number(port) });
    sockets.push(socket);
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - opened)));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** Trickles `text` one byte per `everyMs` until the socket closes or the text ends. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  // Each connection starts at a random point of the interval, as independent clients would.
  const start = setTimeout(() => {
    timer = setInterval(() => {
      if (socket.destroyed || i >= text.length) return clearInterval(timer);
      socket.write(text[i++] as string);
    }, everyMs);
  }, Math.random() * everyMs);
  socket.once('close', () => {
    clearTimeout(start);
    clearInterval(timer);
  });
}

/** `count` sequential calls of the well-behaved client; answers their latencies (ms), checking each is answered 200. */
async function latencies(baseUrl: string, count = 20): Promise<{ p50: number; max: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await httpRequest(baseUrl, 'GET', '/api/alive', {}, wellBehaved);
    times.push(performance.now() - started);
    expect(res.status).toBe(200);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)] as number, max: times[times.length - 1] as number };
}

/** Under load the well-behaved client's median and slowest call stay within these (generous bounds for a busy CI machine). */
const RESPONSIVE_P50_MS = 250;
const RESPONSIVE_MAX_MS = 3000;

function report(what: string, l: { p50: number; max: number }): void {
  console.log(`abuse: ${what}: a well-behaved client's latency p50 ${l.p50.toFixed(1)} ms, max ${l.max.toFixed(1)} ms`);
  expect(l.p50).toBeLessThan(RESPONSIVE_P50_MS);
  expect(l.max).toBeLessThan(RESPONSIVE_MAX_MS);
}

const SLOW_HEADERS = 'GET /api/alive HTTP/1.1\r\nHost: x\r\nX-Padding: ' + 'a'.repeat(200);
/** The headers of a JSON body to an anonymous route (prelogin), and the start of the body. */
const slowBody = (bytes: number) => `POST /identity/accounts/prelogin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n{"email":"`;

describe('slow and abusive clients', () => {
  it('keeps answering while 200 connections send their headers a byte at a time', async () => {
    server = await startTestServer();
    for (let i = 0; i < 200; i++) trickle((await open(server.baseUrl)).socket, SLOW_HEADERS, 200);
    report('200 slow-header connections', await latencies(server.baseUrl));
  });

  it('keeps answering while 1,000 connections declare a 60 KB body (under the anonymous limit) and send a byte every second', async () => {
    server = await startTestServer();
    const slow = await Promise.all(Array.from({ length: 1000 }, () => open(server!.baseUrl)));
    for (const { socket } of slow) {
      socket.write(slowBody(60 * 1024));
      trickle(socket, 'A'.repeat(1000), 1000);
    }
    report('1,000 slow-body connections', await latencies(server.baseUrl));
  }, 60_000);

  it('refuses an oversize body with a 400 naming it, and stays responsive while such bodies arrive', async () => {
    server = await startTestServer({ env: { BODY_LIMIT_BYTES: String(64 * 1024) } });
    const big = JSON.stringify({ email: 'A'.repeat(200 * 1024) });
    const refused = await Promise.all(Array.from({ length: 20 }, () => server!.request('POST', '/identity/accounts/prelogin', { body: big, headers: { 'content-type': 'application/json' } })));
    for (const res of refused) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ object: 'error', message: 'The request body is too large.' });
    }
    // Declared too large: refused from the header, without reading the body.
    const { socket, closed } = await open(server.baseUrl);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write(slowBody(100 * 1024 * 1024));
    await Promise.race([closed, new Promise((r) => setTimeout(r, 3000))]);
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('The request body is too large.');
    report('oversize bodies', await latencies(server.baseUrl));
  });

  it('keeps answering another address while one address holds 1,000 idle connections', async () => {
    server = await startTestServer();
    await Promise.all(Array.from({ length: 1000 }, () => open(server!.baseUrl)));
    report('1,000 idle connections from one address', await latencies(server.baseUrl));
  }, 60_000);

  it('caps the connections of one address at MAX_CONNECTIONS_PER_IP, and serves another address meanwhile', async () => {
    server = await startTestServer({ env: { MAX_CONNECTIONS_PER_IP: '50' } });
    const flood = await Promise.all(Array.from({ length: 300 }, () => open(server!.baseUrl).catch(() => null)));
    // The excess is refused or closed at once; the first 50 stay open.
    const ended = await Promise.all(flood.map((c) => (c ? Promise.race([c.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2000))]) : Promise.resolve(true))));
    expect(ended.filter(Boolean).length).toBeGreaterThanOrEqual(250);
    expect(ended.filter((e) => !e).length).toBeLessThanOrEqual(50);
    report('a capped flood from one address', await latencies(server.baseUrl));
  });
});
