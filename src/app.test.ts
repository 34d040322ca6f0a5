import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { rawGet } from '../test/support/raw-request.js';
import { startTestServer, type TestServer } from '../test/support/test-server.js';

// One server with the test defaults (logging at info) for the tests that need nothing else; a
// test that needs other settings starts its own, `server`, closed after it.
let shared: TestServer;
beforeAll(async () => {
  shared = await startTestServer();
});
afterAll(async () => shared.close());

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('one program, several services', () => {
  it('serves every service under its prefix on one port', async () => {
    for (const prefix of ['/api', '/identity', '/events']) {
      const res = await shared.request('GET', `${prefix}/alive`);
      expect(res.status, prefix).toBe(200);
      expect(new Date(res.body as string).getTime()).toBeGreaterThan(0);
      expect(res.headers.get('content-type')).toContain('application/json');
    }
    expect((await shared.request('GET', '/alive')).status).toBe(404);
  });

  it('answers HEAD where a monitor or a browser asks with it, and not beside every GET', async () => {
    // Fastify's HEAD twin of every GET is turned off (src/app.ts): the liveness and health routes,
    // the root page and the docs keep theirs; an API route answers GET only, as officially.
    for (const path of ['/api/alive', '/identity/now', '/']) {
      const head = await shared.request('HEAD', path);
      expect(head.status, path).toBe(200);
      expect(head.text, path).toBe('');
    }
    expect((await shared.request('HEAD', '/api/config')).status).toBe(404);
    expect((await shared.request('GET', '/api/config')).status).toBe(200);
  });

  it('serves a service started alone at the root', async () => {
    server = await startTestServer({ env: { SERVICES: 'identity' } });
    expect((await server.request('GET', '/alive')).status).toBe(200);
    expect((await server.request('GET', '/identity/alive')).status).toBe(404);
    expect((await server.request('GET', '/api/alive')).status).toBe(404);
  });

  it('serves the notifications hub under /notifications, a plain GET of the hub being a 404 (it takes WebSocket upgrades only)', async () => {
    expect((await shared.request('GET', '/notifications/alive')).status).toBe(200);
    const res = await shared.request('GET', '/notifications/hub');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ object: 'error' });
  });

  it('answers unknown paths with the error envelope and a request id', async () => {
    const res = await shared.request('GET', '/api/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      message: 'Resource not found.',
      validationErrors: null,
      exceptionMessage: null,
      exceptionStackTrace: null,
      innerExceptionMessage: null,
      object: 'error',
    });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('matches paths without regard to letter case or a trailing slash', async () => {
    expect((await shared.request('GET', '/API/Alive/')).status).toBe(200);
  });

  it('never logs tokens, from headers or query strings', async () => {
    const before = shared.logs.lines.length;
    await shared.request('GET', '/api/alive?access_token=query-secret-123', { headers: { authorization: 'Bearer header-secret-456' } });
    // Only this request's lines: the shared server has logged /api/alive before.
    const logs = shared.logs.lines.slice(before).join('\n');
    expect(logs).toContain('/api/alive');
    expect(logs).not.toContain('query-secret-123');
    expect(logs).not.toContain('header-secret-456');
  });

  it('logs one line per request, when it is answered: method, url, address, status and response time', async () => {
    const before = shared.logs.lines.length;
    const res = await shared.request('GET', '/api/alive?access_token=query-secret-789');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = shared.logs.lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    const mine = lines.filter((line) => line.reqId === res.headers.get('x-request-id'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/api/alive?access_token=[REDACTED]', remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(typeof mine[0]?.responseTime).toBe('number');
  });

  it('publishes an OpenAPI document built from the route schemas on self-hosted', async () => {
    const res = await shared.request('GET', '/docs/json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toContain('/api/alive');
    // Responses as the routes declare them (Fastify is given 2xx: serialization.ts), and the
    // access rules' bearer requirement on the routes that need a login.
    const sync = res.body.paths['/api/sync'].get;
    expect(Object.keys(sync.responses)).toContain('200');
    expect(Object.keys(sync.responses)).not.toContain('2XX');
    expect(sync.security).toEqual([{ bearer: [] }]);
    expect(res.body.paths['/api/alive'].get.security).toBeUndefined();
    expect((await shared.request('GET', '/docs/')).headers.get('content-type')).toContain('text/html');
  });

  it('builds the API documentation on its first requests, arriving together, and answers what it does not serve with its own 404', async () => {
    // A server of its own: on the shared one an earlier test may have built the documentation.
    const docs = await startTestServer();
    server = docs;
    const answers = await Promise.all(['/docs/json', '/docs/json', '/docs/', '/docs/yaml'].map((path) => docs.request('GET', path)));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect(answers[0]?.body).toEqual(answers[1]?.body);
    expect(answers[3]?.headers.get('content-type')).toContain('yaml');
    // Passed on as the plugin answers it: a redirect, with no body and so no content type.
    const redirect = await fetch(`${docs.baseUrl}/docs/static/index.html`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/docs/');
    expect(redirect.headers.get('content-type')).toBeNull();
    expect(redirect.headers.get('x-request-id')).toBeTruthy();
    const missing = await docs.request('GET', '/docs/no-such-file');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ object: 'error', message: 'Resource not found.' });
    // A documented route asked through /docs (sent as is; fetch would resolve the dots) is not served from there.
    const through = await rawGet(docs.baseUrl, '/docs/static/../../api/alive');
    expect(Number(through.split(' ')[1])).toBe(404);
    // HEAD tells a file's real length, as GET sends it.
    const css = await docs.request('GET', '/docs/static/swagger-ui.css');
    const head = await docs.request('HEAD', '/docs/static/swagger-ui.css');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toContain('text/css');
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(css.text));
  });

  it('keeps the API documentation off in the cloud', async () => {
    server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    expect((await server.request('GET', '/docs/json')).status).toBe(404);
  });
});

describe('the caches', () => {
  it('give back what no request used every CACHE_IDLE_MINUTES, until the server closes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      server = await startTestServer({ env: { CACHE_IDLE_MINUTES: '2' } });
      const rounds = vi.spyOn(server.app.features.cacheRelease, 'releaseOnce');
      vi.advanceTimersByTime(119_000);
      expect(rounds).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1_000);
      expect(rounds).toHaveBeenCalledTimes(1);
      await server.close();
      server = undefined;
      vi.advanceTimersByTime(240_000);
      expect(rounds).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
