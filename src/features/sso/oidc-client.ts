import type * as Oidc from 'openid-client';
import type { SecretBox } from '../../platform/auth/secret-box.js';
import { RefusedAddress } from '../../platform/net/outbound-address.js';
import { SECRETS_KEY_MISMATCH } from './secrets-key-check.js';
import type { SsoOperatorLog } from './sso-config.discovery.js';
import { ssoSecretPurpose, type SsoConfig } from './sso-config.repository.js';
import type { OidcFetch } from './oidc-fetch.js';

/**
 * Strongroom as the relying party of an organization's OpenID Connect provider: discovery
 * (cached per configuration revision, so a saved change takes effect at the next login), the
 * authorization URL, and the code exchange with its checks (PKCE, state, nonce, and the
 * id_token's signature against the provider's keys, issuer, audience and expiry).
 */

/** A problem with the identity provider itself, named for the person in the browser. */
export class IdpProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdpProblem';
  }
}

const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
/** Configurations kept at most; an organization's own is found again by its revision date. */
const CACHE_SIZE = 200;
/**
 * A failed discovery is remembered this long (per configuration revision), so a provider that
 * never answers, or whose name never resolves, cannot keep the shared resolver and sockets busy
 * with every login attempt; saving the configuration tries again at once.
 */
const FAILURE_MS = 30_000;

/** An error's message for the person in the browser: a refused address without what it resolved to. */
function shown(error: Error): string {
  return error instanceof RefusedAddress ? error.publicMessage : error.message;
}

function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${shown(error.cause)}` : '';
  return `${shown(error)}${cause}`;
}

/** The refused address behind a failed request, for the operator's log. */
function refusal(error: unknown): RefusedAddress | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof RefusedAddress) return e;
  return undefined;
}

/** openid-client is loaded at the first SSO login, not at every start (test/support/lazy-packages.ts). */
let loaded: Promise<typeof Oidc> | undefined;
const openidClient = (): Promise<typeof Oidc> => (loaded ??= import('openid-client'));

export function createOidcClient(deps: { secretBox: SecretBox; fetch: OidcFetch; timeoutMs: number; allowInsecure: boolean; log?: SsoOperatorLog; now?: () => number }) {
  const now = deps.now ?? Date.now;
  /** What the person sees; a refused address is logged with what it resolved to. */
  function problem(error: unknown, organizationId: string, message: (why: string) => string): IdpProblem {
    const refused = refusal(error);
    if (refused) deps.log?.warn({ organizationId, reason: refused.message }, 'an SSO login reached for a provider on a private address');
    return new IdpProblem(message(reason(error)));
  }

  const cache = new Map<string, { revision: string; configuration: Promise<Oidc.Configuration>; failedUntil?: number }>();

  async function discover(config: SsoConfig): Promise<Oidc.Configuration> {
    const oidc = await openidClient();
    const { data } = config;
    const where = data.metadataAddress?.trim() || data.authority;
    let url: URL;
    try {
      url = new URL(where);
    } catch {
      throw new IdpProblem(`The organization's SSO authority "${where}" is not a URL.`);
    }
    let secret: string;
    try {
      secret = deps.secretBox.open(data.clientSecret, ssoSecretPurpose(config.organizationId));
    } catch {
      deps.log?.error({ organizationId: config.organizationId, setting: 'SECRETS_KEY' }, SECRETS_KEY_MISMATCH);
      throw new IdpProblem(
        "The organization's SSO client secret cannot be read with this server's secrets key (SECRETS_KEY): the instances of the server may not share one SECRETS_KEY. Tell the server's operator; saving the SSO configuration with its client secret again also helps.",
      );
    }
    const execute = deps.allowInsecure && url.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
    return oidc
      .discovery(url, data.clientId, undefined, oidc.ClientSecretPost(secret), { [oidc.customFetch]: deps.fetch, timeout: Math.ceil(deps.timeoutMs / 1000), execute })
      .catch((error: unknown) => {
        throw problem(error, config.organizationId, (why) => `The identity provider's discovery document at ${url.origin} could not be used (${why}).`);
      });
  }

  async function configurationFor(config: SsoConfig): Promise<Oidc.Configuration> {
    const known = cache.get(config.organizationId);
    if (known && known.revision === config.revisionDate && (known.failedUntil === undefined || now() < known.failedUntil)) return known.configuration;
    const configuration = discover(config);
    cache.delete(config.organizationId);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    const entry: { revision: string; configuration: Promise<Oidc.Configuration>; failedUntil?: number } = { revision: config.revisionDate, configuration };
    cache.set(config.organizationId, entry);
    // A failed discovery answers the logins of the next FAILURE_MS with its problem, then is tried again.
    configuration.catch(() => {
      entry.failedUntil = now() + FAILURE_MS;
    });
    return configuration;
  }

  return {
    /** Where to send the browser: the provider's authorization endpoint with our PKCE, state and nonce. */
    async authorizationUrl(config: SsoConfig, request: { redirectUri: string; state: string; nonce: string; codeVerifier: string }): Promise<URL> {
      const oidc = await openidClient();
      const configuration = await configurationFor(config);
      const { data } = config;
      const scopes = [...new Set([...DEFAULT_SCOPES, ...(data.additionalScopes ?? '').split(/[\s,]+/).filter(Boolean)])];
      const parameters: Record<string, string> = {
        redirect_uri: request.redirectUri,
        scope: scopes.join(' '),
        state: request.state,
        nonce: request.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
        code_challenge_method: 'S256',
      };
      // RedirectBehavior 1 (form post) in the official configuration.
      if (data.redirectBehavior === 1) parameters.response_mode = 'form_post';
      if (data.acrValues?.trim()) parameters.acr_values = data.acrValues.trim();
      return oidc.buildAuthorizationUrl(configuration, parameters);
    },

    /**
     * Exchanges the code of the provider's answer (`answer`: the callback URL with its parameters)
     * and answers the claims of the checked id_token, with userinfo's when the configuration asks.
     */
    async exchange(config: SsoConfig, answer: URL, expected: { state: string; nonce: string; codeVerifier: string }): Promise<Record<string, unknown>> {
      const oidc = await openidClient();
      const configuration = await configurationFor(config);
      let tokens: Awaited<ReturnType<typeof Oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(configuration, answer, { pkceCodeVerifier: expected.codeVerifier, expectedState: expected.state, expectedNonce: expected.nonce, idTokenExpected: true });
      } catch (error) {
        throw problem(error, config.organizationId, (why) => `The identity provider's answer could not be accepted (${why}).`);
      }
      const claims: Record<string, unknown> = { ...tokens.claims() };
      const { data } = config;
      if (data.getClaimsFromUserInfoEndpoint) {
        try {
          Object.assign(claims, await oidc.fetchUserInfo(configuration, tokens.access_token, String(claims.sub)));
        } catch (error) {
          throw problem(error, config.organizationId, (why) => `The identity provider's userinfo endpoint could not be used (${why}).`);
        }
      }
      if (data.expectedReturnAcrValue?.trim() && claims.acr !== data.expectedReturnAcrValue.trim()) {
        throw new IdpProblem('Expected authentication context class reference (acr) was not returned with the authentication response or is invalid.');
      }
      return claims;
    },
  };
}

export type OidcClient = ReturnType<typeof createOidcClient>;
