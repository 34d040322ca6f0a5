import type { Executor } from '../../db/database.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { EmergencyAccessStatus, EmergencyAccessType } from '../emergency-access/emergency-access-status.js';
import { grantsAsGrantee, grantsAsGrantor, recoveryOfMemberships, type GrantRow } from './user-details.repository.js';

/**
 * At most this many rows of each list on a user's page (trusted contacts, grantors,
 * memberships); the page says how many more there are. Bitwarden sets no limit on emergency
 * contacts, so the bound is the console's own: far above what a person names, small enough
 * for one page.
 */
export const USER_DETAILS_LIMIT = 100;

/** Emergency access types and statuses in words, by Bitwarden's numbers. */
export const GRANT_TYPE_NAMES: Record<number, string> = { [EmergencyAccessType.View]: 'view', [EmergencyAccessType.Takeover]: 'takeover' };
export const GRANT_STATUS_NAMES: Record<number, string> = {
  [EmergencyAccessStatus.Invited]: 'invited',
  [EmergencyAccessStatus.Accepted]: 'accepted',
  [EmergencyAccessStatus.Confirmed]: 'confirmed',
  [EmergencyAccessStatus.RecoveryInitiated]: 'recovery initiated',
  [EmergencyAccessStatus.RecoveryApproved]: 'recovery approved',
};

const minute = (iso: string) => iso.slice(0, 16).replace('T', ' ');

/**
 * Where a recovery stands, in words: a waiting one says since when and when the wait ends (the
 * grantor may still reject it before then); other statuses have nothing waiting.
 */
function recoveryOf(row: GrantRow): string | null {
  if (!row.recovery_initiated_date) return null;
  const since = new Date(row.recovery_initiated_date);
  if (Number.isNaN(since.getTime())) return null;
  const status = row.status as EmergencyAccessStatus;
  if (status === EmergencyAccessStatus.RecoveryInitiated) {
    const ends = new Date(since.getTime() + row.wait_time_days * 86_400_000).toISOString();
    return `waiting since ${minute(since.toISOString())} UTC; the wait ends ${minute(ends)} UTC`;
  }
  if (status === EmergencyAccessStatus.RecoveryApproved) return `asked ${minute(since.toISOString())} UTC, approved`;
  return null;
}

function grantView(row: GrantRow) {
  return {
    email: row.other_email ?? '',
    name: row.other_name,
    type: GRANT_TYPE_NAMES[row.type] ?? String(row.type),
    status: GRANT_STATUS_NAMES[row.status] ?? String(row.status),
    waitDays: row.wait_time_days,
    recovery: recoveryOf(row),
    created: minute(row.creation_date),
  };
}

/**
 * What the console shows of one account beyond its row in the list: the emergency access it
 * gave and was given, and per membership whether it is enrolled in account recovery and
 * whether the organization's Account recovery policy is on. Read-only.
 */
export async function readUserDetails(db: Executor, user: UserRow) {
  const [asGrantor, asGrantee, memberships] = await Promise.all([
    grantsAsGrantor(db, user.id, USER_DETAILS_LIMIT),
    grantsAsGrantee(db, user, USER_DETAILS_LIMIT),
    recoveryOfMemberships(db, user.id, USER_DETAILS_LIMIT),
  ]);
  return {
    forcePasswordReset: Boolean(user.force_password_reset),
    trustedContacts: { rows: asGrantor.rows.map(grantView), total: asGrantor.total },
    grantors: { rows: asGrantee.rows.map(grantView), total: asGrantee.total },
    memberships: {
      rows: memberships.rows.map((m) => ({
        organizationId: m.organization_id,
        name: m.name,
        type: m.type,
        status: m.status,
        enrolled: Boolean(m.enrolled),
        policy: !m.use_reset_password ? 'not in the plan' : m.policy_enabled ? 'on' : 'off',
      })),
      total: memberships.total,
    },
  };
}
