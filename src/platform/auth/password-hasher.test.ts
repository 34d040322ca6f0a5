import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, testAccount } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { boundedRunner, createPasswordHasher } from './password-hasher.js';

describe('boundedRunner', () => {
  it('runs at most `concurrency` tasks at once, queues up to the limit and refuses the rest with 429', async () => {
    const run = boundedRunner(2, 3);
    let active = 0;
    let most = 0;
    const task = () =>
      run(async () => {
        active++;
        most = Math.max(most, active);
        await new Promise((resolve) => setTimeout(resolve, 20));
        active--;
        return 'done';
      });
    const results = await Promise.allSettled(Array.from({ length: 8 }, task));
    expect(most).toBe(2);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r).reason as { statusCode: number; retryAfterSeconds: number });
    expect(refused).toHaveLength(3);
    for (const error of refused) {
      expect(error.statusCode).toBe(429);
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    // Slots and queue are free again afterwards, also after a failing task.
    await expect(run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await Promise.all(Array.from({ length: 5 }, task))).toEqual(Array(5).fill('done'));
  });

  it('hashes and verifies through the runner', async () => {
    const hasher = createPasswordHasher({ iterations: 1000, concurrency: 1, queueLimit: 0 });
    const stored = await hasher.hash('secret');
    expect(await hasher.verify('secret', stored)).toBe(true);
    await expect(Promise.all([hasher.verify('secret', stored), hasher.verify('secret', stored)])).rejects.toMatchObject({ statusCode: 429 });
  });
});

describe('password hashing under a registration flood (HTTP)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ env: { PASSWORD_ITERATIONS: '300000', PASSWORD_HASHING_CONCURRENCY: '1', PASSWORD_HASHING_QUEUE: '2' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('refuses registrations past the queue with 429 and Retry-After, and keeps answering requests that need no hash', async () => {
    // The bodies first: deriving twelve accounts' keys blocks this process (the server's too) for
    // seconds on a busy machine, and a kept-alive connection idle that long is closed by the
    // server just as the client reuses it (ECONNRESET).
    const bodies = Array.from({ length: 12 }, (_, i) => registerFinishBody(testAccount(`flood${i}@example.com`), { name: 'Flood' }));
    const user = await createUser(server);
    const flood = bodies.map((json) => server.request('POST', '/identity/accounts/register/finish', { json }));
    const started = performance.now();
    const revision = await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken });
    const waitedMs = performance.now() - started;
    const answers = await Promise.all(flood);
    expect(revision.status).toBe(200);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(8);
    expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const res of refused) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    console.log(`a request needing no hash answered in ${waitedMs.toFixed(1)} ms during a flood of 12 registrations (300,000 iterations, one hash at a time)`);
  });
});
