import { PermanentDeliveryError } from '../push-delivery/channel.js';
import type { Clock } from '../../shared/clock.js';

/**
 * Talks to Bitwarden's push relay as a self-hosted Bitwarden server does
 * (bitwarden/server src/Core/Services/Implementations/BaseIdentityClientService.cs): an access
 * token from the identity server's `connect/token` with the installation's client credentials
 * and scope `api.push`, then JSON calls to the relay's `push/...` routes with it as a bearer.
 */
export interface RelayClientSettings {
  installationId: string;
  installationKey: string;
  /** PUSH_RELAY_URI, e.g. https://push.bitwarden.com */
  relayUri: string;
  /** PUSH_IDENTITY_URI, e.g. https://identity.bitwarden.com */
  identityUri: string;
  /** Per request, token included (default 10 s): a hanging relay must not hold the outbox's worker. */
  timeoutMs?: number;
}

/** What the health check and metrics show of the relay: never a token or the key. */
export interface RelayStatus {
  lastSuccessAt: string | null;
  lastError: { at: string; message: string } | null;
}

export interface RelayClient {
  call(method: 'POST' | 'PUT', path: string, body: unknown): Promise<void>;
  status(): RelayStatus;
}

/** A failure another attempt may mend (5xx, 401, 408, 429, timeout, network): the outbox retries. */
export class RelayUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelayUnavailableError';
  }
}

// Installation tokens live 24 h (bitwarden/server InstallationClientProvider.cs); renew a few minutes early.
const RENEW_BEFORE_MS = 5 * 60_000;
const FALLBACK_LIFETIME_MS = 60 * 60_000;

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}

/** Seconds the token lives: `expires_in`, else the JWT's `exp`, else an hour. */
function lifetimeMs(body: { access_token: string; expires_in?: unknown }, now: number): number {
  if (typeof body.expires_in === 'number' && body.expires_in > 0) return body.expires_in * 1000;
  try {
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    if (typeof claims.exp === 'number') return Math.max(0, claims.exp * 1000 - now);
  } catch {
    // Not a JWT we can read: fall back.
  }
  return FALLBACK_LIFETIME_MS;
}

export function createRelayClient(settings: RelayClientSettings, deps: { clock: Clock; fetch?: typeof fetch }): RelayClient {
  const timeoutMs = settings.timeoutMs ?? 10_000;
  const doFetch = deps.fetch ?? fetch;
  let token: { value: string; renewAt: number } | null = null;
  // One token request at a time: concurrent deliveries wait for the same answer.
  let tokenRequest: Promise<string> | null = null;
  const state: RelayStatus = { lastSuccessAt: null, lastError: null };

  const fail = (error: Error): never => {
    state.lastError = { at: deps.clock.now().toISOString(), message: error.message };
    throw error;
  };

  /** Runs a request under the timeout; network failures and timeouts become retryable errors naming only the URL's path. */
  async function send(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await doFetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      return fail(new RelayUnavailableError(timedOut ? `${what}: no answer within ${timeoutMs} ms` : `${what}: ${error instanceof Error ? error.message : 'request failed'}`));
    }
  }

  async function requestToken(): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'api.push',
      client_id: `installation.${settings.installationId}`,
      client_secret: settings.installationKey,
    });
    const res = await send(
      joinUrl(settings.identityUri, 'connect/token'),
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() },
      'relay token',
    );
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      // A refused key is the operator's to fix; retrying keeps messages until it is (the outbox bounds the attempts).
      const hint = res.status === 400 || res.status === 401 ? ' (check INSTALLATION_ID, INSTALLATION_KEY and PUSH_IDENTITY_URI)' : '';
      return fail(new RelayUnavailableError(`relay token: identity answered ${res.status}${hint}`));
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      return fail(new RelayUnavailableError('relay token: the identity server answered no JSON'));
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') return fail(new RelayUnavailableError('relay token: no access_token in the answer'));
    const now = deps.clock.now().getTime();
    const lifetime = lifetimeMs({ access_token: body.access_token, expires_in: body.expires_in }, now);
    token = { value: body.access_token, renewAt: now + Math.max(lifetime - RENEW_BEFORE_MS, lifetime / 2) };
    return body.access_token;
  }

  async function accessToken(): Promise<string> {
    if (token && deps.clock.now().getTime() < token.renewAt) return token.value;
    tokenRequest ??= requestToken().finally(() => {
      tokenRequest = null;
    });
    return tokenRequest;
  }

  return {
    async call(method, path, body) {
      const bearer = await accessToken();
      const res = await send(
        joinUrl(settings.relayUri, path),
        { method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) },
        path,
      );
      // The body is never read into an error: the relay's messages may echo what was sent.
      await res.body?.cancel().catch(() => undefined);
      if (res.ok) {
        state.lastSuccessAt = deps.clock.now().toISOString();
        state.lastError = null;
        return;
      }
      if (res.status === 401) {
        // The relay no longer takes the token (revoked, clock skew): ask for a new one next time.
        if (token?.value === bearer) token = null;
        return fail(new RelayUnavailableError(`${path}: relay answered 401`));
      }
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
        return fail(new PermanentDeliveryError(`${path}: relay refused the message (${res.status})`));
      }
      return fail(new RelayUnavailableError(`${path}: relay answered ${res.status}`));
    },
    status: () => ({ ...state, lastError: state.lastError ? { ...state.lastError } : null }),
  };
}
