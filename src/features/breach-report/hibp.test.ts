import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

// GET /hibp/breach: the web vault's data breach report, against a local stand-in for Have I Been Pwned.
const API_KEY = 'hibp-test-key-0123456789abcdef';
const BREACHES = [{ Name: 'Adobe', Title: 'Adobe', Domain: 'adobe.com', BreachDate: '2013-10-04', PwnCount: 152445165, DataClasses: ['Email addresses', 'Passwords'], IsVerified: true }];

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}
const seen: Seen[] = [];
/** What the stand-in answers, by the account looked up. */
const answers: Record<string, { status: number; body?: unknown }> = {
  'pwned@example.com': { status: 200, body: BREACHES },
  'clean@example.com': { status: 404 },
  'broken@example.com': { status: 500, body: { error: 'boom' } },
  'refused@example.com': { status: 401, body: { statusCode: 401, message: 'Access denied due to invalid hibp-api-key.' } },
};

let upstream: Server;
let withKey: TestServer;
let withoutKey: TestServer;
let user: LoggedInUser;
const clock = testClock();

const breach = (server: TestServer, token: string | undefined, username: string) =>
  server.request('GET', `/api/hibp/breach?username=${encodeURIComponent(username)}`, token ? { token } : {});

beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const account = decodeURIComponent(/\/breachedaccount\/([^?]*)/.exec(req.url ?? '')?.[1] ?? '');
    const answer = answers[account] ?? { status: 404 };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  withKey = await startTestServer({ clock, env: { HIBP_API_KEY: API_KEY, HIBP_API_URL: `http://127.0.0.1:${port}/api/v3`, RATE_LIMIT_HIBP: '8/1h' } });
  withoutKey = await startTestServer();
  user = await createUser(withKey);
}, 120_000);

afterAll(async () => {
  await withKey.close();
  await withoutKey.close();
  await new Promise((resolve) => upstream.close(resolve));
});

describe('data breach lookup', () => {
  it('without a key answers 400 "not set", which the web vault shows as an error, never a 404 or an empty list', async () => {
    const other = await createUser(withoutKey);
    const res = await breach(withoutKey, other.accessToken, 'pwned@example.com');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('HaveIBeenPwned API key not set.');
    expect((await breach(withoutKey, undefined, 'pwned@example.com')).status).toBe(401);
  });

  it("passes the lookup on with the server's key and answers Have I Been Pwned's list", async () => {
    seen.length = 0;
    const res = await breach(withKey, user.accessToken, 'pwned@example.com');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(BREACHES);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe('/api/v3/breachedaccount/pwned%40example.com?truncateResponse=false&includeUnverified=false');
    expect(seen[0]!.headers['hibp-api-key']).toBe(API_KEY);
    expect(seen[0]!.headers['user-agent']).toMatch(/Strongroom/);
    expect(seen[0]!.headers['hibp-client-id']).toEqual(expect.any(String));
    // The key stays on the server: not in the answer, not in the log.
    expect(res.text).not.toContain(API_KEY);
    expect(res.headers.get('hibp-api-key')).toBeNull();
    expect(withKey.logs.text()).not.toContain(API_KEY);
  });

  it('answers 404 when the account is in no breach, and 400 when the upstream fails or refuses the key', async () => {
    expect((await breach(withKey, user.accessToken, 'clean@example.com')).status).toBe(404);
    const broken = await breach(withKey, user.accessToken, 'broken@example.com');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toContain('500');
    // A refused key must not read as the caller's own 401, which would sign the user out.
    expect((await breach(withKey, user.accessToken, 'refused@example.com')).status).toBe(400);
    expect((await withKey.request('GET', '/api/hibp/breach', { token: user.accessToken })).status).toBe(400);
  });

  it('keeps answers briefly: a repeated lookup is not passed on until the cache time is over', async () => {
    seen.length = 0;
    expect((await breach(withKey, user.accessToken, 'Pwned@Example.com')).status).toBe(200);
    expect((await breach(withKey, user.accessToken, 'clean@example.com')).status).toBe(404);
    expect(seen).toHaveLength(0);
    clock.advance(301_000);
    expect((await breach(withKey, user.accessToken, 'pwned@example.com')).status).toBe(200);
    expect(seen).toHaveLength(1);
  });

  it('limits the lookups each user may make', async () => {
    const other = await createUser(withKey);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await breach(withKey, other.accessToken, 'pwned@example.com')).status);
    expect(statuses).toEqual(Array(8).fill(200));
    const refused = await breach(withKey, other.accessToken, 'pwned@example.com');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
