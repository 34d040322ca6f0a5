import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { BadRequest, ServiceUnavailable, TooManyRequests } from '../../http/errors.js';
import { OAuthError } from '../../http/error-handler.js';
import { isGuid } from '../../http/ids.js';
import type { ClientContext } from '../../http/request-context.js';
import { findOrganization } from '../../platform/access/memberships.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findUserById } from '../../platform/auth/users.repository.js';
import type { Clock } from '../../shared/clock.js';
import type { SsoRedemption, TokenForm } from '../identity/identity.service.js';
import { LimitsUnavailable } from '../rate-limits/failover-store.js';
import type { LimitStore } from '../rate-limits/limit-store.js';
import { SsoRefusal, type JitMembers } from './jit-members.js';
import { identityOf } from './oidc-claims.js';
import { IdpProblem, type OidcClient } from './oidc-client.js';
import { readSsoConfig, readSsoConfigByIdentifier, type SsoConfig } from './sso-config.repository.js';
import { redirectUrisOf } from './sso-login.clients.js';
import { digest, findCode, findFlow, insertCode, insertFlow, purgeExpired, spendCode, spendFlow } from './sso-login.repository.js';

/**
 * The SSO login (docs/sso.md "How a login goes"): prevalidate → authorize → the identity
 * provider → our callback → the client's redirect with our code → the token endpoint.
 */

const SSO_TOKEN_TYP = 'sso-prevalidate';
const LINK_TOKEN_TYP = 'sso-link';
/** The official ssoToken lives 5 s; a browser that takes a while to open needs more. */
const SSO_TOKEN_SECONDS = 120;
const LINK_TOKEN_SECONDS = 300;
const FLOW_SECONDS = 600;
const CODE_SECONDS = 300;
const INVALID_IDENTIFIER = 'Invalid SSO identifier';
/** Logins started per client address: enough for people behind one NAT, too few to flood an IdP. */
const START_BUCKET = { intervalMs: 3000, burst: 20 };

/** An authorize request refused before its redirect_uri can be trusted: answered here, as a page. */
export class UntrustedRedirect extends Error {}

/** An authorize request refused after: sent back to the client's redirect_uri as OAuth says. */
export class AuthorizeError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly redirectUri: string,
    readonly state: string | undefined,
  ) {
    super(description);
  }
  location(): string {
    const url = new URL(this.redirectUri);
    url.searchParams.set('error', this.error);
    url.searchParams.set('error_description', this.description);
    if (this.state !== undefined) url.searchParams.set('state', this.state);
    return url.toString();
  }
}

/** A login that cannot go on in the browser (the person sees a page naming the problem). */
export class SsoPageError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const pkceChallenge = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const random = () => randomBytes(32).toString('base64url');

export function createSsoLogin(deps: { db: Db; clock: Clock; keys: SigningKeys; oidc: OidcClient; jit: JitMembers; limits: LimitStore; publicUrl: string }) {
  const { db, clock, keys } = deps;
  const callbackUrl = `${deps.publicUrl.replace(/\/+$/, '')}/sso/oidc-signin`;

  async function throttle(what: string, client: ClientContext): Promise<void> {
    const key = `sso-${what}:${client.ipAddress ?? 'unknown'}`;
    let decision: Awaited<ReturnType<LimitStore['consume']>>;
    try {
      decision = await deps.limits.consume([{ key, ...START_BUCKET }], clock.now().getTime());
    } catch (error) {
      // Closed mode while the shared store is out of use: a page to retry, as the token endpoint's 503.
      if (error instanceof LimitsUnavailable) throw new ServiceUnavailable(error.message, error.retryAfterSeconds);
      throw error;
    }
    if (!decision.allowed) throw new TooManyRequests('Too many single sign-on attempts from your address. Wait a minute and try again.', Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
  }

  /**
   * An organization's SSO settings when a login may go through them: both turned on. Not the
   * organization's plan flag (use_sso): SSO is offered to every organization (#42).
   */
  async function enabledSso(config: SsoConfig | undefined) {
    const org = config?.enabled ? await findOrganization(db, config.organizationId) : undefined;
    return config && org?.enabled ? { config, org } : undefined;
  }

  async function enabledConfigByIdentifier(identifier: string) {
    return enabledSso(await readSsoConfigByIdentifier(db, identifier));
  }

  return {
    /** `GET /identity/sso/prevalidate`: the organization's ssoToken, short-lived and signed. */
    async prevalidate(domainHint: string | undefined): Promise<{ token: string }> {
      const found = domainHint?.trim() ? await enabledConfigByIdentifier(domainHint.trim()) : undefined;
      if (!found) throw new BadRequest(INVALID_IDENTIFIER);
      return { token: await keys.sign({ org: found.org.id }, { typ: SSO_TOKEN_TYP, expiresInSeconds: SSO_TOKEN_SECONDS }) };
    },

    /** `GET /api/accounts/sso/user-identifier`: `<user id>,<token>`, to link this account on the next SSO login. */
    async userIdentifier(userId: string): Promise<string> {
      const user = await findUserById(db, userId);
      const token = await keys.sign({ sub: userId, stamp: user?.security_stamp ?? '' }, { typ: LINK_TOKEN_TYP, expiresInSeconds: LINK_TOKEN_SECONDS });
      return `${userId},${token}`;
    },

    /** `GET /identity/connect/authorize`: where to send the browser (the identity provider). */
    async authorize(query: Record<string, string | undefined>, client: ClientContext): Promise<string> {
      const clientId = query.client_id ?? '';
      const allowed = redirectUrisOf(clientId, deps.publicUrl);
      if (!allowed) throw new UntrustedRedirect(`Unknown client_id "${clientId}".`);
      const redirectUri = query.redirect_uri ?? '';
      if (!allowed.includes(redirectUri)) throw new UntrustedRedirect(`The redirect_uri "${redirectUri}" is not allowed for client "${clientId}".`);
      const state = query.state;
      const refuse = (error: string, description: string) => new AuthorizeError(error, description, redirectUri, state);
      if (query.response_type !== 'code') throw refuse('unsupported_response_type', 'response_type must be code.');
      const scopes = (query.scope ?? '').split(' ').filter(Boolean);
      if (!scopes.includes('api') || scopes.some((s) => s !== 'api' && s !== 'offline_access')) throw refuse('invalid_scope', 'scope must be api, with offline_access if wanted.');
      const codeChallenge = query.code_challenge ?? '';
      if (!/^[A-Za-z0-9_-]{43}$/.test(codeChallenge) || query.code_challenge_method !== 'S256') throw refuse('invalid_request', 'A code_challenge with code_challenge_method S256 is required.');
      const domainHint = query.domain_hint?.trim();
      if (!domainHint) throw refuse('invalid_request', 'No domain_hint provided.');
      const found = await enabledConfigByIdentifier(domainHint);
      if (!found) throw refuse('invalid_request', 'Organization not found or SSO configuration not enabled.');
      const ssoToken = query.ssotoken ?? query.ssoToken ?? '';
      const claims = ssoToken ? await keys.verify(ssoToken, { typ: SSO_TOKEN_TYP }) : null;
      if (!claims) throw refuse('access_denied', 'A valid SSO token is required; it expires soon after prevalidation. Start the login again.');
      if (claims.org !== found.org.id) throw refuse('access_denied', 'The SSO token is for another organization.');
      let linkUserId: string | null = null;
      if (query.user_identifier) {
        const [userId = '', token = ''] = query.user_identifier.split(',');
        const link = token !== '' && isGuid(userId) ? await keys.verify(token, { typ: LINK_TOKEN_TYP }) : null;
        const user = link && link.sub === userId ? await findUserById(db, userId) : undefined;
        if (!user || link?.stamp !== user.security_stamp) throw refuse('access_denied', 'Supplied userId and token did not match.');
        linkUserId = user.id;
      }
      await throttle('start', client);

      const idpState = random();
      const codeVerifier = random();
      const nonce = random();
      const now = clock.now();
      let destination: URL;
      try {
        destination = await deps.oidc.authorizationUrl(found.config, { redirectUri: callbackUrl, state: idpState, nonce, codeVerifier });
      } catch (error) {
        if (error instanceof IdpProblem) throw new SsoPageError(error.message, 502);
        throw error;
      }
      await purgeExpired(db, new Date(now.getTime() - 86_400_000).toISOString());
      await insertFlow(db, {
        state_hash: digest(idpState),
        organization_id: found.org.id,
        client_id: clientId,
        redirect_uri: redirectUri,
        client_state: state ?? null,
        code_challenge: codeChallenge,
        code_verifier: codeVerifier,
        nonce,
        link_user_id: linkUserId,
        creation_date: now.toISOString(),
        expiration_date: new Date(now.getTime() + FLOW_SECONDS * 1000).toISOString(),
        used: false,
      });
      return destination.toString();
    },

    /** `/sso/oidc-signin`: the provider's answer; where to send the browser (the client, with our code). */
    async callback(params: Record<string, string | undefined>, client: ClientContext): Promise<string> {
      await throttle('callback', client);
      const state = params.state;
      if (!state) throw new SsoPageError('The identity provider answered without a state: this is not the answer to a login started here.');
      const stateHash = digest(state);
      const flow = await findFlow(db, stateHash);
      if (!flow) throw new SsoPageError('This login is unknown here (its state is not one this server issued, or it was removed long after it expired).');
      if (flow.used) throw new SsoPageError('This login was already completed: its answer from the identity provider cannot be used twice.');
      const now = clock.now();
      if (new Date(flow.expiration_date).getTime() <= now.getTime()) throw new SsoPageError('This login took longer than 10 minutes and has expired.');
      if (!(await spendFlow(db, stateHash))) throw new SsoPageError('This login was already completed: its answer from the identity provider cannot be used twice.');
      if (params.error) throw new SsoPageError(`The identity provider refused the login: ${params.error}${params.error_description ? ` (${params.error_description})` : ''}.`);

      const sso = await enabledSso(await readSsoConfig(db, flow.organization_id));
      if (!sso) throw new SsoPageError('Organization not found or SSO configuration not enabled.');
      const { config, org } = sso;
      const answer = new URL(callbackUrl);
      for (const [name, value] of Object.entries(params)) if (value !== undefined) answer.searchParams.set(name, value);
      let claims: Record<string, unknown>;
      try {
        claims = await deps.oidc.exchange(config, answer, { state, nonce: flow.nonce, codeVerifier: flow.code_verifier });
      } catch (error) {
        if (error instanceof IdpProblem) throw new SsoPageError(error.message, 502);
        throw error;
      }
      const identity = identityOf(claims, config.data);
      if (!identity) throw new SsoPageError('The identity provider did not say who this person is (no sub claim, nor one of the configured user id claims).');
      const linkUser = flow.link_user_id ? ((await findUserById(db, flow.link_user_id)) ?? null) : null;
      const nowText = now.toISOString();
      const code = random();
      try {
        await db.transaction().execute(async (tx) => {
          const user = await deps.jit.resolve(tx, { org, identity, linkUser, client, now: nowText });
          await insertCode(tx, {
            code_hash: digest(code),
            user_id: user.id,
            organization_id: org.id,
            client_id: flow.client_id,
            redirect_uri: flow.redirect_uri,
            code_challenge: flow.code_challenge,
            creation_date: nowText,
            expiration_date: new Date(now.getTime() + CODE_SECONDS * 1000).toISOString(),
            used: false,
          });
        });
      } catch (error) {
        if (error instanceof SsoRefusal) throw new SsoPageError(error.message, 403);
        // Another login made the same account or link at that moment (two organizations' locks
        // do not exclude each other): nothing was written, a new login finds theirs.
        if (isUniqueViolation(error)) throw new SsoPageError('Another login for this person was completing at the same moment. Start the login again.', 409);
        throw error;
      }
      const back = new URL(flow.redirect_uri);
      back.searchParams.set('code', code);
      if (flow.client_state !== null) back.searchParams.set('state', flow.client_state);
      return back.toString();
    },

    /** The identity hook of `grant_type=authorization_code`: checks our code; spending it is the token endpoint's. */
    async redeem(form: TokenForm, _client: ClientContext): Promise<SsoRedemption> {
      const invalid = (why: string) => new OAuthError('invalid_grant', why);
      const code = form.code;
      if (!code) throw new OAuthError('invalid_request', 'code is required.');
      const codeHash = digest(code);
      const row = await findCode(db, codeHash);
      if (!row) throw invalid('The authorization code is invalid or has been used.');
      if (row.used) throw invalid('The authorization code is invalid or has been used.');
      if (new Date(row.expiration_date).getTime() <= clock.now().getTime()) throw invalid('The authorization code has expired.');
      if (form.client_id !== row.client_id) throw invalid('The authorization code was issued to another client.');
      if (form.redirect_uri !== row.redirect_uri) throw invalid('The redirect_uri differs from the one of the authorization request.');
      const verifier = form.code_verifier ?? '';
      if (!verifier || pkceChallenge(verifier) !== row.code_challenge) throw invalid('The code_verifier does not match the code_challenge.');
      const user = await findUserById(db, row.user_id);
      if (!user) throw invalid('The authorization code is invalid or has been used.');
      // SSO turned off since the callback stops the login here too.
      if (!(await enabledSso(await readSsoConfig(db, row.organization_id)))) throw invalid('Organization not found or SSO configuration not enabled.');
      return { user, organizationId: row.organization_id, spend: () => spendCode(db, codeHash) };
    },
  };
}

export type SsoLogin = ReturnType<typeof createSsoLogin>;
