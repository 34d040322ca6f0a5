import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { PolicyType } from '../policies/policy-type.js';

/**
 * The console's read queries for one account's page: its emergency-access grants both ways and
 * its memberships with their account recovery state. Each list is read up to a limit, with its
 * full count, so an account with thousands of rows costs one page of them.
 */

export interface GrantRow {
  id: string;
  type: number;
  status: number;
  wait_time_days: number;
  recovery_initiated_date: string | null;
  creation_date: string;
  /** The other side of the grant: its account when there is one, else the invited address. */
  other_email: string | null;
  other_name: string | null;
}

const count = (n: number | string | bigint | undefined) => Number(n ?? 0);

/** The grant's own columns both lists show; each adds the other side's email and name. */
const GRANT_COLUMNS = [
  'emergency_access.id',
  'emergency_access.type',
  'emergency_access.status',
  'emergency_access.wait_time_days',
  'emergency_access.recovery_initiated_date',
  'emergency_access.creation_date',
] as const;

/** The grants where the user is the grantor: their trusted contacts, oldest first. */
export async function grantsAsGrantor(db: Executor, userId: string, limit: number): Promise<{ rows: GrantRow[]; total: number }> {
  const base = db.selectFrom('emergency_access').where('emergency_access.grantor_id', '=', userId);
  const rows = await base
    .leftJoin('users', 'users.id', 'emergency_access.grantee_id')
    .select([
      ...GRANT_COLUMNS,
      // Until the grantee accepts there is no account, only the address invited.
      sql<string | null>`coalesce(users.email, emergency_access.email)`.as('other_email'),
      'users.name as other_name',
    ])
    .orderBy('emergency_access.creation_date')
    .orderBy('emergency_access.id')
    .limit(limit)
    .execute();
  const total = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: count(total.n) };
}

/**
 * The grants where the user is the grantee: whose vault they may ask for, oldest first. An
 * invitation not yet accepted names the user by address only, so it is matched by email
 * (stored lower-cased by the invitation, and indexed).
 */
export async function grantsAsGrantee(db: Executor, user: { id: string; email: string }, limit: number): Promise<{ rows: GrantRow[]; total: number }> {
  const base = db
    .selectFrom('emergency_access')
    .where((eb) => eb.or([eb('emergency_access.grantee_id', '=', user.id), eb.and([eb('emergency_access.grantee_id', 'is', null), eb('emergency_access.email', '=', user.email.toLowerCase())])]));
  const rows = await base
    .innerJoin('users', 'users.id', 'emergency_access.grantor_id')
    .select([
      ...GRANT_COLUMNS,
      'users.email as other_email',
      'users.name as other_name',
    ])
    .orderBy('emergency_access.creation_date')
    .orderBy('emergency_access.id')
    .limit(limit)
    .execute();
  const total = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: count(total.n) };
}

export interface RecoveryMembershipRow {
  organization_id: string;
  name: string;
  type: number;
  status: number;
  /** The member's user key wrapped with the organization's key: present once enrolled. */
  enrolled: boolean | number;
  use_reset_password: boolean | number;
  policy_enabled: boolean | number | null;
}

/** The user's memberships by organization name, each with its enrollment and the organization's Account recovery policy. */
export async function recoveryOfMemberships(db: Executor, userId: string, limit: number): Promise<{ rows: RecoveryMembershipRow[]; total: number }> {
  const base = db.selectFrom('organization_users').where('organization_users.user_id', '=', userId);
  const rows = await base
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .leftJoin('policies', (join) => join.onRef('policies.organization_id', '=', 'organization_users.organization_id').on('policies.type', '=', PolicyType.ResetPassword))
    .select([
      'organizations.id as organization_id',
      'organizations.name',
      'organization_users.type',
      'organization_users.status',
      sql<boolean | number>`case when organization_users.reset_password_key is null then 0 else 1 end`.as('enrolled'),
      'organizations.use_reset_password',
      'policies.enabled as policy_enabled',
    ])
    .orderBy('organizations.name')
    .orderBy('organizations.id')
    .limit(limit)
    .execute();
  const total = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: count(total.n) };
}
