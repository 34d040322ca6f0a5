/**
 * Secrets Manager seeding for route tests: an organization with Secrets Manager and an owner
 * who reaches it, machine accounts and access tokens made through the real routes (with the
 * encrypted payload the official web app builds), and the machine login the SDK performs.
 */
import { randomBytes } from 'node:crypto';
import { OrganizationUserType } from '../../src/features/organizations/roles.js';
import { actor, ENC, type Actor } from './admin.js';
import { encryptText, encryptToEncString, rsaEncryptToEncString, smAccessTokenKey, type SymmetricKey, generateSymmetricKey } from './bw-crypto.js';
import { seedOrganization } from './orgs.js';
import type { TestServer } from './test-server.js';

let seeded = 0;

/**
 * A member of `organizationId` with Secrets Manager access (unless `accessSecretsManager` is
 * false), logged in. With `orgKey`, their membership holds it wrapped with their public key,
 * where the official clients look for the organization key.
 */
export async function smActor(
  server: TestServer,
  organizationId: string,
  opts: { type?: OrganizationUserType; accessSecretsManager?: boolean; orgKey?: SymmetricKey; email?: string } = {},
): Promise<Actor> {
  const email = opts.email ?? `sm${++seeded}-${randomBytes(4).toString('hex')}@example.com`;
  const who = await actor(server, organizationId, email, { type: opts.type ?? OrganizationUserType.User });
  await server.database.db
    .updateTable('organization_users')
    .set({ access_secrets_manager: opts.accessSecretsManager ?? true, ...(opts.orgKey ? { key: rsaEncryptToEncString(opts.orgKey.raw, who.account.publicKeyB64) } : {}) })
    .where('id', '=', who.memberId)
    .execute();
  return who;
}

/** An organization with Secrets Manager, its owner (with Secrets Manager access) and its 64-byte key. */
export async function smOrg(server: TestServer): Promise<{ orgId: string; owner: Actor; orgKey: SymmetricKey }> {
  const orgId = await seedOrganization(server, { overrides: { use_secrets_manager: true } });
  const orgKey = generateSymmetricKey();
  const owner = await smActor(server, orgId, { type: OrganizationUserType.Owner, orgKey });
  return { orgId, owner, orgKey };
}

/** Creates a machine account through `POST /organizations/{id}/service-accounts`; answers its id. */
export async function createMachineAccount(server: TestServer, token: string, orgId: string, name: string = ENC): Promise<string> {
  const res = await server.request('POST', `/api/organizations/${orgId}/service-accounts`, { token, json: { name } });
  if (res.status !== 200) throw new Error(`machine account creation failed: ${res.status} ${res.text}`);
  return String(res.body.id);
}

export interface MachineToken {
  id: string;
  clientSecret: string;
  /** What a user pastes into the SDK or `bws`: `0.<id>.<clientSecret>:<base64 16-byte key secret>`. */
  accessToken: string;
}

/**
 * Creates an access token as the web app does: a random 16-byte secret derives the token key;
 * `encryptedPayload` carries the organization key under it, `key` is it under the organization key.
 */
export async function createAccessToken(
  server: TestServer,
  token: string,
  serviceAccountId: string,
  orgKey: SymmetricKey,
  opts: { expireAt?: string | null } = {},
): Promise<MachineToken> {
  const secret = randomBytes(16);
  const tokenKey = smAccessTokenKey(secret);
  const body = {
    name: encryptText('test token', orgKey),
    encryptedPayload: encryptText(JSON.stringify({ encryptionKey: orgKey.raw.toString('base64') }), tokenKey),
    key: encryptToEncString(tokenKey.raw.toString('base64'), orgKey),
    ...(opts.expireAt !== undefined ? { expireAt: opts.expireAt } : {}),
  };
  const res = await server.request('POST', `/api/service-accounts/${serviceAccountId}/access-tokens`, { token, json: body });
  if (res.status !== 200) throw new Error(`access token creation failed: ${res.status} ${res.text}`);
  const id = String(res.body.id);
  const clientSecret = String(res.body.clientSecret);
  return { id, clientSecret, accessToken: `0.${id}.${clientSecret}:${secret.toString('base64')}` };
}

/** The form the SDK posts to log in with an access token string. */
export function machineLoginForm(accessToken: string): Record<string, string> {
  const match = /^0\.([0-9a-f-]{36})\.([^:]+):/.exec(accessToken);
  if (!match) throw new Error('not an access token string');
  return { grant_type: 'client_credentials', scope: 'api.secrets', client_id: match[1] as string, client_secret: match[2] as string };
}

/** Logs in as the SDK does (`/identity/connect/token`, client_credentials); answers the bearer token. */
export async function machineLogin(server: TestServer, accessToken: string): Promise<string> {
  const res = await server.request('POST', '/identity/connect/token', { form: machineLoginForm(accessToken) });
  if (res.status !== 200) throw new Error(`machine login failed: ${res.status} ${res.text}`);
  return String(res.body.access_token);
}
