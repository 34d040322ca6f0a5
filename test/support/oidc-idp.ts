import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, decodeJwt, decodeProtectedHeader, importJWK, SignJWT, type JWK } from 'jose';

/**
 * A real OpenID Connect identity provider on loopback for the SSO tests: `oidc-provider`
 * (OpenID-certified) with its own signing keys made at each start, its own clients and users,
 * and a minimal login page that checks the user's password. Nothing in it answers for
 * Strongroom: the server under test discovers it, sends browsers to it and exchanges codes
 * with it as it would with Keycloak or Entra ID.
 */

export interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** How the relying party authenticates at the token endpoint (default: client_secret_post). */
  token_endpoint_auth_method?: 'client_secret_post' | 'client_secret_basic';
}

export interface IdpUser {
  sub: string;
  email: string;
  email_verified?: boolean;
  name?: string;
  password: string;
}

/**
 * How the IdP misbehaves, for the failure tests; change it at any time with `idp.misbehave`.
 * - `omitClaims`: claims left out of the id_token and userinfo (e.g. `['email']`);
 * - `audience`: the id_token's `aud` is this instead of the client's id (re-signed with the
 *   IdP's own key, so only the audience is wrong);
 * - `issuer`: the id_token's `iss` is this instead of the IdP's issuer (likewise re-signed);
 * - `discovery`: `'not-json'` serves garbage at the discovery document, `'wrong-issuer'` a
 *   document naming another issuer, `'down'` answers 503.
 * - `acr`: the authentication context class the login reports in the id_token's `acr`.
 */
export interface IdpMisbehaviour {
  omitClaims?: string[];
  audience?: string;
  issuer?: string;
  discovery?: 'not-json' | 'wrong-issuer' | 'down';
  acr?: string;
}

export interface OidcIdp {
  /** The issuer, e.g. `http://127.0.0.1:40123` (the SSO config's authority). */
  issuer: string;
  /** The users, by sub; add or change users at any time. */
  users: Map<string, IdpUser>;
  /** Requests the IdP took (method and path), for tests that check what Strongroom called. */
  requests: { method: string; path: string }[];
  misbehave(next: IdpMisbehaviour): void;
  close(): Promise<void>;
}

const DISCOVERY_PATH = '/.well-known/openid-configuration';

// oidc-provider warns on import that Node 20 is not an LTS it supports (it works), and that the
// in-memory adapter is for development: both are expected here and would only be noise.
const QUIET = [/Unsupported runtime/, /in-memory adapter/];

async function quietly<T>(work: () => T | Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && QUIET.some((re) => re.test(args[0] as string))) return;
    warn(...args);
  };
  try {
    return await work();
  } finally {
    console.warn = warn;
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function decodeHtml(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginPage(uid: string, error?: string): string {
  return `<!doctype html><html><head><title>Test IdP sign-in</title></head><body>
<h1>Sign in to the test IdP</h1>${error ? `<p id="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label>Username <input name="login" id="login" autofocus></label>
<label>Password <input name="password" id="password" type="password"></label>
<button type="submit" id="submit">Sign in</button>
</form></body></html>`;
}

/** Starts the IdP on 127.0.0.1 at a free port. */
export async function startOidcIdp(options: { clients: IdpClient[]; users: IdpUser[] }): Promise<OidcIdp> {
  const Provider = await quietly(async () => (await import('oidc-provider')).default);
  const users = new Map(options.users.map((u) => [u.sub, u]));
  const requests: { method: string; path: string }[] = [];
  let behaviour: IdpMisbehaviour = {};

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk: JWK = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };

  const server: Server = createServer();
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const claimsOf = (user: IdpUser): Record<string, unknown> => {
    const all: Record<string, unknown> = { sub: user.sub, email: user.email, email_verified: user.email_verified ?? true, name: user.name };
    for (const omitted of behaviour.omitClaims ?? []) delete all[omitted];
    return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
  };

  const provider = await quietly(() => new Provider(issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: c.redirect_uris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: c.token_endpoint_auth_method ?? 'client_secret_post',
    })),
    jwks: { keys: [signingJwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    acrValues: ['urn:test:mfa', 'urn:test:password'],
    // Claims go into the id_token too, as most IdPs put them there: the userinfo path is
    // tested by the SSO config's getClaimsFromUserInfoEndpoint.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: [randomUUID()] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    findAccount: (_ctx, sub) => {
      const user = users.get(sub);
      if (!user) return undefined;
      return { accountId: sub, claims: () => claimsOf(user) };
    },
    // Every client here is first-party: the user consents by logging in, as at a company IdP.
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      const clientId = ctx.oidc.client?.clientId;
      if (!accountId || !clientId) return undefined;
      const existing = ctx.oidc.session?.grantIdFor(clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({ accountId, clientId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><html><body><h1>IdP error</h1><p id="error">${escapeHtml(String(out.error))}: ${escapeHtml(String(out.error_description ?? ''))}</p></body></html>`;
    },
  }));

  // Re-sign the id_token with the wrong audience or issuer, so that only that one check fails.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path !== '/token' || ctx.method !== 'POST' || (!behaviour.audience && !behaviour.issuer)) return;
    const body = ctx.body as { id_token?: string } | undefined;
    if (!body?.id_token) return;
    const claims = decodeJwt(body.id_token);
    const header = decodeProtectedHeader(body.id_token);
    const key = await importJWK(signingJwk, 'RS256');
    body.id_token = await new SignJWT({ ...claims, ...(behaviour.audience ? { aud: behaviour.audience } : {}), ...(behaviour.issuer ? { iss: behaviour.issuer } : {}) })
      .setProtectedHeader({ alg: 'RS256', kid: header.kid, typ: header.typ })
      .sign(key);
  });

  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    requests.push({ method: req.method ?? 'GET', path });
    void handle(req, res, path).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path === DISCOVERY_PATH && behaviour.discovery) {
      if (behaviour.discovery === 'down') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
        return;
      }
      if (behaviour.discovery === 'not-json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not a discovery document</html>');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        issuer: 'https://another-issuer.example', authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'],
      }));
      return;
    }
    const login = /^\/interaction\/([^/]+)\/login$/.exec(path);
    const page = /^\/interaction\/([^/]+)$/.exec(path);
    if (page && req.method === 'GET') {
      const details = await provider.interactionDetails(req, res);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(loginPage(details.uid));
      return;
    }
    if (login && req.method === 'POST') {
      const details = await provider.interactionDetails(req, res);
      const form = await readForm(req);
      const user = [...users.values()].find((u) => u.sub === form.get('login') || u.email === form.get('login'));
      if (!user || user.password !== form.get('password')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(loginPage(details.uid, 'Wrong username or password.'));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: user.sub, ...(behaviour.acr ? { acr: behaviour.acr } : {}) } }, { mergeWithLastSubmission: false });
      return;
    }
    callback(req, res);
  }

  return {
    issuer,
    users,
    requests,
    misbehave(next) {
      behaviour = { ...next };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a browser ends with after `loginThroughIdp`. */
export interface IdpLoginResult {
  /** The status of the last response (a redirect's 302/303, or an error page's 4xx). */
  status: number;
  /** Where the last response sent the browser (the client's redirect_uri with code and state), if it redirected. */
  location?: URL;
  /** The body of the last response, when it was not a redirect (an error page). */
  body: string;
  /** Every URL the browser visited, in order. */
  visited: string[];
}

/** A cookie jar by host:port, enough for a loopback browser (no paths, no expiry). */
class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();
  take(url: URL, response: Response): void {
    const jar = this.jars.get(url.host) ?? new Map<string, string>();
    this.jars.set(url.host, jar);
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }
  header(url: URL): string | undefined {
    const jar = this.jars.get(url.host);
    if (!jar || jar.size === 0) return undefined;
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Plays the browser of an SSO login: from Strongroom's authorize URL (`startUrl`), follows the
 * redirects to the IdP, posts the user's login and password on its page, and follows the
 * redirects back through Strongroom's callback. Stops at the first redirect leaving Strongroom's
 * callback (the client's redirect_uri with `code` and `state`), or at any page that is neither
 * a redirect nor the IdP's login form (an error page), and answers what it ended with.
 */
export async function loginThroughIdp(
  startUrl: string,
  user: { login?: string; sub?: string; email?: string; password: string },
  /** `rewrite`: where the browser really goes for a URL (the fleet test sends the callback to a chosen instance). */
  /** `stopAtCallback`: answer the callback URL (as `location`) instead of visiting it, to time the callbacks (a GET callback only). */
  options: { callbackPath?: string; maxSteps?: number; rewrite?: (url: URL) => URL; stopAtCallback?: boolean } = {},
): Promise<IdpLoginResult> {
  const callbackPath = options.callbackPath ?? '/sso/oidc-signin';
  const jar = new CookieJar();
  const visited: string[] = [];
  let url = new URL(startUrl);
  let init: RequestInit = { method: 'GET' };
  let submitted = false;
  for (let step = 0; step < (options.maxSteps ?? 20); step++) {
    if (options.rewrite) url = options.rewrite(url);
    if (options.stopAtCallback && url.pathname.endsWith(callbackPath)) return { status: 0, location: url, body: '', visited };
    visited.push(url.toString());
    const cookie = jar.header(url);
    const headers = new Headers(init.headers);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    jar.take(url, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      await response.body?.cancel();
      if (url.pathname.endsWith(callbackPath)) return { status: response.status, location: next, body: '', visited };
      url = next;
      init = { method: 'GET' };
      continue;
    }
    const body = await response.text();
    const form = /<form method="post" action="(\/interaction\/[^"]+\/login)"/.exec(body);
    if (form && response.status === 200 && !submitted) {
      submitted = true;
      url = new URL(form[1]!, url);
      const login = user.login ?? user.sub ?? user.email ?? '';
      init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ login, password: user.password }).toString() };
      continue;
    }
    // response_mode=form_post: the IdP's page posts the code to the callback by script.
    const autoPost = /<form method="post" action="([^"]+)">/.exec(body);
    if (autoPost && response.status === 200 && !autoPost[1]!.includes('/interaction/')) {
      const fields = [...body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map(([, k, v]): [string, string] => [k!, decodeHtml(v!)]);
      url = new URL(decodeHtml(autoPost[1]!), url);
      init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() };
      continue;
    }
    return { status: response.status, body, visited };
  }
  throw new Error(`loginThroughIdp: no end after ${options.maxSteps ?? 20} steps: ${visited.join(' -> ')}`);
}
