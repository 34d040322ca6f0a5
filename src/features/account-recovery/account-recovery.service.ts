import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { findMembershipOfUser, findOrganization } from '../../platform/access/memberships.js';
import { actingOf, type MemberCaller, type Membership } from '../../platform/access/org-access.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { accountKdf, accountSalt, hasNewMasterPassword, noNewMasterPassword, sameKdf, setMasterPassword } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { masterPasswordMatches } from '../../platform/auth/secret-verification.js';
import { findUserById, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { logOutPush, userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import type { Clock } from '../../shared/clock.js';
import { sendOrLog } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import { findMember, type MemberRow } from '../members/members.repository.js';
import { findPolicy } from '../policies/policies.repository.js';
import { MemberDecryptionType, readSsoConfig } from '../sso/sso-config.repository.js';
import { autoEnrollsInRecovery } from '../policies/policy-data.js';
import { PolicyType } from '../policies/policy-type.js';
import { pushChange, turnOffTwoFactor } from '../two-factor/two-factor-rules.js';
import { lockMember, lockUser, membersWithAccounts } from './account-recovery.repository.js';
import { toResetPasswordDetails, type EnrollmentBody, type NewPasswordPayload, type ResetPasswordDetailsResponse, type UpdateTempPasswordBody } from './account-recovery.schemas.js';
import { prepareNewPassword, type PreparedPassword } from './new-password.js';

/** The official server's refusals, word for word: the web vault shows them as they come. */
export const REFUSALS = {
  userNotValid: 'User not valid.',
  enrollmentNotAllowed: 'Organization does not allow password reset enrollment.',
  resetNotAllowed: 'Organization does not allow password reset.',
  policyNotEnabled: 'Organization does not have the password reset policy enabled.',
  withdrawalRefused: 'Due to an Enterprise policy, you are not allowed to withdraw from account recovery.',
  incorrectPassword: 'Incorrect password',
  notPermitted: "You are not permitted to recover this user's account.",
  noAction: 'At least one recovery action must be requested.',
  memberNotValid: 'Organization User not valid.',
  noTemporaryPassword: 'User does not have a temporary password to update.',
  /** Strongroom's own: the official server has no such race check to word it. */
  accountChanged: 'The account changed while the new password was prepared; try again.',
} as const;

/** Members an account recovery may reach: the official validator's statuses (an invited one has no account yet). */
const RECOVERABLE = [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed, OrganizationUserStatusType.Revoked];

/** The account still has the security stamp, salt and KDF a new password was checked and made against. */
function sameAccount(read: UserRow, locked: UserRow): boolean {
  return read.security_stamp === locked.security_stamp && accountSalt(read) === accountSalt(locked) && sameKdf(accountKdf(read), accountKdf(locked));
}

/** The membership is still the one authorized and found recoverable: same account, role and escrowed key, and a recoverable status. */
function sameEnrollment(read: MemberRow, locked: MemberRow): boolean {
  return locked.user_id === read.user_id && locked.type === read.type && locked.reset_password_key === read.reset_password_key && RECOVERABLE.includes(locked.status);
}

/** The organization's SSO is on with trusted devices (member decryption option 2). */
async function usesTrustedDevices(db: Db, organizationId: string): Promise<boolean> {
  const config = await readSsoConfig(db, organizationId);
  return config?.enabled === true && config.data.memberDecryptionType === MemberDecryptionType.TrustedDeviceEncryption;
}

/**
 * Whether the caller may recover a member of `target`'s role: an owner only by an owner, an
 * admin by an owner or admin, anyone else by those or a custom member with manageResetPassword
 * (the official RecoverAccountAuthorizationHandler; the route's rule has already asked for that right).
 */
export function mayRecover(actor: Pick<Membership, 'type' | 'rights'>, target: OrganizationUserType): boolean {
  if (target === OrganizationUserType.Owner) return actor.type === OrganizationUserType.Owner;
  if (target === OrganizationUserType.Admin) return actor.type === OrganizationUserType.Owner || actor.type === OrganizationUserType.Admin;
  return actor.rights.has('manageResetPassword');
}

/** What an admin asks a recovery to do: the current route's flags, or the deprecated route's password only. */
export interface RecoveryRequest extends NewPasswordPayload {
  resetMasterPassword: boolean;
  resetTwoFactor: boolean;
}

/**
 * Account recovery (policy 8, "Account recovery administration"): a member escrows their user key
 * with the organization, an admin who may sets them a new master password (and may turn their
 * two-step login off), and the member replaces that temporary password at their next login.
 */
export function createAccountRecovery(deps: { db: Db; clock: Clock; hasher: PasswordHasher; audit: AuditLog; pushes: Pushes; mailer: Mailer; brand: MailBrand; registrations?: PushRegistrations }) {
  const { db, clock, hasher, audit, pushes } = deps;

  async function recoveryPolicy(organizationId: string, notAllowed: string) {
    const org = await findOrganization(db, organizationId);
    if (!org?.use_reset_password) throw new BadRequest(notAllowed);
    const policy = await findPolicy(db, organizationId, PolicyType.ResetPassword);
    if (!policy?.enabled) throw new BadRequest(REFUSALS.policyNotEnabled);
    return { org, policy };
  }

  async function notify(user: UserRow, subject: string, paragraphs: string[], log: MailLog): Promise<void> {
    const message = renderMail(user.email, deps.brand, {
      subject,
      paragraphs,
      link: { label: 'Log in', url: `${deps.brand.publicUrl.replace(/\/+$/, '')}/#/login` },
      footnote: 'If you did not expect this, contact your organization’s administrators.',
    });
    await sendOrLog(deps.mailer, message, log, 'account recovery');
  }

  /**
   * The recovery details of the members among `ids` the caller may recover: the official server
   * leaves out (or answers 404 for) those of a higher role since 2026-08-18, as their escrowed key
   * would let a custom recoverer or an admin take over an owner's account.
   */
  async function details(actor: MemberCaller, organizationId: string, ids: readonly string[]): Promise<ResetPasswordDetailsResponse[]> {
    const org = await findOrganization(db, organizationId);
    if (!org) throw new NotFound();
    const members = await membersWithAccounts(db, organizationId, [...new Set(ids.map((id) => id.toLowerCase()))]);
    return members.filter((member) => mayRecover(actor.membership, member.type)).map((member) => toResetPasswordDetails(member, org.private_key));
  }

  return {
    /** What an account recovery admin needs to recover the given members (see `details`). */
    details,

    /** One member's recovery details; 404 for an unknown member, one without an account yet, or one the caller may not recover. */
    async detailsOf(actor: MemberCaller, organizationId: string, id: string): Promise<ResetPasswordDetailsResponse> {
      const [found] = await details(actor, organizationId, [id]);
      if (!found) throw new NotFound();
      return found;
    },

    /**
     * The member escrows their user key with the organization (`resetPasswordKey`, wrapped with
     * its public key) or withdraws (null). Only for themselves, where the organization may use
     * account recovery and has the policy on; enrolling proves the master password, and a policy
     * that enrolls automatically forbids withdrawing. As officially, an organization whose SSO is on
     * with trusted devices takes the key without one: its new members have no master password, and
     * their client enrolls right after making their keys.
     */
    async enroll({ userId: callerId, client }: UserCaller, organizationId: string, userId: string, body: EnrollmentBody): Promise<void> {
      const key = body.resetPasswordKey ?? null;
      const caller = await findUserById(db, callerId);
      if (!caller) throw new NotFound();
      const trustedDevices = await usesTrustedDevices(db, organizationId);
      if (key && !trustedDevices && !(await masterPasswordMatches(hasher, caller, body.masterPasswordHash))) throw BadRequest.field('masterPasswordHash', REFUSALS.incorrectPassword);
      // An invited member cannot enroll here: Strongroom stores no invited row with a user_id
      // (accepting sets it, and may enroll in the same write), so the lookup never finds one.
      const member = await findMembershipOfUser(db, organizationId, userId);
      if (userId !== callerId || !member) throw new BadRequest(REFUSALS.userNotValid);
      const { policy } = await recoveryPolicy(organizationId, REFUSALS.enrollmentNotAllowed);
      if (!key && autoEnrollsInRecovery(policy)) throw BadRequest.field('resetPasswordKey', REFUSALS.withdrawalRefused);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await tx.updateTable('organization_users').set({ reset_password_key: key, revision_date: now }).where('id', '=', member.id).execute();
        await updateUser(tx, callerId, { account_revision_date: now });
        await audit.record(tx, client, {
          type: key ? EventType.OrganizationUser_ResetPassword_Enroll : EventType.OrganizationUser_ResetPassword_Withdraw,
          organizationId,
          organizationUserId: member.id,
          actingUserId: callerId,
        });
      });
      // The profile's organizations carry `resetPasswordEnrolled`.
      pushes.send([userPush(PushType.SyncOrgKeys, callerId, clock.now())]);
    },

    /**
     * An admin recovers a member enrolled in account recovery: a new master password the member
     * must replace at next login (every session ends), and/or two-step login off (password and
     * sessions stay, as the official ResetUserTwoFactorCommand leaves them); either sends LogOut.
     */
    async recover(actor: MemberCaller, organizationId: string, id: string, request: RecoveryRequest): Promise<void> {
      // What the body alone decides comes first, as the official request model's validation runs before the controller.
      if (!request.resetMasterPassword && !request.resetTwoFactor) throw BadRequest.field('resetMasterPassword', REFUSALS.noAction);
      if (request.resetMasterPassword && !hasNewMasterPassword(request)) throw noNewMasterPassword();
      const member = await findMember(db, organizationId, id);
      if (!member) throw new NotFound();
      // 400, not 403: the official server avoids a 403 here because the clients log out on one.
      if (!mayRecover(actor.membership, member.type)) throw new BadRequest(REFUSALS.notPermitted);
      const { org } = await recoveryPolicy(organizationId, REFUSALS.resetNotAllowed);
      if (!RECOVERABLE.includes(member.status) || !member.reset_password_key?.trim() || !member.user_id) throw new BadRequest(REFUSALS.memberNotValid);
      const user = await findUserById(db, member.user_id);
      if (!user) throw new NotFound('User not found.');
      const password: PreparedPassword | null = request.resetMasterPassword ? await prepareNewPassword(hasher, user, request) : null;
      const now = clock.now().toISOString();
      const event = { organizationId, organizationUserId: member.id, ...actingOf(actor.membership) };
      const revocations = await db.transaction().execute(async (tx) => {
        // The checks above ran before a slow hash: what they read must still hold under the lock.
        const lockedUser = await lockUser(tx, user.id);
        const lockedMember = await lockMember(tx, organizationId, member.id);
        if (!lockedUser || !lockedMember || !sameAccount(user, lockedUser) || !sameEnrollment(member, lockedMember)) throw new BadRequest(REFUSALS.memberNotValid);
        if (password) {
          await setMasterPassword(tx, user.id, { ...password, forcePasswordReset: true, now });
          await audit.record(tx, actor.client, { type: EventType.OrganizationUser_AdminResetPassword, ...event });
        }
        if (!request.resetTwoFactor) return null;
        const off = await turnOffTwoFactor(tx, audit, actor.client, { userId: user.id, event: { type: EventType.OrganizationUser_AdminResetTwoFactor, ...event }, now });
        return off.revocations;
      });
      pushes.send([logOutPush(user.id)]);
      if (revocations) pushChange(deps, user.id, revocations);
      const what = [password ? 'set a new master password for your account' : null, request.resetTwoFactor ? 'turned two-step login off for your account' : null].filter(Boolean).join(' and ');
      await notify(
        user,
        'Your account was recovered',
        [
          `An administrator of ${org.name} ${what}.`,
          password ? 'You were logged out everywhere.' : 'Your apps were asked to log out; your master password is unchanged and no second step is asked at login.',
          ...(password ? ['Log in with the master password the administrator gives you; you will then choose a new one of your own.'] : []),
        ],
        actor.log,
      );
    },

    /**
     * The member replaces the temporary master password an admin set (only while the account
     * must change it): the new one, in either form, with the account's salt and KDF; every
     * session ends, so the member logs in with it.
     */
    async updateTempPassword({ userId, client, log }: UserCaller, body: UpdateTempPasswordBody): Promise<void> {
      const user = await findUserById(db, userId);
      if (!user) throw new NotFound();
      if (!user.force_password_reset) throw new BadRequest(REFUSALS.noTemporaryPassword);
      const password = await prepareNewPassword(hasher, user, body);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        // Another replacement (or a new recovery) may have committed during the hash.
        const locked = await lockUser(tx, user.id);
        if (!locked?.force_password_reset) throw new BadRequest(REFUSALS.noTemporaryPassword);
        if (!sameAccount(user, locked)) throw new BadRequest(REFUSALS.accountChanged);
        await setMasterPassword(tx, user.id, { ...password, hint: body.masterPasswordHint ?? null, forcePasswordReset: false, now });
        await audit.record(tx, client, { type: EventType.User_UpdatedTempPassword, userId: user.id, actingUserId: user.id });
      });
      pushes.send([logOutPush(user.id)]);
      await notify(user, 'Your master password was changed', ['You replaced the temporary master password of your account with your own.'], log);
    },
  };
}

export type AccountRecovery = ReturnType<typeof createAccountRecovery>;
