/**
 * Secrets Manager seeding for route tests: an organization with Secrets Manager and an owner
 * who reaches it, machine accounts and access tokens made through the real routes (with the
 * encrypted payload the official web app builds), and the machine login the SDK performs.
 *
 * The `seed*` helpers below insert rows straight into the database instead: projects, secrets,
 * secret versions, machine accounts and access policies, with no events and no key derivation,
 * for tests that only need the rows to exist. Names and values default to `ENC`; dates default
 * to now, and take `date` where a test compares revision dates against a fixed one. Groups are
 * admin.ts's `seedGroup`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import { pino } from 'pino';
import type { AccessPoliciesTable } from '../../src/db/schema.js';
import type { Principal } from '../../src/http/access.js';
import { NO_CLIENT, type ClientContext } from '../../src/http/request-context.js';
import type { SmCaller } from '../../src/features/secrets-manager/sm-access.js';
import { OrganizationUserType, type Permissions } from '../../src/platform/access/roles.js';
import { actor, ENC, type Actor } from './admin.js';
import { encryptText, encryptToEncString, rsaEncryptToEncString, smAccessTokenKey, type SymmetricKey, generateSymmetricKey } from './bw-crypto.js';
import { seedOrganization } from './orgs.js';
import type { TestServer } from './test-server.js';

let seeded = 0;

const SILENT = pino({ enabled: false });

/** The caller of a Secrets Manager service that a test calls directly: `principal`, from `client`, logging nowhere. */
export function smCallerOf(principal: Principal, client: ClientContext = NO_CLIENT): SmCaller {
  return { principal, client, log: SILENT };
}

/**
 * A member of `organizationId` with Secrets Manager access (unless `accessSecretsManager` is
 * false), logged in. With `orgKey`, their membership holds it wrapped with their public key,
 * where the official clients look for the organization key.
 */
export async function smActor(
  server: TestServer,
  organizationId: string,
  opts: { type?: OrganizationUserType; permissions?: Partial<Permissions>; accessSecretsManager?: boolean; orgKey?: SymmetricKey; email?: string } = {},
): Promise<Actor> {
  const email = opts.email ?? `sm${++seeded}-${randomBytes(4).toString('hex')}@example.com`;
  const who = await actor(server, organizationId, email, { type: opts.type ?? OrganizationUserType.User, ...(opts.permissions ? { permissions: opts.permissions } : {}) });
  await server.database.db
    .updateTable('organization_users')
    .set({ access_secrets_manager: opts.accessSecretsManager ?? true, ...(opts.orgKey ? { key: rsaEncryptToEncString(opts.orgKey.raw, who.account.publicKeyB64) } : {}) })
    .where('id', '=', who.memberId)
    .execute();
  return who;
}

/** Sets the Secrets Manager flag of memberships inserted without it (`seedMembership`, `actor`). */
export async function allowSecretsManager(server: TestServer, memberIds: readonly string[], allowed = true): Promise<void> {
  if (memberIds.length === 0) return;
  await server.database.db.updateTable('organization_users').set({ access_secrets_manager: allowed }).where('id', 'in', memberIds).execute();
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
/**
 * The body the web app posts to create an access token: the name, the organization key in a
 * payload only the token's secret opens, and the token key under the organization key.
 */
export function accessTokenBody(orgKey: SymmetricKey, secret16: Buffer, name = 'test token') {
  const tokenKey = smAccessTokenKey(secret16);
  return {
    name: encryptText(name, orgKey),
    encryptedPayload: encryptText(JSON.stringify({ encryptionKey: orgKey.raw.toString('base64') }), tokenKey),
    key: encryptToEncString(tokenKey.raw.toString('base64'), orgKey),
  };
}

export async function createAccessToken(
  server: TestServer,
  token: string,
  serviceAccountId: string,
  orgKey: SymmetricKey,
  opts: { expireAt?: string | null } = {},
): Promise<MachineToken> {
  const secret = randomBytes(16);
  const body = { ...accessTokenBody(orgKey, secret), ...(opts.expireAt !== undefined ? { expireAt: opts.expireAt } : {}) };
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

/** Creation and revision date of a seeded row: `date`, or now. */
interface Dated {
  date?: string;
}

const dateOf = (opts: Dated) => opts.date ?? new Date().toISOString();

/** Inserts a project (no policies: an admin reaches it, a member only once granted); answers its id. */
export async function seedProject(server: TestServer, organizationId: string, opts: Dated & { name?: string } = {}): Promise<string> {
  const id = randomUUID();
  const date = dateOf(opts);
  await server.database.db.insertInto('projects').values({ id, organization_id: organizationId, name: opts.name ?? ENC, creation_date: date, revision_date: date }).execute();
  return id;
}

/** Inserts a machine account (no people policies, no access tokens); answers its id. */
export async function seedMachineAccount(server: TestServer, organizationId: string, opts: Dated & { name?: string } = {}): Promise<string> {
  const id = randomUUID();
  const date = dateOf(opts);
  await server.database.db.insertInto('service_accounts').values({ id, organization_id: organizationId, name: opts.name ?? ENC, creation_date: date, revision_date: date }).execute();
  return id;
}

/** Inserts a secret in `projectId` (or in none), in the trash with `trashed` (deleted at its date); answers its id. */
export async function seedSecret(
  server: TestServer,
  organizationId: string,
  projectId: string | null,
  opts: Dated & { key?: string; value?: string; note?: string; trashed?: boolean } = {},
): Promise<string> {
  const id = randomUUID();
  const date = dateOf(opts);
  await server.database.db
    .insertInto('secrets')
    .values({ id, organization_id: organizationId, project_id: projectId, key: opts.key ?? ENC, value: opts.value ?? ENC, note: opts.note ?? ENC, creation_date: date, revision_date: date, deleted_date: opts.trashed ? date : null })
    .execute();
  return id;
}

/** Inserts a stored earlier value of a secret, edited by nobody recorded; answers its id. */
export async function seedSecretVersion(server: TestServer, secretId: string, opts: Dated & { value?: string } = {}): Promise<string> {
  const id = randomUUID();
  await server.database.db
    .insertInto('secret_versions')
    .values({ id, secret_id: secretId, value: opts.value ?? ENC, version_date: dateOf(opts), editor_organization_user_id: null, editor_service_account_id: null })
    .execute();
  return id;
}

/** Who an access policy grants: a membership, a group, or a machine account (by id). */
export type PolicyGrantee = { member: string } | { group: string } | { machineAccount: string };
/** What an access policy grants on: a project, a secret, or a machine account (a people policy). */
export type PolicyGranted = { project: string } | { secret: string } | { machineAccount: string };
export interface Rights {
  read: boolean;
  write: boolean;
}
export const READ: Rights = { read: true, write: false };
export const READ_WRITE: Rights = { read: true, write: true };

/** The `access_policies` row of one grantee on one granted thing, for a test inserting several at once. */
export function policyRow(grantee: PolicyGrantee, granted: PolicyGranted, rights: Rights, opts: Dated = {}): Insertable<AccessPoliciesTable> {
  const date = dateOf(opts);
  return {
    id: randomUUID(),
    organization_user_id: 'member' in grantee ? grantee.member : null,
    group_id: 'group' in grantee ? grantee.group : null,
    service_account_id: 'machineAccount' in grantee ? grantee.machineAccount : null,
    granted_project_id: 'project' in granted ? granted.project : null,
    granted_secret_id: 'secret' in granted ? granted.secret : null,
    granted_service_account_id: 'machineAccount' in granted ? granted.machineAccount : null,
    read: rights.read,
    write: rights.write,
    creation_date: date,
    revision_date: date,
  };
}

/** Inserts one access policy (read+write unless told): `grantee` gets `rights` on `granted`. */
export async function seedPolicy(server: TestServer, grantee: PolicyGrantee, granted: PolicyGranted, rights: Rights = READ_WRITE, opts: Dated = {}): Promise<void> {
  await server.database.db.insertInto('access_policies').values(policyRow(grantee, granted, rights, opts)).execute();
}
