import { randomUUID } from 'node:crypto';
import { PlanType } from '../../src/features/organizations/plans.js';
import { OrganizationUserStatusType, OrganizationUserType, type Permissions } from '../../src/platform/access/roles.js';
import { seedAccount } from './accounts.js';
import type { TestAccount } from './bw-crypto.js';
import { seedMembership, seedOrganization } from './orgs.js';
import type { TestServer } from './test-server.js';

/** A caller in the organization tests: their token and, when they have one, their membership id. */
export interface Actor {
  userId: string;
  token: string;
  memberId: string;
  /** The client-side account: its master password hash answers the server's secret checks. */
  account: TestAccount;
}

export const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * Logs in a seeded user (`seedAccount`; a fixed email, so the client-side account is made once
 * per process) and gives them a membership of the organization with the given role and status.
 */
export async function actor(
  server: TestServer,
  organizationId: string,
  email: string,
  opts: { type?: OrganizationUserType; status?: OrganizationUserStatusType; permissions?: Partial<Permissions> } = {},
): Promise<Actor> {
  const user = await seedAccount(server, { email });
  const memberId = await seedMembership(server, { organizationId, userId: user.userId, email, ...(opts.type !== undefined ? { type: opts.type } : {}), ...(opts.status !== undefined ? { status: opts.status } : {}) });
  if (opts.permissions) {
    await server.database.db.updateTable('organization_users').set({ permissions: JSON.stringify(opts.permissions) }).where('id', '=', memberId).execute();
  }
  return { userId: user.userId, token: user.accessToken, memberId, account: user.account };
}

let targets = 0;

/**
 * A user account inserted directly, with no keys and no password: for a membership that nobody
 * logs in as, so no key derivation is spent on it. Answers the user id.
 */
export async function seedUser(server: TestServer, email = `target${++targets}-${randomUUID().slice(0, 8)}@example.com`): Promise<string> {
  const userId = randomUUID();
  const now = new Date().toISOString();
  await server.database.db
    .insertInto('users')
    .values({
      id: userId,
      email,
      name: null,
      email_verified: true,
      master_password_hash: null,
      master_password_hint: null,
      master_password_salt: null,
      key: null,
      public_key: null,
      private_key: null,
      kdf: 0,
      kdf_iterations: 600_000,
      kdf_memory: null,
      kdf_parallelism: null,
      security_stamp: randomUUID(),
      api_key: randomUUID().replaceAll('-', '').slice(0, 30),
      user_key_id: null,
      premium: false,
      culture: 'en-US',
      avatar_color: null,
      equivalent_domains: null,
      excluded_global_equivalent_domains: null,
      force_password_reset: false,
      verify_devices: false,
      creation_date: now,
      revision_date: now,
      account_revision_date: now,
      last_password_change_date: null,
    })
    .execute();
  return userId;
}

/**
 * A member for an administrative call to act on. Unless invited, the member has an account,
 * inserted directly (`seedUser`).
 */
export async function seedTarget(
  server: TestServer,
  organizationId: string,
  opts: { type?: OrganizationUserType; status?: OrganizationUserStatusType } = {},
): Promise<string> {
  const email = `target${++targets}-${randomUUID().slice(0, 8)}@example.com`;
  const status = opts.status ?? OrganizationUserStatusType.Confirmed;
  const userId = status !== OrganizationUserStatusType.Invited ? await seedUser(server, email) : null;
  return seedMembership(server, {
    organizationId,
    userId,
    email: userId ? null : email,
    type: opts.type ?? OrganizationUserType.User,
    status,
    ...(status === OrganizationUserStatusType.Confirmed || status === OrganizationUserStatusType.Revoked ? { key: '4.aGVsbG8=' } : {}),
  });
}

/** An organization with a confirmed owner, and a stranger who owns another organization. */
export async function orgWithOwner(server: TestServer, planType = PlanType.EnterpriseAnnually, emails = { owner: 'owner@example.com', stranger: 'stranger@example.com' }) {
  const org = await seedOrganization(server, { planType });
  const owner = await actor(server, org, emails.owner, { type: OrganizationUserType.Owner });
  const otherOrg = await seedOrganization(server, { name: 'Other' });
  const stranger = await actor(server, otherOrg, emails.stranger, { type: OrganizationUserType.Owner });
  return { org, owner, otherOrg, stranger };
}

/** An email no other call gives: a server shared by a file's tests takes each email once. */
export function freshEmail(name: string): string {
  return `${name}-${randomUUID().slice(0, 8)}@example.com`;
}

/** `orgWithOwner` with fresh emails, for a test on a server its file shares. */
export function freshOrgWithOwner(server: TestServer, planType = PlanType.EnterpriseAnnually) {
  return orgWithOwner(server, planType, { owner: freshEmail('owner'), stranger: freshEmail('stranger') });
}

/**
 * An organization with a confirmed caller per named role (logged in as `<name>@example.com`),
 * its owner, and a stranger who owns another organization: the callers of a permission table.
 */
export async function orgWithCallers(server: TestServer, roles: Record<string, Parameters<typeof actor>[3]>): Promise<{ org: string; actors: Record<string, Actor> }> {
  const { org, owner, stranger } = await orgWithOwner(server);
  const actors: Record<string, Actor> = { owner, stranger };
  for (const [name, role] of Object.entries(roles)) {
    if (name !== 'owner') actors[name] = await actor(server, org, `${name}@example.com`, role);
  }
  return { org, actors };
}

/** Every kind of caller the permission matrices try, by name. */
export const ROLES = {
  owner: { type: OrganizationUserType.Owner },
  admin: { type: OrganizationUserType.Admin },
  user: { type: OrganizationUserType.User },
  manager: { type: OrganizationUserType.Manager },
  invited: { type: OrganizationUserType.Admin, status: OrganizationUserStatusType.Invited },
  accepted: { type: OrganizationUserType.Admin, status: OrganizationUserStatusType.Accepted },
  revoked: { type: OrganizationUserType.Admin, status: OrganizationUserStatusType.Revoked },
} as const;

export function custom(...flags: (keyof Permissions)[]) {
  return { type: OrganizationUserType.Custom, permissions: Object.fromEntries(flags.map((f) => [f, true])) as Partial<Permissions> };
}

export async function seedCollection(server: TestServer, organizationId: string, access: { users?: [string, Partial<Grant>?][]; groups?: [string, Partial<Grant>?][] } = {}): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const db = server.database.db;
  await db.insertInto('collections').values({ id, organization_id: organizationId, name: ENC, external_id: null, type: 0, creation_date: now, revision_date: now }).execute();
  for (const [member, g = {}] of access.users ?? []) {
    await db.insertInto('collection_users').values({ collection_id: id, organization_user_id: member, ...grantValues(g) }).execute();
  }
  for (const [group, g = {}] of access.groups ?? []) {
    await db.insertInto('collection_groups').values({ collection_id: id, group_id: group, ...grantValues(g) }).execute();
  }
  return id;
}

export async function seedGroup(server: TestServer, organizationId: string, members: string[] = [], accessAll = false): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await server.database.db.insertInto('groups').values({ id, organization_id: organizationId, name: 'Group', access_all: accessAll, external_id: null, creation_date: now, revision_date: now }).execute();
  for (const member of members) await server.database.db.insertInto('group_users').values({ group_id: id, organization_user_id: member }).execute();
  return id;
}

interface Grant {
  readOnly: boolean;
  hidePasswords: boolean;
  manage: boolean;
}

function grantValues(g: Partial<Grant>) {
  return { read_only: g.readOnly ?? false, hide_passwords: g.hidePasswords ?? false, manage: g.manage ?? false };
}

/** The audit events of one type, oldest first; of one organization's when it is named. */
export async function eventsOf(server: TestServer, type: number, organizationId?: string) {
  let query = server.database.db.selectFrom('events').selectAll().where('type', '=', type);
  if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
  return query.orderBy('seq').execute();
}
