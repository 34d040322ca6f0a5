import { BadRequest } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import {
  agreedMasterPassword,
  hasNewMasterPassword,
  newMasterPasswordOf,
  noNewMasterPassword,
  setMasterPassword,
  type AgreedMasterPassword,
} from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { requireMasterPassword } from '../../platform/auth/secret-verification.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import { userOrThrow, type AccountEnds } from './account-rules.js';
import type { KdfChangeBody, PasswordChangeBody } from './accounts.schemas.js';

const OBJECTS = { authentication: 'authenticationData', unlock: 'unlockData' } as const;

/**
 * Clients of 2025 send the flat fields beside the objects with the same values; a body whose
 * two forms name different passwords is refused rather than one of them silently chosen.
 */
function sameAsFlat(body: PasswordChangeBody, agreed: AgreedMasterPassword): AgreedMasterPassword {
  if (body.newMasterPasswordHash && body.newMasterPasswordHash !== agreed.authenticationHash) {
    throw BadRequest.field('newMasterPasswordHash', 'The newMasterPasswordHash differs from authenticationData.masterPasswordAuthenticationHash.');
  }
  if (body.key && body.key !== agreed.wrappedUserKey) throw BadRequest.field('key', 'The key differs from unlockData.masterKeyWrappedUserKey.');
  return agreed;
}

/**
 * The signed-in user changes their master password (`POST /accounts/password`) or its KDF
 * settings (`POST /accounts/kdf`). Both go through the one master password writer, which ends
 * every session; the other devices are told to log out once the change is committed.
 */
export function createPasswordService(deps: AccountEnds & { hasher: PasswordHasher; audit: AuditLog }) {
  const { db, clock, hasher } = deps;

  return {
    /**
     * The 2026 body (the two objects, which must agree with each other and with the account's
     * salt and KDF) or the older one (`newMasterPasswordHash` and `key`, the KDF unchanged), as
     * newMasterPasswordOf reads them.
     */
    async changePassword({ userId, client }: UserCaller, body: PasswordChangeBody): Promise<void> {
      if (!hasNewMasterPassword(body)) throw noNewMasterPassword();
      const user = await userOrThrow(db, userId);
      await requireMasterPassword(hasher, user, body.masterPasswordHash);
      const next = newMasterPasswordOf(user, body);
      if (body.authenticationData && body.unlockData) sameAsFlat(body, next);
      const serverHash = await hasher.hash(next.authenticationHash);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await setMasterPassword(tx, userId, {
          serverHash,
          key: next.wrappedUserKey,
          ...(body.masterPasswordHint !== undefined ? { hint: body.masterPasswordHint } : {}),
          forcePasswordReset: false,
          now,
        });
        await deps.audit.record(tx, client, { type: EventType.User_ChangedPassword, userId, actingUserId: userId });
      });
      // Every other device logs out; the one that changed the password logs in again with it.
      deps.pushes.send(logOutPush(userId, client.deviceIdentifier));
    },

    /**
     * A new KDF (PBKDF2 ↔ Argon2id, or new costs) for the same password and salt, from the two
     * objects the schema requires. Every session ends, this device's too, as on the official server.
     */
    async changeKdf({ userId, client }: UserCaller, body: KdfChangeBody): Promise<void> {
      const user = await userOrThrow(db, userId);
      await requireMasterPassword(hasher, user, body.masterPasswordHash);
      const next = agreedMasterPassword(user, body.authenticationData, body.unlockData, { ...OBJECTS, kdfMayChange: true });
      const serverHash = await hasher.hash(next.authenticationHash);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await setMasterPassword(tx, userId, { serverHash, key: next.wrappedUserKey, kdf: next.kdf, forcePasswordReset: Boolean(user.force_password_reset), passwordChanged: false, now });
        await deps.audit.record(tx, client, { type: EventType.User_ChangedKdf, userId, actingUserId: userId });
      });
      deps.pushes.send(logOutPush(userId));
    },
  };
}
