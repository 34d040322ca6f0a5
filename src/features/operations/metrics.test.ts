import { afterEach, describe, expect, it } from 'vitest';
import { createUser, passwordGrantForm, registerAccount } from '../../../test/support/accounts.js';
import { connectHub, waitFor } from '../../../test/support/hub-client.js';
import { startTestServer, testConfig, type TestServer } from '../../../test/support/test-server.js';
import { ConfigError } from '../../config/config.js';

const TOKEN = 'scrape-token-0123456789';
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  server = await startTestServer({ env: { METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN, ...env } });
  return server;
}

async function scrape(s: TestServer): Promise<string> {
  const res = await s.request('GET', '/metrics', { token: TOKEN });
  expect(res.status, res.text).toBe(200);
  return res.text;
}

/** The value of one sample: the metric's line whose labels include all of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics', () => {
  it('is not served unless METRICS_ENABLED', async () => {
    server = await startTestServer();
    expect((await server.request('GET', '/metrics', { token: TOKEN })).status).toBe(404);
  });

  it('refuses settings that would leave it open or are malformed, hiding the token', () => {
    expect(() => testConfig({ METRICS_ENABLED: 'true' })).toThrow(/METRICS_ENABLED: set METRICS_TOKEN .* or METRICS_ALLOWED_ADDRESSES/);
    expect(() => testConfig({ METRICS_ENABLED: 'true', METRICS_ALLOWED_ADDRESSES: '10.0.0.0/99' })).toThrow(/METRICS_ALLOWED_ADDRESSES: "10.0.0.0\/99" is neither/);
    try {
      testConfig({ METRICS_ENABLED: 'true', METRICS_TOKEN: 'short-secretish' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('METRICS_TOKEN');
      expect((error as Error).message).not.toContain('short-secretish');
    }
  });

  it('answers 401 without the bearer token or with another, the text format with it', async () => {
    const s = await start();
    const none = await s.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body.message).toContain('METRICS_TOKEN');
    expect((await s.request('GET', '/metrics', { token: `${TOKEN}x` })).status).toBe(401);
    const ok = await s.request('GET', '/metrics', { token: TOKEN });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain('# TYPE strongroom_http_requests_total counter');
    expect(ok.text).toContain('process_cpu_user_seconds_total');
  });

  it('admits only the listed addresses, checked against the connection', async () => {
    const s = await start({ METRICS_TOKEN: '', METRICS_ALLOWED_ADDRESSES: '10.0.0.0/8' });
    const refused = await s.request('GET', '/metrics', { headers: { 'x-forwarded-for': '10.1.2.3' } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('METRICS_ALLOWED_ADDRESSES');
    await s.close();
    server = await startTestServer({ env: { METRICS_ENABLED: 'true', METRICS_ALLOWED_ADDRESSES: '10.0.0.0/8, 127.0.0.1' } });
    expect((await server.request('GET', '/metrics')).status).toBe(200);
  });

  it('counts requests and latencies by route, and errors by status', async () => {
    const s = await start();
    const before = await scrape(s);
    for (let i = 0; i < 3; i++) expect((await s.request('GET', '/api/alive')).status).toBe(200);
    expect((await s.request('GET', '/api/ciphers')).status).toBe(401);
    expect((await s.request('GET', '/api/no-such-route')).status).toBe(404);
    const after = await scrape(s);
    const alive = { method: 'GET', route: '/api/alive', status_code: '200' };
    expect(sample(after, 'strongroom_http_requests_total', alive) - sample(before, 'strongroom_http_requests_total', alive)).toBe(3);
    const latency = { method: 'GET', route: '/api/alive' };
    expect(sample(after, 'strongroom_http_request_duration_seconds_count', latency) - sample(before, 'strongroom_http_request_duration_seconds_count', latency)).toBe(3);
    expect(sample(after, 'strongroom_http_request_duration_seconds_sum', latency)).toBeGreaterThan(0);
    expect(sample(after, 'strongroom_http_errors_total', { status_code: '401' }) - sample(before, 'strongroom_http_errors_total', { status_code: '401' })).toBe(1);
    expect(sample(after, 'strongroom_http_errors_total', { status_code: '404' })).toBe(1);
    expect(sample(after, 'strongroom_http_requests_total', { route: '(unmatched)', status_code: '404' })).toBe(1);
  });

  it('counts login failures by reason and 429 refusals by route', async () => {
    const s = await start({ LOGIN_ATTEMPTS_PER_ACCOUNT: '1' });
    const account = await registerAccount(s);
    const wrong = { ...passwordGrantForm(account), password: 'not the hash' };
    expect((await s.request('POST', '/identity/connect/token', { form: wrong })).status).toBe(400);
    let text = await scrape(s);
    expect(sample(text, 'strongroom_login_failures_total', { reason: 'password' })).toBe(1);
    expect(sample(text, 'strongroom_login_failures_total', { reason: 'throttled' })).toBe(0);
    expect(sample(text, 'strongroom_rate_limit_rejections_total', { route: '/identity/connect/token' })).toBe(0);

    expect((await s.request('POST', '/identity/connect/token', { form: wrong })).status).toBe(429);
    text = await scrape(s);
    expect(sample(text, 'strongroom_login_failures_total', { reason: 'throttled' })).toBe(1);
    expect(sample(text, 'strongroom_rate_limit_rejections_total', { route: '/identity/connect/token' })).toBe(1);
    expect(sample(text, 'strongroom_http_errors_total', { status_code: '429' })).toBe(1);

    const apiKey = { grant_type: 'client_credentials', scope: 'api', client_id: 'user.00000000-0000-4000-8000-000000000000', client_secret: 'nope', deviceType: '8', deviceIdentifier: 'x', deviceName: 'cli' };
    expect((await s.request('POST', '/identity/connect/token', { form: apiKey })).status).toBe(400);
    expect(sample(await scrape(s), 'strongroom_login_failures_total', { reason: 'api-key' })).toBe(1);
  });

  it('counts sync cache misses and hits', async () => {
    const s = await start();
    const user = await createUser(s);
    expect((await s.request('GET', '/api/sync', { token: user.accessToken })).status).toBe(200);
    let text = await scrape(s);
    expect(sample(text, 'strongroom_sync_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(sample(text, 'strongroom_sync_cache_lookups_total', { result: 'hit' })).toBe(0);
    expect((await s.request('GET', '/api/sync', { token: user.accessToken })).status).toBe(200);
    text = await scrape(s);
    expect(sample(text, 'strongroom_sync_cache_lookups_total', { result: 'hit' })).toBe(1);
  });

  it('reports hub connections, the database pool and the outbox backlog at scrape time', async () => {
    const s = await start({ INTEGRATIONS_RELAY: 'false' });
    const user = await createUser(s);
    expect(sample(await scrape(s), 'strongroom_hub_connections')).toBe(0);
    const hub = await connectHub(`${s.baseUrl}/notifications/hub`, { token: user.accessToken });
    let text = await scrape(s);
    expect(sample(text, 'strongroom_hub_connections')).toBe(1);
    expect(sample(text, 'strongroom_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    await hub.stop();
    await waitFor(() => s.app.features.notifications.hub.connectionCount() === 0);

    // A relay cursor behind the newest event: everything after it waits in the outbox.
    const head = await s.database.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
    await s.database.db.insertInto('integration_relay').values({ name: 'events', cursor_seq: Number(head?.seq ?? 0), cursor_tx: null, lease_owner: null, lease_until: null }).execute();
    expect(sample(await scrape(s), 'strongroom_integration_outbox_backlog')).toBe(0);
    const wrong = { ...passwordGrantForm(user.account), password: 'not the hash' };
    for (let i = 0; i < 2; i++) expect((await s.request('POST', '/identity/connect/token', { form: wrong })).status).toBe(400);
    text = await scrape(s);
    expect(sample(text, 'strongroom_integration_outbox_backlog')).toBe(2);
  });
});
