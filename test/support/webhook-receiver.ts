import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver took. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
  /** What the receiver answered: a status, or 'hang' when it never did. */
  answer: number | 'hang';
}

/** What to answer the nth request (from 1): a status, or 'hang' to never answer. */
export type Behavior = (request: { n: number; body: string; headers: IncomingHttpHeaders }) => number | 'hang';

/**
 * A local HTTP server standing in for a webhook, Slack, Teams, HEC or Datadog endpoint: it
 * records every request and answers as `behavior` says (change it at any time).
 */
export async function startReceiver(behavior: Behavior = () => 200): Promise<{
  url: string;
  received: Received[];
  /** Requests answered 2xx. */
  accepted(): Received[];
  setBehavior(next: Behavior): void;
  close(): Promise<void>;
}> {
  let current = behavior;
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = current({ n: received.length + 1, body, headers: req.headers });
      received.push({ headers: req.headers, body, path: req.url ?? '/', answer });
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'no');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    accepted: () => received.filter((r) => r.answer !== 'hang' && r.answer < 300),
    setBehavior(next) {
      current = next;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits until `check` holds, or fails after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 20_000, what = 'the condition'): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}
