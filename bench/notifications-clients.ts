/**
 * The client side of bench/notifications.ts, in its own process (its own event loop and file
 * descriptors): many raw WebSocket hub connections speaking the MessagePack hub protocol as the
 * apps' SignalR client does (handshake, a Ping every 10 s so the server never times them out),
 * timing each ReceiveMessage from the `SentAt` the benchmark put in its payload.
 *
 * Driven over IPC: {connect: {url, tokens, perToken}} → {ready, failed}; {report} → {latencies}.
 */
import { performance } from 'node:perf_hooks';
import { decode } from '@msgpack/msgpack';
import { WebSocket } from 'ws';

const PING = Uint8Array.of(0x02, 0x91, 0x06);
const now = () => performance.timeOrigin + performance.now();

let latencies: number[] = [];
const sockets: WebSocket[] = [];

function onFrame(data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    let length = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = data[offset++] ?? 0;
      length += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    const message = decode(data.subarray(offset, offset + length)) as unknown[];
    offset += length;
    if (message[0] === 1 && message[3] === 'ReceiveMessage') {
      const argument = (message[4] as { Payload?: { SentAt?: number } }[])[0];
      const sentAt = argument?.Payload?.SentAt;
      if (typeof sentAt === 'number') latencies.push(now() - sentAt);
    }
  }
}

function open(url: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    let handshaken = false;
    ws.on('open', () => ws.send('{"protocol":"messagepack","version":1}\u001e'));
    ws.on('message', (data: Buffer) => {
      if (!handshaken) {
        handshaken = true;
        sockets.push(ws);
        resolve(true);
        const rest = data.subarray(data.indexOf(0x1e) + 1);
        if (rest.length > 0) onFrame(rest);
        return;
      }
      onFrame(data);
    });
    ws.on('error', () => resolve(false));
    ws.on('close', () => resolve(false));
  });
}

process.on('message', (message: { connect?: { url: string; tokens: string[]; perToken: number }; report?: true; reset?: true; exit?: true }) => {
  if (message.connect) {
    const { url, tokens, perToken } = message.connect;
    void (async () => {
      let failed = 0;
      const jobs: (() => Promise<boolean>)[] = [];
      for (const token of tokens) for (let i = 0; i < perToken; i++) jobs.push(() => open(url, token));
      // 200 upgrades in flight at a time: a burst of 10,000 would only measure the accept queue.
      for (let i = 0; i < jobs.length; i += 200) {
        const results = await Promise.all(jobs.slice(i, i + 200).map((job) => job()));
        failed += results.filter((ok) => !ok).length;
      }
      process.send?.({ ready: sockets.length, failed });
    })();
  }
  if (message.reset) latencies = [];
  if (message.report) process.send?.({ latencies });
  if (message.exit) {
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  }
});

// The SignalR client pings every 15 s once it hears the server; each socket here pings every 10 s,
// a hundredth of them every 100 ms, as independent apps would (not all in one burst).
let nextPing = 0;
setInterval(() => {
  const count = Math.ceil(sockets.length / 100);
  for (let i = 0; i < count && sockets.length > 0; i++) {
    const ws = sockets[nextPing++ % sockets.length];
    if (ws?.readyState === WebSocket.OPEN) ws.send(PING);
  }
}, 100).unref();
process.send?.({ started: true });
setInterval(() => undefined, 1 << 30);
