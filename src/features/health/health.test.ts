import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer | undefined;
let blackhole: Server | undefined;
afterEach(async () => {
  await server?.close().catch(() => undefined);
  server = undefined;
  blackhole?.close();
  blackhole = undefined;
});

/** A port that accepts connections and never answers: a dependency that hangs. */
async function hangingPort(): Promise<number> {
  blackhole = createServer(() => undefined);
  await new Promise<void>((resolve) => blackhole!.listen(0, '127.0.0.1', resolve));
  const address = blackhole.address();
  return typeof address === 'object' && address ? address.port : 0;
}

describe('health endpoints', () => {
  it('are off by default on self-hosted', async () => {
    server = await startTestServer();
    expect((await server.request('GET', '/healthz')).status).toBe(404);
    expect((await server.request('GET', '/api/healthz')).status).toBe(404);
  });

  it('are on by default in the cloud, with a database check', async () => {
    server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    const basic = await server.request('GET', '/api/healthz');
    expect(basic.status).toBe(200);
    expect(basic.body).toEqual({ status: 'Healthy' });
    const extended = await server.request('GET', '/api/healthz/extended');
    expect(extended.status).toBe(200);
    expect(extended.body.status).toBe('Healthy');
    expect(extended.body.results.database).toMatchObject({ status: 'Healthy', description: null });
    expect(extended.body.results.database.data.engine).toBe(server.database.engine);
  });

  it('can be switched on for self-hosted', async () => {
    server = await startTestServer({ env: { HEALTH_ENABLED: 'true' } });
    expect((await server.request('GET', '/api/healthz')).status).toBe(200);
    // Uptime monitors may ask with HEAD.
    expect((await server.request('HEAD', '/api/healthz')).status).toBe(200);
  });

  it('turns 503 Unhealthy when the database is gone', async () => {
    const started = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    server = started;
    // The scheduled jobs' first runs start with the server. A query still waiting for a pooled
    // connection when the pool ends is never answered, so the pool is closed once they are done
    // (the server itself stops its jobs before it closes the database).
    await vi.waitFor(() => {
      const pool = started.database.poolStats();
      expect(pool.waiting).toBe(0);
      if (started.database.engine === 'postgres') expect(pool.idle).toBe(pool.total);
    });
    await server.database.close();
    const basic = await server.request('GET', '/api/healthz');
    expect(basic.status).toBe(503);
    expect(basic.body).toEqual({ status: 'Unhealthy' });
    const extended = await server.request('GET', '/api/healthz/extended');
    expect(extended.status).toBe(503);
    expect(extended.body.results.database.status).toBe('Unhealthy');
    expect(extended.body.results.database.description).toEqual(expect.any(String));
  });

  it('reports Redis and the broker when configured, Degraded when they do not answer', async () => {
    const port = await hangingPort();
    server = await startTestServer({
      env: { DEPLOYMENT: 'cloud', REDIS_URL: `redis://127.0.0.1:${port}`, AMQP_URL: `amqp://127.0.0.1:${port}` },
    });
    const res = await server.request('GET', '/api/healthz/extended');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('Degraded');
    expect(res.body.results.redis.status).toBe('Degraded');
    expect(res.body.results.broker.status).toBe('Degraded');
    expect(res.body.results.database.status).toBe('Healthy');
  }, 20_000);
});
