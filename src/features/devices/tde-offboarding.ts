import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { isEncString } from '../../http/enc-string.js';
import { accountKdf, agreedMasterPassword, noNewMasterPassword, setMasterPassword, type AgreedMasterPassword } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { findUserById, type UserRow } from '../../platform/auth/users.repository.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { Clock } from '../../shared/clock.js';
import type { UpdateTempPasswordBody } from '../account-recovery/account-recovery.schemas.js';
import { MemberDecryptionType, readSsoConfig } from '../sso/sso-config.repository.js';

/** The official refusals, word for word. */
export const OFFBOARDING_REFUSALS = {
  hasPassword: 'User already has a master password.',
  noSsoOrganization: 'User is not part of any organization that has SSO enabled.',
  severalSsoOrganizations: 'User is part of no or multiple SSO configurations.',
  noConfig: 'Organization SSO configuration not found.',
  stillTde: 'Organization SSO Member Decryption Type is not Master Password.',
};

/**
 * The first master password of an account without one: the two objects (whose KDF becomes the
 * account's, as for any first password) or the obsolete hash and key (the KDF stays).
 */
function firstMasterPassword(user: UserRow, body: UpdateTempPasswordBody): AgreedMasterPassword {
  if (body.authenticationData && body.unlockData) {
    return agreedMasterPassword(user, body.authenticationData, body.unlockData, { authentication: 'authenticationData', unlock: 'unlockData', kdfMayChange: true });
  }
  if (!body.newMasterPasswordHash || !body.key) throw noNewMasterPassword();
  if (!isEncString(body.key)) throw BadRequest.field('key', 'The key field is not a valid encrypted string.');
  return { kdf: accountKdf(user), authenticationHash: body.newMasterPasswordHash, wrappedUserKey: body.key };
}

/**
 * `PUT /accounts/update-tde-offboarding-password`: an organization that unlocked with trusted
 * devices now wants master passwords, and a member without one, logging in through its SSO on a
 * still-trusted device (IsTdeOffboarding), sets one. As officially: the account must belong to
 * exactly one organization that may use SSO, whose configuration now says master password.
 */
export function createTdeOffboarding(deps: { db: Db; hasher: PasswordHasher; clock: Clock; audit: AuditLog; pushes: Pushes }) {
  const { db, hasher, clock, audit, pushes } = deps;
  return async function setOffboardingPassword({ userId, client }: UserCaller, body: UpdateTempPasswordBody): Promise<void> {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFound();
    if (user.master_password_hash) throw new BadRequest(OFFBOARDING_REFUSALS.hasPassword);
    const ssoOrganizations = await db
      .selectFrom('organization_users as ou')
      .innerJoin('organizations as o', 'o.id', 'ou.organization_id')
      .select('o.id')
      .where('ou.user_id', '=', userId)
      .where('o.use_sso', '=', true)
      .execute();
    if (ssoOrganizations.length === 0) throw new BadRequest(OFFBOARDING_REFUSALS.noSsoOrganization);
    if (ssoOrganizations.length > 1) throw new BadRequest(OFFBOARDING_REFUSALS.severalSsoOrganizations);
    const config = await readSsoConfig(db, (ssoOrganizations[0] as { id: string }).id);
    if (!config) throw new BadRequest(OFFBOARDING_REFUSALS.noConfig);
    if (config.data.memberDecryptionType !== MemberDecryptionType.MasterPassword) throw new BadRequest(OFFBOARDING_REFUSALS.stillTde);

    const password = firstMasterPassword(user, body);
    const serverHash = await hasher.hash(password.authenticationHash);
    await db.transaction().execute(async (tx) => {
      const locked = await tx.selectFrom('users').select('master_password_hash').where('id', '=', userId).forUpdate().executeTakeFirst();
      // Another request may have set one while this one hashed.
      if (!locked || locked.master_password_hash) throw new BadRequest(OFFBOARDING_REFUSALS.hasPassword);
      await setMasterPassword(tx, userId, {
        serverHash,
        key: password.wrappedUserKey,
        kdf: password.kdf,
        hint: body.masterPasswordHint ?? null,
        forcePasswordReset: false,
        now: clock.now().toISOString(),
      });
      await audit.record(tx, client, { type: EventType.User_TdeOffboardingPasswordSet, userId, actingUserId: userId });
    });
    pushes.send([logOutPush(userId)]);
  };
}
