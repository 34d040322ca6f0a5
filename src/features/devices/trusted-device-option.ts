import type { Db } from '../../db/database.js';
import { OrganizationUserStatusType, OrganizationUserType, parsePermissions } from '../../platform/access/roles.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';
import type { DecryptionOptions } from '../identity/token-response.js';
import { MemberDecryptionType, readSsoConfig } from '../sso/sso-config.repository.js';
import { isTrusted } from './device-trust.schemas.js';
import { activeDevicesOfUser } from './devices.repository.js';

/**
 * The device types that can approve a login from another device (the official
 * LoginApprovingClientTypes: mobile, desktop, browser extension and web vault; not the CLI, the
 * SDK or a server).
 */
const APPROVING_TYPES = new Set([0, 1, 15, 6, 7, 8, 16, 2, 3, 4, 5, 19, 20, 9, 10, 11, 12, 13, 14, 17, 18, 26]);

/** Whether the member's role gives them account recovery over others (owner, admin, or the custom permission). */
function managesResetPassword(member: { status: number; type: number; permissions: string | null }): boolean {
  const active = [OrganizationUserStatusType.Invited, OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed].includes(member.status);
  if (!active) return false;
  if (member.type === (OrganizationUserType.Owner as number) || member.type === (OrganizationUserType.Admin as number)) return true;
  return member.type === (OrganizationUserType.Custom as number) && Boolean(parsePermissions(member.permissions)?.manageResetPassword);
}

/**
 * `UserDecryptionOptions.TrustedDeviceOption`, as the official UserDecryptionOptionsBuilder makes
 * it: only for a login through an organization's single sign-on (the token's organization), when
 * that organization's members unlock with trusted devices, or when it stopped doing so and this
 * device is still trusted by an account without a master password (TDE offboarding: the client
 * then asks the user to set one). The device's own keys come back when it is trusted.
 */
export function trustedDeviceOption(deps: { db: Db }): DecryptionOptions {
  const { db } = deps;
  return async ({ user, device, ssoOrganizationId }) => {
    if (!ssoOrganizationId) return {};
    const config = await readSsoConfig(db, ssoOrganizationId);
    if (!config) return {};
    const tdeActive = config.data.memberDecryptionType === MemberDecryptionType.TrustedDeviceEncryption;
    const trusted: DeviceRow | null = device && isTrusted(device) ? device : null;
    const offboarding = !user.master_password_hash && trusted !== null && !tdeActive;
    if (!tdeActive && !offboarding) return {};

    // Another device of the account (not this one, not one it removed) that could approve this login.
    const hasLoginApprovingDevice = device ? (await activeDevicesOfUser(db, user.id)).some((d) => d.identifier !== device.identifier && APPROVING_TYPES.has(d.type)) : false;
    const member = await db
      .selectFrom('organization_users')
      .select(['status', 'type', 'permissions', 'reset_password_key'])
      .where('organization_id', '=', ssoOrganizationId)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    return {
      TrustedDeviceOption: {
        // An admin can approve only a member enrolled in account recovery: it needs the key the enrollment wrapped.
        HasAdminApproval: Boolean(member?.reset_password_key?.trim()),
        HasLoginApprovingDevice: hasLoginApprovingDevice,
        HasManageResetPasswordPermission: member ? managesResetPassword(member) : false,
        IsTdeOffboarding: offboarding,
        EncryptedPrivateKey: trusted?.encrypted_private_key ?? null,
        EncryptedUserKey: trusted?.encrypted_user_key ?? null,
      },
    };
  };
}
