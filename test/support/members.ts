import { randomUUID } from 'node:crypto';
import { OrganizationUserStatusType, OrganizationUserType, type Permissions } from '../../src/platform/access/roles.js';
import type { PlanType } from '../../src/features/organizations/plans.js';
import { seedAccount, type LoggedInUser } from './accounts.js';
import { seedMembership, seedOrganization } from './orgs.js';
import type { TestServer } from './test-server.js';

export interface SeededMember extends LoggedInUser {
  memberId: string;
}

/** A logged-in account (`seedAccount`) with a membership of the given role and status. */
export async function memberOf(
  server: TestServer,
  organizationId: string,
  opts: { type?: OrganizationUserType; status?: OrganizationUserStatusType; permissions?: Partial<Permissions>; email?: string } = {},
): Promise<SeededMember> {
  const user = await seedAccount(server, opts.email ? { email: opts.email } : {});
  const memberId = await seedMembership(server, {
    organizationId,
    userId: user.userId,
    type: opts.type ?? OrganizationUserType.User,
    status: opts.status ?? OrganizationUserStatusType.Confirmed,
    key: '4.aGVsbG8=',
  });
  if (opts.permissions) {
    const permissions = JSON.stringify(opts.permissions);
    await server.database.db.updateTable('organization_users').set({ permissions }).where('id', '=', memberId).execute();
  }
  return { ...user, memberId };
}

/**
 * An organization with one confirmed owner, as a logged-in member (`memberOf`) with a fresh email.
 * admin.ts's `orgWithOwner` adds a stranger from another organization, for permission tables.
 */
export async function orgWithOwner(server: TestServer, opts: { planType?: PlanType; name?: string } = {}) {
  const orgId = await seedOrganization(server, opts);
  const owner = await memberOf(server, orgId, { type: OrganizationUserType.Owner });
  return { orgId, owner };
}

export async function seedPolicy(server: TestServer, organizationId: string, type: number, enabled = true): Promise<void> {
  const now = new Date().toISOString();
  await server.database.db
    .insertInto('policies')
    .values({ id: randomUUID(), organization_id: organizationId, type, enabled, data: null, creation_date: now, revision_date: now })
    .execute();
}

/**
 * The organization-user audit events (15xx), oldest first; of the given organizations only, for a
 * test on a server its file shares.
 */
export async function memberEvents(server: TestServer, organizationIds?: string[]) {
  let query = server.database.db
    .selectFrom('events')
    .select(['type', 'organization_id', 'organization_user_id', 'acting_user_id'])
    .where('type', '>=', 1500)
    .where('type', '<', 1600);
  if (organizationIds) query = query.where('organization_id', 'in', organizationIds);
  return query.orderBy('seq').execute();
}

export async function memberEventTypes(server: TestServer, organizationIds?: string[]): Promise<number[]> {
  return (await memberEvents(server, organizationIds)).map((e) => e.type);
}

/** The `data` of a list response, typed for the fields tests read. */
export function dataOf(body: unknown): { id: string; error: string; organizationUserId: string; [field: string]: unknown }[] {
  return (body as { data: { id: string; error: string; organizationUserId: string }[] }).data;
}

export async function memberRow(server: TestServer, id: string) {
  return server.database.db.selectFrom('organization_users').selectAll().where('id', '=', id).executeTakeFirst();
}
