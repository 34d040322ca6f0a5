import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { startTestServer, testConfig, type StartOptions, type TestServer } from '../../../test/support/test-server.js';
import { ConfigError } from '../../config/config.js';
import { CLOUD_IP_RULES } from '../../config/rate-limit-settings.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(rules: unknown[] | null, options: StartOptions = {}): Promise<TestServer> {
  const env: Record<string, string> = { IP_RATE_LIMITING: '', ...(rules ? { IP_RATE_LIMIT_RULES: JSON.stringify(rules) } : {}), ...options.env };
  const server = await startTestServer({ ...options, env });
  servers.push(server);
  return server;
}

const statuses = async (server: TestServer, method: string, path: string, n: number, headers: Record<string, string> = {}) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await server.request(method, path, { headers })).status);
  return out;
};

describe('IP rule settings', () => {
  it('are on with the official rules in the cloud variant, and off self-hosted unless rules are configured', () => {
    const cloud = testConfig({ DEPLOYMENT: 'cloud', IP_RATE_LIMITING: '' });
    expect(cloud.ipRateLimiting).toBe(true);
    expect(cloud.ipRateLimitRules).toBe(CLOUD_IP_RULES);
    expect(cloud.ipRateLimitRules).toContainEqual({ Endpoint: 'post:/connect/token', Period: '1m', Limit: 10, Service: 'identity' });
    expect(cloud.ipRateLimitRules).toContainEqual({ Endpoint: 'post:/accounts/prelogin*', Period: '1m', Limit: 10, Service: 'identity' });
    expect(cloud.ipRateLimitRules).toContainEqual({ Endpoint: 'post:/accounts/register*', Period: '1m', Limit: 5, Service: 'identity' });
    expect(testConfig({ DEPLOYMENT: 'selfhosted', IP_RATE_LIMITING: '' }).ipRateLimiting).toBe(false);
    const configured = testConfig({ IP_RATE_LIMITING: '', IP_RATE_LIMIT_RULES: '[{"Endpoint":"get:/alive","Period":"1m","Limit":5}]' });
    expect(configured.ipRateLimiting).toBe(true);
    expect(configured.ipRateLimitRules).toEqual([{ Endpoint: 'get:/alive', Period: '1m', Limit: 5 }]);
    expect(testConfig({ DEPLOYMENT: 'cloud', IP_RATE_LIMITING: 'false' }).ipRateLimiting).toBe(false);
  });

  it('name every bad rule and whitelist entry at once', () => {
    const bad = JSON.stringify([
      { Endpoint: 'post/connect/token', Period: '1m', Limit: 10 },
      { Endpoint: 'get:/alive', Period: '1 minute', Limit: 0, Service: 'web' },
      { Endpoint: '*', Period: '1m', Limit: 1, Extra: true },
    ]);
    try {
      testConfig({ IP_RATE_LIMIT_RULES: bad, IP_RATE_LIMIT_WHITELIST: '10.0.0.0/8, 10.0.0.0/33, example.com' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        'IP_RATE_LIMIT_RULES: rule 1: Endpoint must be "*" or "verb:path" such as "post:/connect/token" (got "post/connect/token")',
        'IP_RATE_LIMIT_RULES: rule 2: Period must be a count and a unit s, m, h or d, such as "1m" or "10m" (got "1 minute")',
        'IP_RATE_LIMIT_RULES: rule 2: Limit must be a whole number of at least 1 (got 0)',
        'IP_RATE_LIMIT_RULES: rule 2: Service must be one of api, identity, events, notifications (got "web")',
        'IP_RATE_LIMIT_RULES: rule 3: unknown field "Extra" (use Endpoint, Period, Limit, Service)',
        'IP_RATE_LIMIT_WHITELIST: "10.0.0.0/33" is neither an IP address nor a CIDR range such as 10.0.0.0/8',
        'IP_RATE_LIMIT_WHITELIST: "example.com" is neither an IP address nor a CIDR range such as 10.0.0.0/8',
      ]);
    }
    expect(() => testConfig({ IP_RATE_LIMIT_RULES: '{"Endpoint":"*"}' })).toThrow(/must be a JSON array/);
  });
});

describe('IP rules', () => {
  it('limit an endpoint per service, answering 429 with Retry-After in the API error envelope', async () => {
    const server = await start([{ Endpoint: 'get:/alive', Period: '1m', Limit: 2 }]);
    expect(await statuses(server, 'GET', '/api/alive', 3)).toEqual([200, 200, 429]);
    const refused = await server.request('GET', '/api/alive');
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.body).toMatchObject({ object: 'error', message: 'Too many requests from this address. Try again in 30 seconds.', validationErrors: null });
    // The same rule on another service counts on its own.
    expect(await statuses(server, 'GET', '/identity/alive', 2)).toEqual([200, 200]);
    // Other verbs and paths are not matched.
    expect((await server.request('GET', '/api/now')).status).toBe(200);
  });

  it('match * in paths and verbs, case-insensitively, and apply every matching rule', async () => {
    const server = await start([
      { Endpoint: 'get:/accounts/*', Period: '1m', Limit: 3, Service: 'api' },
      { Endpoint: '*:/accounts/profile', Period: '1m', Limit: 1, Service: 'api' },
    ]);
    // Counted before authentication: unauthenticated calls use up the address's allowance too.
    expect(await statuses(server, 'GET', '/api/Accounts/Profile', 2)).toEqual([401, 429]);
    expect(await statuses(server, 'GET', '/api/accounts/revision-date', 3)).toEqual([401, 401, 429]);
    expect((await server.request('GET', '/identity/accounts/profile')).status).toBe(404);
    expect((await server.request('GET', '/api/alive')).status).toBe(200);
  });

  it('refill over the period', async () => {
    const clock = testClock();
    const server = await start([{ Endpoint: 'get:/alive', Period: '10m', Limit: 2 }], { clock });
    expect(await statuses(server, 'GET', '/api/alive', 3)).toEqual([200, 200, 429]);
    clock.advance(299_000);
    expect((await server.request('GET', '/api/alive')).status).toBe(429);
    clock.advance(1_000);
    expect(await statuses(server, 'GET', '/api/alive', 2)).toEqual([200, 429]);
  });

  it('never limit whitelisted addresses and ranges, and use the address the proxy reports when trusted', async () => {
    const rules = [{ Endpoint: 'get:/alive', Period: '1m', Limit: 1 }];
    const server = await start(rules, { env: { TRUST_PROXY: 'true', IP_RATE_LIMIT_WHITELIST: '10.0.0.0/8, 2001:db8::/32, 192.0.2.7' } });
    for (const address of ['10.1.2.3', '2001:db8::1', '192.0.2.7']) {
      expect(await statuses(server, 'GET', '/api/alive', 3, { 'x-forwarded-for': address })).toEqual([200, 200, 200]);
    }
    expect(await statuses(server, 'GET', '/api/alive', 2, { 'x-forwarded-for': '198.51.100.1' })).toEqual([200, 429]);
    // Each address has its own count.
    expect(await statuses(server, 'GET', '/api/alive', 2, { 'x-forwarded-for': '198.51.100.2' })).toEqual([200, 429]);

    const whole = await start(rules, { env: { IP_RATE_LIMIT_WHITELIST: '127.0.0.0/8' } });
    expect(await statuses(whole, 'GET', '/api/alive', 3)).toEqual([200, 200, 200]);
  });

  it('apply the official defaults in the cloud variant (get:/alive 5 a minute, prelogin 10 a minute)', async () => {
    const cloud = await start(null, { env: { DEPLOYMENT: 'cloud' } });
    expect(await statuses(cloud, 'GET', '/api/alive', 6)).toEqual([200, 200, 200, 200, 200, 429]);
    const prelogin = [];
    for (let i = 0; i < 11; i++) {
      prelogin.push((await cloud.request('POST', '/identity/accounts/prelogin', { json: { email: `p${i}@example.com` } })).status);
      // Past the identity service's 5 a second.
      await new Promise((resolve) => setTimeout(resolve, 210));
    }
    expect(prelogin.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(prelogin[10]).toBe(429);
  });

  it('are off on self-hosted by default', async () => {
    const selfhosted = await start(null);
    expect(await statuses(selfhosted, 'GET', '/api/alive', 8)).toEqual(Array(8).fill(200));
  });
});
