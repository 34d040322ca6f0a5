import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createSecretBox } from '../../src/platform/auth/secret-box.js';
import { MemberDecryptionType, saveSsoConfig, ssoSecretPurpose, SsoType, type SsoConfigData } from '../../src/features/sso/sso-config.repository.js';
import { startOidcIdp, type IdpUser, type OidcIdp } from './oidc-idp.js';
import { seedOrganization } from './orgs.js';
import { sharedDatabaseUrl } from './shared-database.js';
import { startTestServer, type TestServer } from './test-server.js';

/**
 * A Strongroom server and real OIDC identity providers on loopback for the SSO login tests: the
 * server's PUBLIC_URL is known before it starts, so that each IdP can list its callback.
 */

export const SECRETS_KEY = randomBytes(32).toString('base64');
const secretBox = createSecretBox(Buffer.from(SECRETS_KEY, 'base64'));

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export interface WorldIdp {
  idp: OidcIdp;
  clientId: string;
  clientSecret: string;
}

export interface SsoWorld {
  server: TestServer;
  publicUrl: string;
  idps: WorldIdp[];
  /** With `fleet`: a second instance on the same database and PUBLIC_URL, on a port of its own. */
  other?: TestServer;
  close(): Promise<void>;
}

/** `idps`: the users of each identity provider to start (one client each, `strongroom-<n>`). */
export async function startSsoWorld(idpUsers: IdpUser[][], env: Record<string, string> = {}, fleet = false): Promise<SsoWorld> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const idps = await Promise.all(
    idpUsers.map(async (users, n): Promise<WorldIdp> => {
      const clientId = `strongroom-${n}`;
      const clientSecret = `secret-${n}-${randomUUID()}`;
      const idp = await startOidcIdp({ clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [`${publicUrl}/sso/oidc-signin`] }], users });
      return { idp, clientId, clientSecret };
    }),
  );
  const serverEnv = { PUBLIC_URL: publicUrl, SECRETS_KEY, SSO_ALLOW_PRIVATE_ADDRESSES: 'true', ...env };
  const databaseUrl = fleet ? await sharedDatabaseUrl() : undefined;
  const server = await startTestServer({ port, env: serverEnv, ...(databaseUrl ? { databaseUrl } : {}) });
  const other = databaseUrl ? await startTestServer({ env: serverEnv, databaseUrl }) : undefined;
  return {
    server,
    publicUrl,
    idps,
    ...(other ? { other } : {}),
    async close() {
      await other?.close();
      await server.close();
      for (const { idp } of idps) await idp.close();
    },
  };
}

/** An organization with SSO on, pointed at the IdP; its client secret is the IdP's, sealed as the config routes seal it. */
export async function ssoOrganization(server: TestServer, { idp, clientId, clientSecret }: WorldIdp, opts: { identifier?: string; data?: Partial<SsoConfigData>; seats?: number | null } = {}) {
  const identifier = opts.identifier ?? `org-${randomUUID().slice(0, 8)}`;
  const orgId = await seedOrganization(server, { name: `Org ${identifier}`, overrides: { identifier, ...(opts.seats !== undefined ? { seats: opts.seats } : {}) } });
  const now = new Date().toISOString();
  await saveSsoConfig(server.database.db, {
    organizationId: orgId,
    enabled: true,
    data: {
      configType: SsoType.OpenIdConnect,
      memberDecryptionType: MemberDecryptionType.MasterPassword,
      authority: idp.issuer,
      clientId,
      clientSecret: secretBox.seal(clientSecret, ssoSecretPurpose(orgId)),
      redirectBehavior: 0,
      getClaimsFromUserInfoEndpoint: false,
      ...opts.data,
    },
    creationDate: now,
    revisionDate: now,
  });
  return { orgId, identifier };
}

/** What the CLI makes before opening the browser: its PKCE pair and state, and the authorize URL. */
export async function cliAuthorizeUrl(world: SsoWorld, identifier: string, extra: Record<string, string> = {}, base = world.publicUrl) {
  const prevalidate = await world.server.request('GET', `/identity/sso/prevalidate?domainHint=${encodeURIComponent(identifier)}`);
  if (prevalidate.status !== 200) throw new Error(`prevalidate failed: ${prevalidate.status} ${prevalidate.text}`);
  const verifier = randomBytes(48).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const redirectUri = 'http://localhost:8065';
  const query = new URLSearchParams({
    client_id: 'cli',
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'api offline_access',
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    response_mode: 'query',
    domain_hint: identifier,
    ssoToken: String(prevalidate.body.token),
    ...extra,
  });
  return { url: `${base}/identity/connect/authorize?${query.toString()}`, verifier, state, redirectUri };
}

/** The CLI's token request with the code it was sent back with. */
export function codeGrantForm(code: string, verifier: string, redirectUri = 'http://localhost:8065', clientId = 'cli'): Record<string, string> {
  return { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId, scope: 'api offline_access', deviceType: '8', deviceIdentifier: randomUUID(), deviceName: 'linux' };
}
