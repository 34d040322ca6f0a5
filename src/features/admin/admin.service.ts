import type { Clock } from '../../clock.js';
import type { Config } from '../../config/config.js';
import type { Database, Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { Features } from '../../wiring.js';
import type { MailLog } from '../mail/mailer.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../organizations/roles.js';
import type { AdminAudit } from './admin-audit.js';
import { listUsersPage, membershipsOfUsers, type Page } from './admin.repository.js';

/** Who did it: the console's operator, known by address. */
export interface Operator {
  ipAddress: string | null;
  log: MailLog;
}

export const ROLE_NAMES: Record<number, string> = {
  [OrganizationUserType.Owner]: 'Owner',
  [OrganizationUserType.Admin]: 'Admin',
  [OrganizationUserType.User]: 'User',
  [OrganizationUserType.Custom]: 'Custom',
};
export const STATUS_NAMES: Record<number, string> = {
  [OrganizationUserStatusType.Invited]: 'invited',
  [OrganizationUserStatusType.Accepted]: 'accepted',
  [OrganizationUserStatusType.Confirmed]: 'confirmed',
  [OrganizationUserStatusType.Revoked]: 'revoked',
};

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 16).replace('T', ' ') : null);
const latest = (...dates: (string | null)[]) => dates.filter((d): d is string => Boolean(d)).sort().at(-1) ?? null;

/**
 * What the console does. Every change goes through the service the API and the `strongroom`
 * commands use (accounts, organizations, licenses, mailer), then the admin log records it;
 * only the listings are the console's own read queries (admin.repository.ts).
 */
export function createAdminService(deps: { db: Db; clock: Clock; config: Config; features: Features; audit: AdminAudit; database: Database }) {
  const { db, features, audit } = deps;
  const accounts = features.accounts;

  async function userOrThrow(userId: string) {
    const user = await accounts.findUser({ id: userId });
    if (!user) throw new NotFound('There is no such user.');
    return user;
  }

  return {
    db,
    deps,
    audit,

    async users(search: string, page: Page) {
      const { rows, total } = await listUsersPage(db, search, page);
      const memberships = await membershipsOfUsers(
        db,
        rows.map((r) => r.id),
      );
      const users = rows.map((row) => ({
        id: row.id,
        email: row.email,
        name: row.name,
        created: day(row.creation_date),
        lastActivity: day(latest(row.last_token, row.last_device)),
        emailVerified: Boolean(row.email_verified),
        disabled: Boolean(row.disabled),
        items: Number(row.items),
        organizations: memberships.filter((m) => m.user_id === row.id).map((m) => m.name),
      }));
      return { users, total };
    },

    getUser: userOrThrow,

    async invite(email: string, operator: Operator) {
      const result = await accounts.inviteByOperator(email, operator.log);
      await audit.record({ action: 'user-invited', targetType: 'user', detail: result.email, ipAddress: operator.ipAddress });
      return result;
    },

    async setDisabled(userId: string, disabled: boolean, operator: Operator) {
      const user = await userOrThrow(userId);
      const changed = await accounts.setDisabled(user, disabled);
      if (changed) await audit.record({ action: disabled ? 'user-disabled' : 'user-enabled', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.ipAddress });
      return { user, changed };
    },

    async endSessions(userId: string, operator: Operator) {
      const user = await userOrThrow(userId);
      await accounts.endSessions(user.id);
      await audit.record({ action: 'user-sessions-ended', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.ipAddress });
      return user;
    },

    async deleteUser(userId: string, confirm: string, operator: Operator) {
      const user = await userOrThrow(userId);
      if (confirm.trim().toLowerCase() !== user.email) throw BadRequest.field('confirm', `Type the account's email (${user.email}) to confirm the deletion.`);
      await accounts.removeAccount(user);
      await audit.record({ action: 'user-deleted', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.ipAddress });
      return user;
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
