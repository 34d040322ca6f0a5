import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A loopback stand-in for Bitwarden's push relay and its identity server, speaking their HTTP
 * API as a self-hosted server meets it: `POST /connect/token` (client_credentials with
 * `installation.<id>`, the key as secret, scope `api.push`) and the `push/...` routes, which
 * need the bearer token and record what they got. Tests switch it to fail, hang or refuse.
 */
export interface RelayCall {
  method: string;
  path: string;
  body: unknown;
  authorization: string | undefined;
}

export type RelayMode = 'ok' | 'fail' | 'hang' | 'refuse' | 'reject';

export interface RelayDouble {
  /** Base URL for both PUSH_RELAY_URI and PUSH_IDENTITY_URI. */
  url: string;
  installationId: string;
  installationKey: string;
  /** Every accepted `push/...` call, in order. */
  calls: RelayCall[];
  /** Requests received in `hang` mode and never answered (the path and method only). */
  held: { method: string; path: string }[];
  /** Token requests answered (with 200). */
  tokensIssued: number;
  /** The bodies of every token request, for checking the form (the test's own key only). */
  tokenForms: Record<string, string>[];
  /** ok: 200; fail: 500; hang: never answers; refuse: drops the connection; reject: 400. */
  mode: RelayMode;
  /** The `expires_in` of tokens issued from now on. */
  tokenLifetimeSeconds: number;
  /** The relay stops taking the tokens issued so far (answers 401). */
  revokeTokens(): void;
  reset(): void;
  close(): Promise<void>;
}

const PUSH_ROUTES: Record<string, string> = {
  '/push/register': 'POST',
  '/push/delete': 'POST',
  '/push/add-organization': 'PUT',
  '/push/delete-organization': 'PUT',
  '/push/send': 'POST',
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function fakeJwt(expSeconds: number): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ scope: ['api.push'], exp: expSeconds, jti: randomUUID() })}.sig`;
}

export async function startRelayDouble(options: { installationId?: string; installationKey?: string } = {}): Promise<RelayDouble> {
  const valid = new Set<string>();
  const sockets = new Set<Socket>();
  const double: RelayDouble = {
    url: '',
    installationId: options.installationId ?? randomUUID(),
    installationKey: options.installationKey ?? `key-${randomUUID()}`,
    calls: [],
    held: [],
    tokensIssued: 0,
    tokenForms: [],
    mode: 'ok',
    tokenLifetimeSeconds: 86_400,
    revokeTokens: () => valid.clear(),
    reset() {
      double.calls.length = 0;
      double.held.length = 0;
      double.tokenForms.length = 0;
      double.tokensIssued = 0;
      double.mode = 'ok';
      double.tokenLifetimeSeconds = 86_400;
      // Tokens issued before stay good, as a relay's would: revokeTokens() ends them.
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://relay').pathname;
      if (double.mode === 'hang') {
        double.held.push({ method: req.method ?? '', path });
        return;
      }
      if (double.mode === 'refuse') {
        req.socket.destroy();
        return;
      }
      if (path === '/connect/token' && req.method === 'POST') {
        const form = Object.fromEntries(new URLSearchParams(text));
        double.tokenForms.push(form);
        if (double.mode === 'fail') return json(res, 500, { message: 'down' });
        const ok =
          form.grant_type === 'client_credentials' &&
          form.scope === 'api.push' &&
          form.client_id === `installation.${double.installationId}` &&
          form.client_secret === double.installationKey &&
          req.headers['content-type']?.startsWith('application/x-www-form-urlencoded');
        if (!ok) return json(res, 400, { error: 'invalid_client' });
        const token = fakeJwt(Math.floor(Date.now() / 1000) + double.tokenLifetimeSeconds);
        valid.add(token);
        double.tokensIssued++;
        return json(res, 200, { access_token: token, expires_in: double.tokenLifetimeSeconds, token_type: 'Bearer', scope: 'api.push' });
      }
      const method = PUSH_ROUTES[path];
      if (!method || method !== req.method) return json(res, 404, { message: 'not found' });
      const bearer = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
      if (!valid.has(bearer)) return json(res, 401, { message: 'unauthorized' });
      if (double.mode === 'fail') return json(res, 500, { message: 'relay down' });
      if (double.mode === 'reject') return json(res, 400, { message: 'The model state is invalid.' });
      if (!req.headers['content-type']?.startsWith('application/json')) return json(res, 415, { message: 'json only' });
      double.calls.push({ method: req.method, path, body: JSON.parse(text) as unknown, authorization: req.headers.authorization });
      res.writeHead(200);
      res.end();
    })();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return double;
}
