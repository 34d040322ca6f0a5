import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import type { Database, Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { AdminConsoleFeatures } from './admin-features.js';
import { NO_CLIENT, type OperatorCaller } from '../../http/request-context.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import type { AdminAudit } from './admin-audit.js';
import { randomUUID } from 'node:crypto';
import { InvitationNotMailed } from '../accounts/operator.service.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import { createLicenseIssuer, licenseTerms } from '../organizations/licenses.js';
import { PlanType, planFeatures } from '../organizations/plans.js';
import { listOrganizationsPage, listUsersPage, membersOfOrganization, membershipsOfUsers, type Page } from './admin.repository.js';
import { findOrganization } from '../../platform/access/memberships.js';
import { randomApiKey } from '../../platform/auth/api-keys.js';
import { readUserDetails } from './user-details.js';

/** Who did it: the console's operator, the first argument of every console use case that changes something. */
export type Operator = OperatorCaller;

/**
 * The operator of a console request (the admin session was checked by the console's guard),
 * known by address only: the console is no Bitwarden client, so its events carry no device.
 */
export function operatorOf(request: FastifyRequest): Operator {
  return { operator: true, client: { ...NO_CLIENT, ipAddress: request.ip ?? null }, log: request.log };
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

/** The plans a license may be issued for, by name (the official PlanType). */
export const PLAN_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(PlanType)
    .filter(([, value]) => typeof value === 'number')
    .map(([name, value]) => [value as number, name]),
);

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 16).replace('T', ' ') : null);
const latest = (...dates: (string | null)[]) => dates.filter((d): d is string => Boolean(d)).sort().at(-1) ?? null;

/**
 * What the console does. Every change goes through the service the API and the `strongroom`
 * commands use (accounts, organizations, licenses, mailer), then the admin log records it;
 * only the listings are the console's own read queries (admin.repository.ts).
 */
export function createAdminService(deps: { db: Db; clock: Clock; config: Config; features: AdminConsoleFeatures; audit: AdminAudit; database: Database }) {
  const { db, features, audit } = deps;
  const accounts = features.accounts;

  async function userOrThrow(userId: string) {
    const user = await accounts.findUser({ id: userId });
    if (!user) throw new NotFound('There is no such user.');
    return user;
  }

  /** An organization of the listing as its pages show it. */
  function organizationView(row: Awaited<ReturnType<typeof listOrganizationsPage>>['rows'][number]) {
    return {
      id: row.id,
      name: row.name,
      billingEmail: row.billing_email,
      plan: PLAN_NAMES[row.plan_type] ?? String(row.plan_type),
      enabled: Boolean(row.enabled),
      members: Number(row.members),
      collections: Number(row.collections),
      items: Number(row.items),
      secretsManager: row.use_secrets_manager ? `${Number(row.secrets)} secrets, ${Number(row.machine_accounts)} machine accounts` : 'not used',
      created: day(row.creation_date),
    };
  }

  async function organizationOrThrow(organizationId: string) {
    const org = await findOrganization(db, organizationId);
    if (!org) throw new NotFound('There is no such organization.');
    return org;
  }

  async function organizationDetails(organizationId: string) {
    const { rows } = await listOrganizationsPage(db, '', { offset: 0, limit: 1 }, organizationId);
    const [org] = rows;
    if (!org) throw new NotFound('There is no such organization.');
    const members = (await membersOfOrganization(db, org.id)).map((m) => ({
      email: m.email ?? m.invited_email ?? '',
      name: m.name,
      userId: m.user_id,
      role: ROLE_NAMES[m.type] ?? String(m.type),
      status: STATUS_NAMES[m.status] ?? String(m.status),
    }));
    return { org, view: organizationView(org), members };
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
        forcePasswordReset: Boolean(row.force_password_reset),
        twoStepLogin: Boolean(row.two_factor_enabled),
        items: Number(row.items),
        organizations: memberships.filter((m) => m.user_id === row.id).map((m) => m.name),
      }));
      return { users, total };
    },

    getUser: userOrThrow,

    /** One account's page: its facts, its emergency access both ways, its account recovery per membership. */
    async userDetails(userId: string) {
      const user = await userOrThrow(userId);
      const details = await readUserDetails(db, user);
      const memberships = details.memberships.rows.map((m) => ({ ...m, role: ROLE_NAMES[m.type] ?? String(m.type), status: STATUS_NAMES[m.status] ?? String(m.status) }));
      return {
        user: { id: user.id, email: user.email, name: user.name, created: day(user.creation_date), disabled: Boolean(user.disabled) },
        ...details,
        memberships: { rows: memberships, total: details.memberships.total },
      };
    },

    /**
     * Invites by mail; without SMTP, or when the mail server refuses the message, the page shows
     * the link to pass on and says why (the invitation exists either way, so it is logged).
     */
    async invite(operator: Operator, email: string): Promise<{ email: string; link: string; mailed: boolean; why: string | null }> {
      let result: { email: string; link: string; mailed: boolean; why: string | null };
      try {
        result = { ...(await accounts.inviteByOperator(operator, email)), why: null };
      } catch (error) {
        if (!(error instanceof InvitationNotMailed)) throw error;
        result = { email: normalizeEmail(email), link: error.link, mailed: false, why: error.message };
      }
      if (!result.mailed) result.why ??= 'SMTP is not configured (SMTP_HOST), so no mail was sent.';
      await audit.record({ action: 'user-invited', targetType: 'user', detail: result.email, ipAddress: operator.client.ipAddress });
      return result;
    },

    async setDisabled(operator: Operator, userId: string, disabled: boolean) {
      const user = await userOrThrow(userId);
      const changed = await accounts.setDisabled(user, disabled);
      if (changed) await audit.record({ action: disabled ? 'user-disabled' : 'user-enabled', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.client.ipAddress });
      return { user, changed };
    },

    async resendVerification(operator: Operator, userId: string) {
      const user = await userOrThrow(userId);
      const result = await deps.features.accountEmails.sendVerification({ userId: user.id, client: operator.client, log: operator.log });
      await audit.record({ action: 'user-verification-sent', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.client.ipAddress });
      return result;
    },

    async endSessions(operator: Operator, userId: string) {
      const user = await userOrThrow(userId);
      await accounts.endSessions(user.id);
      await audit.record({ action: 'user-sessions-ended', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.client.ipAddress });
      return user;
    },

    /** Whether the user has two-step login on, as the two-factor feature sees it (the confirmation page asks). */
    async twoStepLoginOn(userId: string) {
      const user = await userOrThrow(userId);
      return { user, on: await features.twoFactor.isEnabled(user.id) };
    },

    /** Every provider off through the two-factor feature's service (it refuses with 400 when none is on). */
    async removeTwoStepLogin(operator: Operator, userId: string, confirm: string) {
      const user = await userOrThrow(userId);
      if (confirm.trim().toLowerCase() !== user.email) throw BadRequest.field('confirm', `Type the account's email (${user.email}) to confirm.`);
      await features.twoFactor.removeByOperator(operator, user.id);
      await audit.record({ action: 'user-two-step-login-removed', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.client.ipAddress });
      return user;
    },

    async organizations(search: string, page: Page, onlyId?: string) {
      const { rows, total } = await listOrganizationsPage(db, search, page, onlyId);
      return { organizations: rows.map(organizationView), total };
    },

    organization: organizationDetails,

    async setOrganizationEnabled(operator: Operator, organizationId: string, enabled: boolean) {
      const org = await organizationOrThrow(organizationId);
      const changed = await features.organizations.setEnabled(org.id, enabled);
      if (changed) await audit.record({ action: enabled ? 'organization-enabled' : 'organization-disabled', targetType: 'organization', targetId: org.id, detail: org.name, ipAddress: operator.client.ipAddress });
      return changed;
    },

    async deleteOrganization(operator: Operator, organizationId: string, confirm: string) {
      const org = await organizationOrThrow(organizationId);
      if (confirm.trim() !== org.name) throw BadRequest.field('confirm', `Type the organization's name (${org.name}) to confirm the deletion.`);
      await features.organizations.remove(org.id);
      await audit.record({ action: 'organization-deleted', targetType: 'organization', targetId: org.id, detail: org.name, ipAddress: operator.client.ipAddress });
    },

    /**
     * A license file for a new organization, signed with this instance's issuer key, as
     * `strongroom license issue` makes it: the web vault's self-hosted "new organization"
     * page uploads it.
     */
    async issueLicense(operator: Operator, input: { name: string; planType: number; billingEmail: string; days: number; seats: number | null }) {
      if (!planFeatures(input.planType)) throw BadRequest.field('planType', 'Unknown plan.');
      const issuer = createLicenseIssuer({ db, clock: deps.clock });
      const expires = new Date(deps.clock.now().getTime() + input.days * 86_400_000).toISOString();
      const license = await issuer.issue(
        licenseTerms({
          id: randomUUID(),
          licenseKey: randomApiKey(),
          name: input.name,
          billingEmail: input.billingEmail,
          installationId: deps.config.installationId ?? null,
          planType: input.planType,
          ...(input.seats !== null ? { seats: input.seats } : {}),
          expires,
        }),
      );
      await audit.record({ action: 'license-issued', targetType: 'organization', targetId: license.id, detail: input.name, ipAddress: operator.client.ipAddress });
      return license;
    },

    /** Names of the organizations and acting users a page of events mentions. */
    async namesOf(rows: readonly { organization_id: string | null; acting_user_id: string | null }[]) {
      const orgIds = [...new Set(rows.flatMap((r) => (r.organization_id ? [r.organization_id] : [])))];
      const userIds = [...new Set(rows.flatMap((r) => (r.acting_user_id ? [r.acting_user_id] : [])))];
      const orgs = orgIds.length > 0 ? await db.selectFrom('organizations').select(['id', 'name']).where('id', 'in', orgIds).execute() : [];
      const users = userIds.length > 0 ? await db.selectFrom('users').select(['id', 'email']).where('id', 'in', userIds).execute() : [];
      return { organizations: new Map(orgs.map((o) => [o.id, o.name])), users: new Map(users.map((u) => [u.id, u.email])) };
    },

    /** Every organization by name, for the events filter. */
    organizationNames: () => db.selectFrom('organizations').select(['id', 'name']).orderBy('name').execute(),

    async deleteUser(operator: Operator, userId: string, confirm: string) {
      const user = await userOrThrow(userId);
      if (confirm.trim().toLowerCase() !== user.email) throw BadRequest.field('confirm', `Type the account's email (${user.email}) to confirm the deletion.`);
      await accounts.removeAccount(user);
      await audit.record({ action: 'user-deleted', targetType: 'user', targetId: user.id, detail: user.email, ipAddress: operator.client.ipAddress });
      return user;
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
