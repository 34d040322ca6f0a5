import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, type OrganizationUserType, parsePermissions, rightsOf } from '../../platform/access/roles.js';
import { mayRecover } from '../account-recovery/account-recovery.service.js';
import { sendOrLog } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import { deviceTypeName } from '../devices/device-types.js';

/**
 * The emails of the organization's confirmed members who may answer this member's device
 * approval: who may recover whom (an owner's request only owners, an admin's owners and admins,
 * anyone else's every holder of manageResetPassword), so nobody is mailed a request they cannot see.
 */
async function approverEmails(db: Executor, organizationId: string, requesterType: OrganizationUserType): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_users as ou')
    .innerJoin('users as u', 'u.id', 'ou.user_id')
    .select(['u.email', 'ou.type', 'ou.permissions'])
    .where('ou.organization_id', '=', organizationId)
    .where('ou.status', '=', OrganizationUserStatusType.Confirmed)
    .execute();
  return [...new Set(rows.filter((r) => mayRecover({ type: r.type, rights: rightsOf(r.type, parsePermissions(r.permissions)) }, requesterType)).map((r) => r.email))];
}

/**
 * The mails of device approvals, as the official server sends them: the organization's approvers
 * hear of a new request, and the member of an approval. Nobody waits for them, so a refusal of the
 * mail server is only logged (and without a mail server they are logged).
 */
export function createAdminRequestMail(deps: { db: Executor; mailer: Mailer; brand: MailBrand }) {
  const base = deps.brand.publicUrl.replace(/\/+$/, '');
  return {
    async requested(organizationId: string, member: { email: string; name: string | null; type: OrganizationUserType }, log: MailLog): Promise<void> {
      const who = member.name ? `${member.name} (${member.email})` : member.email;
      for (const to of await approverEmails(deps.db, organizationId, member.type)) {
        const message = renderMail(to, deps.brand, {
          subject: 'Review a device approval request',
          paragraphs: [`${who} asks to log in on a new device and needs an approval from an administrator of your organization.`],
          link: { label: 'Review the request', url: `${base}/#/organizations/${organizationId}/settings/device-approvals` },
          footnote: 'Before approving, check with the member that the request is theirs.',
        });
        await sendOrLog(deps.mailer, message, log, 'device approval request');
      }
    },

    async approved(to: string, request: { request_device_type: number; request_device_identifier: string; request_ip_address: string | null; response_date: string }, log: MailLog): Promise<void> {
      const device = `${deviceTypeName(request.request_device_type) ?? 'Unknown device type'} - ${request.request_device_identifier}`;
      const message = renderMail(to, deps.brand, {
        subject: 'Your device was approved',
        paragraphs: [
          'An administrator of your organization approved your log-in on a new device.',
          `Device: ${device}`,
          `IP address: ${request.request_ip_address ?? 'unknown'}`,
          `Approved: ${request.response_date}`,
        ],
        footnote: 'If this was not you, contact your organization’s administrators.',
      });
      await sendOrLog(deps.mailer, message, log, 'device approval');
    },
  };
}

export type AdminRequestMail = ReturnType<typeof createAdminRequestMail>;
