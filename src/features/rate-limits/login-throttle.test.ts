import { randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerAccount, TEST_DEVICE } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { testService } from '../../../test/support/services.js';
import { startTestServer, TEST_ENGINE, type StartOptions, type TestServer } from '../../../test/support/test-server.js';
import { createMemoryStore } from './limit-store.js';
import { createLoginThrottle } from './login-throttle.js';

const REDIS_URL = testService('redis');

const servers: TestServer[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function start(options: StartOptions = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  servers.push(server);
  return server;
}

const form = (username: string, password: string) => ({
  grant_type: 'password',
  username,
  password,
  scope: 'api offline_access',
  client_id: 'cli',
  ...TEST_DEVICE,
});
const WRONG = 'd3Jvbmc=';
const login = (server: TestServer, username: string, password: string, from?: string) =>
  server.request('POST', '/identity/connect/token', { form: form(username, password), ...(from ? { headers: { 'x-forwarded-for': from } } : {}) });

describe('the login throttle', () => {
  it('keeps bounded memory whatever usernames are sent', async () => {
    const store = createMemoryStore({ maxKeys: 1000 });
    const throttle = createLoginThrottle({ clock: testClock(), store, perAccountAndIp: 10, perAccount: 100, perIp: 1_000_000, windowSeconds: 900 });
    const long = 'x'.repeat(100_000);
    for (let i = 0; i < 5000; i++) {
      const attempt = await throttle.attempt(`${i}${long}@example.com`, `10.0.${i % 250}.${i % 7}`);
      expect(attempt.allowed).toBe(true);
    }
    expect(store.size()).toBeLessThanOrEqual(1000);
  });

  it('counts concurrent failures exactly: 31 guesses at once, a limit of 10, 10 checked', async () => {
    const server = await start({ env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '10' } });
    const account = await registerAccount(server);
    const answers = await Promise.all(Array.from({ length: 31 }, () => login(server, account.email, WRONG)));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(21);
    expect((await login(server, account.email, account.masterPasswordHash)).status).toBe(429);
  });

  it('cannot be used to lock the owner out from another address', async () => {
    const server = await start({ env: { TRUST_PROXY: 'true', LOGIN_ATTEMPTS_PER_ACCOUNT: '5' } });
    const owner = await registerAccount(server);
    for (let i = 0; i < 5; i++) expect((await login(server, owner.email, WRONG, '198.51.100.9')).status).toBe(400);
    const attacker = await login(server, owner.email, owner.masterPasswordHash, '198.51.100.9');
    expect(attacker.status).toBe(429);
    expect(attacker.body).toMatchObject({ error: 'invalid_grant', ErrorModel: { Object: 'error' } });
    expect((await login(server, owner.email, owner.masterPasswordHash, '203.0.113.5')).status).toBe(200);
  });

  it('stops guessing from many addresses at the per-account ceiling', async () => {
    const server = await start({ env: { TRUST_PROXY: 'true', LOGIN_ATTEMPTS_PER_ACCOUNT: '5', LOGIN_ATTEMPTS_PER_ACCOUNT_TOTAL: '12' } });
    const owner = await registerAccount(server);
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await login(server, owner.email, WRONG, `198.51.100.${i}`)).status);
    expect(statuses).toEqual([...Array(12).fill(400), 429, 429, 429]);
  });

  it('forgives an address its failures once the right password comes from it', async () => {
    const clock = testClock();
    const server = await start({ clock, env: { TRUST_PROXY: 'true', LOGIN_ATTEMPTS_PER_ACCOUNT: '3' } });
    const owner = await registerAccount(server);
    for (let i = 0; i < 2; i++) await login(server, owner.email, WRONG, '203.0.113.5');
    expect((await login(server, owner.email, owner.masterPasswordHash, '203.0.113.5')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await login(server, owner.email, WRONG, '203.0.113.5')).status).toBe(400);
    expect((await login(server, owner.email, WRONG, '203.0.113.5')).status).toBe(429);
  });

  it('keeps the identity answers the clients expect', async () => {
    const server = await start({ env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '1' } });
    const account = await registerAccount(server);
    const wrong = await login(server, account.email, WRONG);
    expect(wrong.body).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid_username_or_password',
      ErrorModel: { Message: 'Username or password is incorrect. Try again.', Object: 'error' },
    });
    const blocked = await login(server, account.email, WRONG);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error_description).toMatch(/^Too many failed login attempts\. Try again in \d+ seconds\.$/);
    expect(blocked.headers.get('retry-after')).toBe('900');
  });
});

describe.skipIf(!REDIS_URL)('the login throttle shared through Redis', () => {
  it('counts the failures of two instances as one: 31 concurrent guesses, 10 checked', async () => {
    // Redis outlives the test: a fresh account and address keep earlier runs' counters out of it.
    // Closed, with a patient timeout: a slow Redis must fail the test, never pass it through the local fallback.
    const env = { REDIS_URL: REDIS_URL ?? '', LOGIN_ATTEMPTS_PER_ACCOUNT: '10', TRUST_PROXY: 'true', RATE_LIMIT_REDIS_FAILURE: 'closed', RATE_LIMIT_REDIS_TIMEOUT_MS: '10000' };
    const from = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    let shared: string | undefined;
    if (TEST_ENGINE === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'sr-throttle-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      shared = `sqlite:${join(dir, 'shared.sqlite')}`;
    }
    const first = await start({ env, ...(shared ? { databaseUrl: shared } : {}) });
    const second = await start({ env, databaseUrl: shared ?? first.config.databaseUrl });
    const account = await registerAccount(first, { email: `${randomUUID()}@example.com` });
    const answers = await Promise.all(Array.from({ length: 31 }, (_, i) => login(i % 2 === 0 ? first : second, account.email, WRONG, from)));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(21);
    expect((await login(second, account.email, account.masterPasswordHash, from)).status).toBe(429);
  });
});
