import { randomBytes } from 'node:crypto';
import { argon2id } from 'hash-wasm';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach } from 'vitest';
import { startTestServer, type StartOptions, type TestServer } from './test-server.js';

/** The admin token the console tests sign in with. */
export const ADMIN_TOKEN = 'test-admin-token-with-enough-length';

let cachedHash: string | undefined;

/**
 * ADMIN_TOKEN's hash at a low Argon2id cost (the stored parameters are the ones checked, so
 * the server's own cost is not spent in every test); `strongroom admin-token` uses the real one.
 */
export async function adminTokenHash(): Promise<string> {
  cachedHash ??= await argon2id({ password: ADMIN_TOKEN, salt: randomBytes(16), memorySize: 1024, iterations: 1, parallelism: 1, hashLength: 32, outputType: 'encoded' });
  return cachedHash;
}

/** The `name=value` of a Set-Cookie header the response carries, or undefined. */
export function cookieFrom(response: { headers: Record<string, unknown> }, name: string): { value: string; attributes: string } | undefined {
  const raw = response.headers['set-cookie'];
  const all = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  const line = all.find((c) => c.startsWith(`${name}=`));
  if (!line) return undefined;
  const [pair = '', ...attributes] = line.split(';');
  return { value: pair.slice(name.length + 1), attributes: attributes.join(';') };
}

/** The value of a hidden `_csrf` input in a page. */
export function csrfIn(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('the page has no CSRF field');
  return match[1];
}

export interface AdminBrowser {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, form?: Record<string, string>, opts?: { csrf?: string | null }): Promise<LightMyRequestResponse>;
}

/** Signs in through the form, as a browser does, and answers a client that keeps the session. */
export async function signIn(app: FastifyInstance, options: Partial<InjectOptions> = {}): Promise<AdminBrowser> {
  const { headers: extraHeaders = {}, ...extra } = options;
  const withHeaders = (headers: Record<string, string>) => ({ ...(extraHeaders as Record<string, string>), ...headers });
  const page = await app.inject({ method: 'GET', url: '/admin/login', headers: withHeaders({}), ...extra } as InjectOptions);
  const preCsrf = cookieFrom(page, 'strongroom_admin_csrf')?.value ?? '';
  const res = await app.inject({
    method: 'POST',
    url: '/admin/login',
    payload: new URLSearchParams({ _csrf: csrfIn(page.body), token: ADMIN_TOKEN }).toString(),
    headers: withHeaders({ 'content-type': 'application/x-www-form-urlencoded', cookie: `strongroom_admin_csrf=${preCsrf}` }),
    ...extra,
  } as InjectOptions);
  if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`);
  const cookie = `strongroom_admin=${cookieFrom(res, 'strongroom_admin')?.value ?? ''}`;
  const users = await app.inject({ method: 'GET', url: '/admin/users', headers: withHeaders({ cookie }), ...extra } as InjectOptions);
  const csrf = csrfIn(users.body);
  return {
    cookie,
    csrf,
    get: (url) => app.inject({ method: 'GET', url, headers: withHeaders({ cookie }), ...extra } as InjectOptions),
    post: (url, form = {}, opts = {}) =>
      app.inject({
        method: 'POST',
        url,
        payload: new URLSearchParams({ ...(opts.csrf === null ? {} : { _csrf: opts.csrf ?? csrf }), ...form }).toString(),
        headers: withHeaders({ 'content-type': 'application/x-www-form-urlencoded', cookie }),
        ...extra,
      } as InjectOptions),
  };
}

/**
 * For a test file of the console: answers `start(env?, options?)`, which starts a test server
 * with the console on (ADMIN_TOKEN set) and signs an operator in. Every server it started is
 * closed after each test.
 */
export function consoleServers(): (env?: Record<string, string>, options?: Omit<StartOptions, 'env'>) => Promise<{ server: TestServer; browser: AdminBrowser }> {
  const open: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
  });
  return async (env = {}, options = {}) => {
    const server = await startTestServer({ ...options, env: { ADMIN_TOKEN: await adminTokenHash(), ...env } });
    open.push(server);
    return { server, browser: await signIn(server.app) };
  };
}
