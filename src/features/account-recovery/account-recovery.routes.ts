import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, Guid, list, ListOf, OrgIdParams, OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { IdsBody } from '../members/members.schemas.js';
import { EnrollmentBody, RecoverAccountBody, ResetPasswordBody, ResetPasswordDetailsResponse, UpdateTempPasswordBody } from './account-recovery.schemas.js';
import type { AccountRecovery } from './account-recovery.service.js';

// The member routes sit with the other member routes of the API documentation, the password with the account's.
const tags = ['Members'];
const accountTags = ['Accounts'];
const BASE = '/organizations/:orgId/users';

const RECOVERY_RIGHT =
  'Access: a confirmed member holding manageResetPassword (`orgPermission(manageResetPassword)`: owners, admins, custom members with it); non-members get 404, other members 403.';
const RECOVERY =
  'Access: a confirmed member holding manageResetPassword (`orgPermission(manageResetPassword)`: owners, admins, custom members with it); non-members get 404, other members 403; an owner is recovered only by an owner and an admin only by an owner or admin (400 "You are not permitted to recover this user\'s account.", as the official server answers to keep the clients signed in).';
const RECOVER =
  'Needs the organization to use account recovery with the Account recovery administration policy (8) on, and the member accepted, confirmed or revoked and enrolled (400 otherwise). The new master password comes as `authenticationData` and `unlockData` (salt and KDF the member\'s, as `reset-password-details` gives them) or as the obsolete `newMasterPasswordHash` and `key`; the member must replace it at next login (`ForcePasswordReset`), and every session of the member ends (security stamp, refresh tokens). Turning two-step login off alone leaves the password and the sessions as they were, as on the official server. Either sends the member\'s apps a LogOut push, and the member is mailed (logged when no mail server is set).';

const READ_ROLES = 'Owners are left out for anyone but an owner, and admins for custom members, as the official server does since 2026-08-18.';

const docs = {
  resetPasswordDetails: {
    summary: "Read a member's account recovery details",
    description: `Answers what an account recovery admin needs to reset the member's master password: their KDF settings and salt, their user key escrowed to the organization (\`resetPasswordKey\`, null when not enrolled), and the organization's encrypted private key; 404 for an unknown member, one without an account yet, or one of a role the caller may not recover. ${READ_ROLES} ${RECOVERY_RIGHT}`,
  },
  accountRecoveryDetails: {
    summary: "Read members' account recovery details",
    description: `Answers the account recovery details (see \`GET …/users/{id}/reset-password-details\`) of the given members; unknown ids, members without an account yet and those the caller may not recover are left out. ${READ_ROLES} ${RECOVERY_RIGHT}`,
  },
  enroll: {
    summary: 'Enroll in account recovery, or withdraw',
    description:
      "The caller escrows their user key with the organization: `resetPasswordKey` is the user key wrapped with the organization's public key, and enrolling needs the caller's `masterPasswordHash` (400 \"Incorrect password\"), except in an organization whose SSO is on with trusted devices (its members may have no master password); a null key withdraws, refused (400) where the policy enrolls automatically. Only for the caller's own membership (`userId` is the caller's user id; 400 \"User not valid.\" otherwise), where the organization uses account recovery and has the policy on (400 otherwise). Records OrganizationUser_ResetPassword_Enroll (1506) or _Withdraw (1507). Access: any signed-in user (`user`); the membership decides.",
  },
  recover: {
    summary: "Recover a member's account",
    description: `Sets a new master password for the member (\`resetMasterPassword\`) and/or turns their two-step login off (\`resetTwoFactor\`; 400 when neither), recording OrganizationUser_AdminResetPassword (1508) and OrganizationUser_AdminResetTwoFactor (1519). ${RECOVER} ${RECOVERY}`,
  },
  resetPassword: {
    summary: "Reset a member's master password",
    description: `Sets a new master password for the member and records OrganizationUser_AdminResetPassword (1508). The official server dropped this route in 2026-06; Strongroom keeps it for web vaults before 2026.4.2. ${RECOVER} ${RECOVERY}`,
  },
  updateTempPassword: {
    summary: 'Replace a temporary master password',
    description:
      'The caller, whose master password an organization admin set through account recovery, sets their own: `authenticationData` and `unlockData` with the account\'s salt and KDF, or the obsolete `newMasterPasswordHash` and `key`, and `masterPasswordHint`. Only while the account must change its password (400 "User does not have a temporary password to update." otherwise). Records User_UpdatedTempPassword (1008) and ends every session. Access: any signed-in user (`user`), on their own account.',
  },
} satisfies Record<string, RouteDoc>;

const lower = (id: string) => id.toLowerCase();

/** Account recovery by organization admins ({base_url}/organizations/{orgId}/users/..., /accounts/update-temp-password). */
export const accountRecoveryRoutes: FastifyPluginAsyncTypebox<{ recovery: AccountRecovery; orgAccess: OrgAccess }> = async (app, { recovery, orgAccess }) => {
  const recoverer = { config: { access: orgAccess.right('manageResetPassword') } };

  app.get(
    `${BASE}/:id/reset-password-details`,
    { ...recoverer, schema: { tags, ...docs.resetPasswordDetails, params: OrgIdParams, response: { 200: ResetPasswordDetailsResponse } } },
    async (request) => recovery.detailsOf(memberCaller(request), lower(request.params.orgId), lower(request.params.id)),
  );

  app.post(
    `${BASE}/account-recovery-details`,
    { ...recoverer, schema: { tags, ...docs.accountRecoveryDetails, params: OrgParams, body: IdsBody, response: { 200: ListOf(ResetPasswordDetailsResponse) } } },
    async (request) => list(await recovery.details(memberCaller(request), lower(request.params.orgId), request.body.ids)),
  );

  app.put(
    `${BASE}/:userId/reset-password-enrollment`,
    {
      config: { access: access.user },
      schema: { tags, ...docs.enroll, params: Type.Object({ orgId: Guid, userId: Guid }), body: EnrollmentBody, response: { 200: EmptyResponse } },
    },
    async (request, reply) => {
      await recovery.enroll(userCaller(request), lower(request.params.orgId), lower(request.params.userId), request.body);
      return emptyOk(reply);
    },
  );

  app.put(`${BASE}/:id/recover-account`, { ...recoverer, schema: { tags, ...docs.recover, params: OrgIdParams, body: RecoverAccountBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    const { resetMasterPassword = false, resetTwoFactor = false, ...password } = request.body;
    await recovery.recover(memberCaller(request), lower(request.params.orgId), lower(request.params.id), { ...password, resetMasterPassword, resetTwoFactor });
    return emptyOk(reply);
  });

  // Web vaults before 2026.4.2 reset the password alone here. The official server dropped the route in 2026-06;
  // self-hosted web vaults that old still call it, so it stays.
  app.put(
    `${BASE}/:id/reset-password`,
    { ...recoverer, schema: { tags, ...olderForm(docs.resetPassword, 'PUT /organizations/{orgId}/users/{id}/recover-account'), params: OrgIdParams, body: ResetPasswordBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await recovery.recover(memberCaller(request), lower(request.params.orgId), lower(request.params.id), { ...request.body, resetMasterPassword: true, resetTwoFactor: false });
      return emptyOk(reply);
    },
  );

  app.put(
    '/accounts/update-temp-password',
    { config: { access: access.user }, schema: { tags: accountTags, ...docs.updateTempPassword, body: UpdateTempPasswordBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await recovery.updateTempPassword(userCaller(request), request.body);
      return emptyOk(reply);
    },
  );
};
