import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { orgApiToken } from '../../../test/support/public-api.js';
import { testService } from '../../../test/support/services.js';
import { startTestServer, TEST_ENGINE, type StartOptions, type TestServer } from '../../../test/support/test-server.js';

const REDIS_URL = testService('redis');

const servers: TestServer[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function start(options: StartOptions = {}): Promise<TestServer> {
  // Test servers turn the limit off; these run with the defaults unless they say otherwise.
  const server = await startTestServer({ ...options, env: { PUBLIC_API_RATE_LIMIT: '100', PUBLIC_API_BURST: '20', ...options.env } });
  servers.push(server);
  return server;
}

/** An organization with an API key, and a token from the identity service's client_credentials grant. */
async function organizationToken(server: TestServer): Promise<{ orgId: string; token: string }> {
  const orgId = await seedOrganization(server);
  return { orgId, token: (await orgApiToken(server, orgId)).token };
}

const list = (server: TestServer, token: string) => server.request('GET', '/api/public/members', { token });

describe('the public API limit per organization', () => {
  it('allows a burst of 20, then answers 429 in the public error envelope with Retry-After', async () => {
    const clock = testClock();
    const server = await start({ clock });
    const { token } = await organizationToken(server);
    const remaining: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await list(server, token);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('20');
      remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
    }
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => String(19 - i)));
    const refused = await list(server, token);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ object: 'error', message: 'Too many requests for this organization. Try again in 1 second.' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // 20 requests in hand, each back after 0.6 s: full again in 12 s.
    expect(refused.headers.get('x-ratelimit-reset')).toBe('12');
  });

  it('refills at 100 a minute', async () => {
    const clock = testClock();
    const server = await start({ clock });
    const { token } = await organizationToken(server);
    for (let i = 0; i < 20; i++) await list(server, token);
    expect((await list(server, token)).status).toBe(429);
    clock.advance(600);
    expect((await list(server, token)).status).toBe(200);
    expect((await list(server, token)).status).toBe(429);
    clock.advance(60_000);
    const full = await list(server, token);
    expect(full.status).toBe(200);
    expect(full.headers.get('x-ratelimit-remaining')).toBe('19');
  });

  it('puts the headers on error answers too, and counts them', async () => {
    const server = await start();
    const { token } = await organizationToken(server);
    const missing = await server.request('GET', `/api/public/members/${randomUUID()}`, { token });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('19');
    expect((await list(server, token)).headers.get('x-ratelimit-remaining')).toBe('18');
  });

  it('keeps each organization to its own bucket', async () => {
    const clock = testClock();
    const server = await start({ clock });
    const a = await organizationToken(server);
    const b = await organizationToken(server);
    const floodA = await Promise.all(Array.from({ length: 40 }, () => list(server, a.token)));
    expect(floodA.filter((r) => r.status === 200)).toHaveLength(20);
    const first = await list(server, b.token);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('19');
    expect(first.body.object).toBe('list');
  });

  it('follows PUBLIC_API_RATE_LIMIT and PUBLIC_API_BURST, and is off at 0', async () => {
    const clock = testClock();
    const tight = await start({ clock, env: { PUBLIC_API_RATE_LIMIT: '6', PUBLIC_API_BURST: '2' } });
    const { token } = await organizationToken(tight);
    expect((await list(tight, token)).headers.get('x-ratelimit-limit')).toBe('2');
    await list(tight, token);
    const refused = await list(tight, token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');

    const off = await start({ env: { PUBLIC_API_RATE_LIMIT: '0' } });
    const other = await organizationToken(off);
    const answers = await Promise.all(Array.from({ length: 30 }, () => list(off, other.token)));
    expect(answers.every((r) => r.status === 200 && r.headers.get('x-ratelimit-limit') === null)).toBe(true);
  });

  it('leaves routes outside /public and other callers alone', async () => {
    const server = await start({ env: { PUBLIC_API_BURST: '1' } });
    const user = await createUser(server);
    const profile = await server.request('GET', '/api/accounts/profile', { token: user.accessToken });
    expect(profile.status).toBe(200);
    expect(profile.headers.get('x-ratelimit-limit')).toBeNull();
    // A user token is refused on /public before any limit is taken.
    const refused = await server.request('GET', '/api/public/members', { token: user.accessToken });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe.skipIf(!REDIS_URL)('the public API limit shared through Redis', () => {
  it('lets exactly the burst through from 200 concurrent requests to two instances', async () => {
    const clock = testClock();
    // Closed, with a patient timeout: on a loaded machine a slow answer must show as a failure (503), never as the local fallback's extra passes.
    const env = { REDIS_URL: REDIS_URL ?? '', RATE_LIMIT_REDIS_FAILURE: 'closed', RATE_LIMIT_REDIS_TIMEOUT_MS: '10000' };
    let shared: string | undefined;
    if (TEST_ENGINE === 'sqlite') {
      // One SQLite file for both instances (in-memory databases are private to each).
      const dir = mkdtempSync(join(tmpdir(), 'sr-limit-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      shared = `sqlite:${join(dir, 'shared.sqlite')}`;
    }
    const first = await start({ clock, env, ...(shared ? { databaseUrl: shared } : {}) });
    const second = await start({ clock, env, databaseUrl: shared ?? first.config.databaseUrl });
    const { token } = await organizationToken(first);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => list(i % 2 === 0 ? first : second, token)));
    const passed = answers.filter((r) => r.status === 200);
    expect(answers.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true);
    expect(passed).toHaveLength(20);
    // Both instances served some of them: the count is one limit, not two.
    expect(new Set(answers.map((_, i) => i % 2)).size).toBe(2);
    const remainingSeen = passed.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y);
    expect(remainingSeen).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});
