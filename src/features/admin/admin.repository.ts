import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { twoFactorOn } from '../../platform/auth/two-factor-state.js';

/** The console's read-only listings: no rules here, only queries (every change goes through a feature's service). */

export interface Page {
  offset: number;
  limit: number;
}

/** `%term%` for LIKE, with the term's own wildcards taken literally. */
function likePattern(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface AdminUserRow {
  id: string;
  email: string;
  name: string | null;
  creation_date: string;
  email_verified: boolean | number;
  disabled: boolean | number;
  force_password_reset: boolean | number;
  two_factor_enabled: boolean | number;
  items: number | string | bigint;
  last_token: string | null;
  last_device: string | null;
}

/** Users whose email or name contains `search` (any case), oldest first, one page, with the total. */
export async function listUsersPage(db: Executor, search: string, page: Page): Promise<{ rows: AdminUserRow[]; total: number }> {
  const pattern = search ? likePattern(search) : null;
  let base = db.selectFrom('users');
  if (pattern) {
    base = base.where((eb) =>
      eb.or([eb(sql`lower(users.email)`, 'like', sql`${pattern} escape '\\'`), eb(sql`lower(coalesce(users.name, ''))`, 'like', sql`${pattern} escape '\\'`)]),
    );
  }
  const rows = await base
    .select((eb) => [
      'users.id',
      'users.email',
      'users.name',
      'users.creation_date',
      'users.email_verified',
      'users.disabled',
      'users.force_password_reset',
      // The two-factor feature's own test of "on", read in this query rather than once per row.
      twoFactorOn().as('two_factor_enabled'),
      eb.selectFrom('ciphers').select((inner) => inner.fn.countAll().as('n')).whereRef('ciphers.user_id', '=', 'users.id').as('items'),
      // Refresh tokens rotate on every use, so the newest one is the last time a client came back.
      eb.selectFrom('refresh_tokens').select((inner) => inner.fn.max('refresh_tokens.creation_date').as('d')).whereRef('refresh_tokens.user_id', '=', 'users.id').as('last_token'),
      eb.selectFrom('devices').select((inner) => inner.fn.max('devices.revision_date').as('d')).whereRef('devices.user_id', '=', 'users.id').as('last_device'),
    ])
    .orderBy('users.creation_date')
    .orderBy('users.id')
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return { rows: rows as AdminUserRow[], total: Number(count.n) };
}

/** The organizations of some users: name, role and status of each membership. */
export async function membershipsOfUsers(db: Executor, userIds: readonly string[]) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('organization_users')
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .select(['organization_users.user_id', 'organizations.id as organization_id', 'organizations.name', 'organization_users.type', 'organization_users.status'])
    .where('organization_users.user_id', 'in', userIds)
    .orderBy('organizations.name')
    .execute();
}

export interface AdminOrganizationRow {
  id: string;
  name: string;
  billing_email: string;
  plan_type: number;
  enabled: boolean | number;
  use_secrets_manager: boolean | number;
  creation_date: string;
  members: number | string | bigint;
  collections: number | string | bigint;
  items: number | string | bigint;
  secrets: number | string | bigint;
  machine_accounts: number | string | bigint;
}

/** Organizations whose name or billing email contains `search` (or the one `onlyId`), by name, one page, with counts. */
export async function listOrganizationsPage(db: Executor, search: string, page: Page, onlyId?: string): Promise<{ rows: AdminOrganizationRow[]; total: number }> {
  const pattern = search ? likePattern(search) : null;
  let base = db.selectFrom('organizations');
  if (onlyId) base = base.where('organizations.id', '=', onlyId);
  if (pattern) {
    base = base.where((eb) =>
      eb.or([eb(sql`lower(organizations.name)`, 'like', sql`${pattern} escape '\\'`), eb(sql`lower(organizations.billing_email)`, 'like', sql`${pattern} escape '\\'`)]),
    );
  }
  const rows = await base
    .select((eb) => [
      'organizations.id',
      'organizations.name',
      'organizations.billing_email',
      'organizations.plan_type',
      'organizations.enabled',
      'organizations.use_secrets_manager',
      'organizations.creation_date',
      eb.selectFrom('organization_users').select((i) => i.fn.countAll().as('n')).whereRef('organization_users.organization_id', '=', 'organizations.id').as('members'),
      eb.selectFrom('collections').select((i) => i.fn.countAll().as('n')).whereRef('collections.organization_id', '=', 'organizations.id').as('collections'),
      eb.selectFrom('ciphers').select((i) => i.fn.countAll().as('n')).whereRef('ciphers.organization_id', '=', 'organizations.id').as('items'),
      eb.selectFrom('secrets').select((i) => i.fn.countAll().as('n')).whereRef('secrets.organization_id', '=', 'organizations.id').as('secrets'),
      eb.selectFrom('service_accounts').select((i) => i.fn.countAll().as('n')).whereRef('service_accounts.organization_id', '=', 'organizations.id').as('machine_accounts'),
    ])
    .orderBy('organizations.name')
    .orderBy('organizations.id')
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return { rows: rows as AdminOrganizationRow[], total: Number(count.n) };
}

/** One organization's members with their accounts (invited members have none yet). */
export async function membersOfOrganization(db: Executor, organizationId: string) {
  return db
    .selectFrom('organization_users')
    .leftJoin('users', 'users.id', 'organization_users.user_id')
    .select(['organization_users.id', 'organization_users.type', 'organization_users.status', 'organization_users.email as invited_email', 'users.email', 'users.name', 'users.id as user_id'])
    .where('organization_users.organization_id', '=', organizationId)
    .orderBy('organization_users.creation_date')
    .execute();
}
