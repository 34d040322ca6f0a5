import type { Db, Executor } from '../../db/database.js';
import { chunks } from '../../db/chunks.js';
import { BadRequest } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { masterPasswordKeepingKdf, setMasterPassword, type AgreedMasterPassword } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { masterPasswordMatches } from '../../platform/auth/secret-verification.js';
import { findUserById, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { Clock } from '../../shared/clock.js';
import { createWorkQueue, mapInSlices, yieldToLoop } from '../../shared/work-slices.js';
import { NotFound } from '../../http/errors.js';
import { listSends } from '../sends/sends.repository.js';
import { parseSendData, SendType } from '../sends/sends.schemas.js';
import { parseAttachments, withNewKeys } from '../vault/attachment-data.js';
import { serializeCipherData, toCipherData } from '../vault/cipher-data.js';
import { within } from '../vault/cipher-import.js';
import { listFolders } from '../vault/folders.repository.js';
import { touchVault } from '../vault/revisions.js';
import { prfPasskeys, updatePasskey } from '../passkey-login/passkeys.repository.js';
import { lockDevicesOfUser, updateDeviceOfUser } from '../devices/device-trust.repository.js';
import { isTrusted, NO_DEVICE_KEYS } from '../devices/device-trust.schemas.js';
import { activeDevicesOfUser } from '../devices/devices.repository.js';
import { accountKeysColumns, accountKeysOfRequest, hasV2Keys, type AccountKeys } from '../accounts/account-keys.js';
import {
  grantsWithKey,
  lockForRotation,
  personalItems,
  recoveryEnrollments,
  rewrapGrant,
  rewrapRecoveryKey,
  rewriteCipher,
  rewriteFolder,
  rewriteSend,
} from './key-rotation.repository.js';
import {
  canWrapFor,
  toKeyRotationDataResponse,
  type KeyRotationDataResponse,
  type RotateUserAccountKeysRequest,
  type RotationCipher,
  type RotationSend,
} from './key-rotation.schemas.js';

export interface KeyRotationDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  pushes: Pushes;
  hasher: PasswordHasher;
}

/** Rows written between two yields to the event loop, inside the rotation's one transaction. */
const ROWS_PER_SLICE = 100;

const UNLOCK = 'accountUnlockData.masterPasswordUnlockData';

/**
 * Checks that every id the client sent is one of `existing`, once, and that none of `existing`
 * is left out: the official validators' rule that a rotation re-encrypts everything or nothing.
 */
function matchAll(sent: readonly string[], existing: ReadonlySet<string>, field: string, missing: string, idField = 'id'): void {
  const seen = new Set<string>();
  sent.forEach((id, i) => {
    if (seen.has(id)) throw BadRequest.field(`${field}[${i}].${idField}`, 'This id is sent more than once.');
    if (!existing.has(id)) throw BadRequest.field(`${field}[${i}].${idField}`, "This id is not one of the account's (it may have been deleted meanwhile). Sync and try again.");
    seen.add(id);
  });
  if (seen.size !== existing.size) throw BadRequest.field(field, missing);
}

/**
 * The new master password of a rotation: the flat official model, whose email (or salt) and KDF
 * must be the account's, since a rotation changes the key and may change the password but not
 * how the master key is derived (that is `POST /accounts/kdf`).
 */
function newMasterPassword(user: UserRow, unlock: RotateUserAccountKeysRequest['accountUnlockData']['masterPasswordUnlockData']): AgreedMasterPassword {
  const kdf = { kdfType: unlock.kdfType, iterations: unlock.kdfIterations, memory: unlock.kdfMemory ?? null, parallelism: unlock.kdfParallelism ?? null };
  const salt = unlock.masterPasswordSalt ?? unlock.email.trim().toLowerCase();
  return masterPasswordKeepingKdf(
    user,
    { kdf, salt, masterPasswordAuthenticationHash: unlock.masterKeyAuthenticationHash },
    { kdf, salt, masterKeyWrappedUserKey: unlock.masterKeyEncryptedUserKey },
    {
      kdf: { kdfType: `${UNLOCK}.kdfType`, iterations: `${UNLOCK}.kdfIterations`, memory: `${UNLOCK}.kdfMemory`, parallelism: `${UNLOCK}.kdfParallelism` },
      salt: `${UNLOCK}.${unlock.masterPasswordSalt ? 'masterPasswordSalt' : 'email'}`,
      unlock: UNLOCK,
    },
  );
}

/**
 * The account keys after a rotation: the same public key (the official server does not change the
 * pair on a rotation; everything shared with it would become unreadable) with its private key
 * wrapped with the new user key and, for version-2 keys, the signature key pair re-wrapped, the
 * public key signed again and the security state (accounts/account-keys.ts checks them). A
 * version-1 account may move to version-2 keys here, as the clients' upgrade does; a version-2
 * account may not go back, as it would lose the signature key its contacts trust.
 */
function newAccountKeys(user: UserRow, body: RotateUserAccountKeysRequest['accountKeys']): AccountKeys {
  const keys = accountKeysOfRequest(body, 'accountKeys');
  const where = body.publicKeyEncryptionKeyPair ? 'accountKeys.publicKeyEncryptionKeyPair.publicKey' : 'accountKeys.accountPublicKey';
  if (keys.publicKey !== user.public_key) throw BadRequest.field(where, 'The account public key must stay the same in a key rotation.');
  if (!keys.v2 && hasV2Keys(user)) {
    throw BadRequest.field('accountKeys.signatureKeyPair', 'This account has version-2 keys: the rotation must send its signature key pair, signed public key and security state.');
  }
  return keys;
}

/**
 * Checks that the rotation leaves every attachment of an item readable. An attachment without a
 * key of its own (uploaded by clients before 2018) is encrypted with the user key itself, which no
 * client re-encrypts in a rotation: it is refused until the user fixes it in the web vault (which
 * re-uploads it with a key). The other attachments' keys and file names are wrapped with the item
 * key when the item has one, and the client re-wraps that key; without one they are wrapped with
 * the user key and each must come back in `attachments2` re-encrypted.
 */
function checkAttachments(stored: { key: string | null; attachments: string | null }, cipher: RotationCipher, field: string): void {
  const attachments = parseAttachments(stored.attachments);
  const withoutKey = Object.keys(attachments).find((id) => !attachments[id]?.key);
  if (withoutKey) {
    throw BadRequest.field(field, `This item has an attachment (${withoutKey}) encrypted with the user key itself. Fix its old attachments in the web vault, then rotate.`);
  }
  if (stored.key && cipher.key) return;
  for (const id of Object.keys(attachments)) {
    const sent = cipher.attachments2?.[id];
    if (!sent?.key || !sent.fileName) {
      throw BadRequest.field(`${field}.attachments2`, `The attachment ${id} must be sent with its file name and key re-encrypted with the new user key.`);
    }
  }
}

/** The stored Send after its key and encrypted fields were re-encrypted; its other settings stay. */
function rotatedSend(existing: { type: number; data: string }, sent: RotationSend, field: string): string {
  if (existing.type !== sent.type) throw BadRequest.field(`${field}.type`, "A key rotation cannot change a Send's type.");
  const data = parseSendData(existing.data);
  data.name = sent.name ?? '';
  data.notes = sent.notes ?? null;
  if (existing.type === (SendType.Text as number)) {
    if (!sent.text) throw BadRequest.field(`${field}.text`, 'Text is required for text sends.');
    data.text = { text: sent.text.text ?? null, hidden: Boolean(sent.text.hidden) };
  } else if (data.file && sent.file?.fileName) {
    data.file = { ...data.file, fileName: sent.file.fileName };
  }
  return JSON.stringify(data);
}

/**
 * User key rotation (`POST /accounts/key-management/rotate-user-account-keys`): the client sends
 * every personal item, folder and Send re-encrypted with a new user key, the key re-wrapped for
 * each emergency contact, each organization the account is enrolled in account recovery with,
 * each passkey that unlocks the vault and each trusted device, the private key re-wrapped, and the master password (possibly new) wrapping the new key. All
 * of it is checked, then written in one transaction, a slice of rows at a time with the event
 * loop let go in between, so a vault of thousands of items neither half-rotates nor holds the
 * server. A user's rotations run one after another.
 */
export function createKeyRotation({ db, audit, clock, pushes, hasher }: KeyRotationDeps) {
  const queue = createWorkQueue({ concurrency: 2, queueLimit: 16, busy: 'The server is busy with other key rotations. Try again in a moment.' });

  async function userOf(executor: Executor, userId: string): Promise<UserRow> {
    const user = await findUserById(executor, userId);
    if (!user) throw new NotFound();
    return user;
  }

  async function rotate(caller: UserCaller, body: RotateUserAccountKeysRequest): Promise<void> {
    // The queue is entered before the password check and the hashing, so that a rotation the
    // server is too busy for is refused before it costs them.
    await queue(caller.userId, () => rotateNow(caller, body));
    // Every session holds the old key, the rotating device's too: all of them end (no context id
    // skips the caller), as after a KDF change, and the clients log in again.
    pushes.send(logOutPush(caller.userId));
  }

  async function rotateNow({ userId, client }: UserCaller, body: RotateUserAccountKeysRequest): Promise<void> {
    const user = await userOf(db, userId);
    if (!(await masterPasswordMatches(hasher, user, body.oldMasterKeyAuthenticationHash))) {
      throw BadRequest.field('oldMasterKeyAuthenticationHash', 'Incorrect password.');
    }
    const unlock = body.accountUnlockData;
    const password = newMasterPassword(user, unlock.masterPasswordUnlockData);
    const accountKeys = newAccountKeys(user, body.accountKeys);

    const { ciphers, folders, sends } = body.accountData;
    const contents = await mapInSlices(ciphers, (cipher, i) =>
      within(`accountData.ciphers[${i}]`, () => {
        if (cipher.organizationId) throw BadRequest.field('organizationId', 'Organization items are not rotated with the user key.');
        return serializeCipherData(toCipherData(cipher));
      }),
    );
    const lower = (id: string) => id.toLowerCase();
    const grants = (unlock.emergencyAccessUnlockData ?? []).map((g) => ({ id: lower(g.id), keyEncrypted: g.keyEncrypted }));
    const recoveries = (unlock.organizationAccountRecoveryUnlockData ?? []).map((r) => ({ organizationId: lower(r.organizationId), key: r.resetPasswordKey }));
    const passkeys = (unlock.passkeyUnlockData ?? []).map((p) => ({ id: lower(p.id), encryptedUserKey: p.encryptedUserKey, encryptedPublicKey: p.encryptedPublicKey }));
    const devices = (unlock.deviceKeyUnlockData ?? []).map((d) => ({ id: lower(d.deviceId), encryptedUserKey: d.encryptedUserKey, encryptedPublicKey: d.encryptedPublicKey }));
    const serverHash = await hasher.hash(password.authenticationHash);

    await db.transaction().execute(async (tx) => {
      const now = clock.now().toISOString();
      // Lock first and compare the user's row with the one whose password was checked: a
      // password change or another rotation committed meanwhile changed the hash or the stamp,
      // and this rotation's wrapped key would overwrite theirs. Everything read below is read
      // under the locks, so no other rotation, password change or edit interleaves with it.
      const locked = await lockForRotation(tx, userId);
      if (!locked) throw new NotFound();
      if (locked.master_password_hash !== user.master_password_hash || locked.security_stamp !== user.security_stamp) {
        throw BadRequest.field('oldMasterKeyAuthenticationHash', 'The master password or keys of this account changed during the rotation. Sync and try again.');
      }
      const items = await personalItems(tx, userId);
      const userFolders = await listFolders(tx, userId);
      const userSends = await listSends(tx, userId);
      const userGrants = (await grantsWithKey(tx, userId)).filter(canWrapFor.grant);
      const enrollments = (await recoveryEnrollments(tx, userId)).filter(canWrapFor.enrollment);
      const unlockingPasskeys = await prfPasskeys(tx, userId);
      // A removed device is out of the account's list: it is neither asked for nor re-wrapped, and
      // keys it kept from before removals cleared them go with the old user key (below).
      const lockedDevices = await lockDevicesOfUser(tx, userId);
      const trustedDevices = lockedDevices.filter((d) => d.active && isTrusted(d));
      const removedWithKeys = lockedDevices.filter((d) => !d.active && isTrusted(d));
      const storedItems = new Map(items.map((c) => [c.id, c]));
      matchAll(ciphers.map((c) => lower(c.id)), new Set(storedItems.keys()), 'accountData.ciphers', 'All existing ciphers must be included in the rotation.');
      ciphers.forEach((cipher, i) => {
        const stored = storedItems.get(lower(cipher.id)) as (typeof items)[number];
        if (stored.type !== cipher.type) throw BadRequest.field(`accountData.ciphers[${i}].type`, "A key rotation cannot change an item's type.");
        checkAttachments(stored, cipher, `accountData.ciphers[${i}]`);
      });
      matchAll(folders.map((f) => lower(f.id)), new Set(userFolders.map((f) => f.id)), 'accountData.folders', 'All existing folders must be included in the rotation.');
      const sendRows = new Map(userSends.map((s) => [s.id, s]));
      matchAll(sends.map((s) => lower(s.id)), new Set(sendRows.keys()), 'accountData.sends', 'All existing sends must be included in the rotation.');
      const grantStatus = new Map(userGrants.map((g) => [g.id, g.status]));
      matchAll(
        grants.map((g) => g.id),
        new Set(grantStatus.keys()),
        'accountUnlockData.emergencyAccessUnlockData',
        'All existing emergency access keys must be included in the rotation.',
      );
      matchAll(
        recoveries.map((r) => r.organizationId),
        new Set(enrollments.map((e) => e.organization_id)),
        'accountUnlockData.organizationAccountRecoveryUnlockData',
        'All existing reset password keys must be included in the rotation.',
        'organizationId',
      );
      // As the official WebAuthnLoginKeyRotationValidator: every passkey that unlocks the vault
      // must be re-wrapped, or it would hand the old user key to whoever logs in with it. Unlike
      // the official one, an id that names no such passkey is refused rather than skipped.
      matchAll(
        passkeys.map((p) => p.id),
        new Set(unlockingPasskeys.map((p) => p.id)),
        'accountUnlockData.passkeyUnlockData',
        'All existing webauthn prf keys must be included in the rotation.',
      );
      // As the official DeviceRotationValidator: a trusted device left out would keep handing the
      // old user key to whoever holds it. An id that names no trusted device is refused, as for passkeys.
      matchAll(
        devices.map((d) => d.id),
        new Set(trustedDevices.map((d) => d.id)),
        'accountUnlockData.deviceKeyUnlockData',
        'All existing trusted devices must be included in the rotation.',
        'deviceId',
      );
      const sendData = sends.map((s, i) => rotatedSend(sendRows.get(lower(s.id)) as { type: number; data: string }, s, `accountData.sends[${i}]`));

      for (const slice of chunks(ciphers.map((_, i) => i), ROWS_PER_SLICE)) {
        await yieldToLoop();
        for (const i of slice) {
          const cipher = ciphers[i] as (typeof ciphers)[number];
          const id = lower(cipher.id);
          await rewriteCipher(tx, userId, id, {
            data: contents[i] as string,
            key: cipher.key ?? null,
            attachments: withNewKeys(storedItems.get(id)?.attachments, cipher.attachments2),
            revision_date: now,
          });
        }
      }
      for (const slice of chunks(folders, ROWS_PER_SLICE)) {
        await yieldToLoop();
        for (const folder of slice) await rewriteFolder(tx, userId, lower(folder.id), folder.name, now);
      }
      for (const [i, send] of sends.entries()) await rewriteSend(tx, userId, lower(send.id), { key: send.key, data: sendData[i] as string, revision_date: now });
      for (const grant of grants) await rewrapGrant(tx, userId, grant.id, grant.keyEncrypted, grantStatus.get(grant.id) as number, now);
      for (const recovery of recoveries) await rewrapRecoveryKey(tx, userId, recovery.organizationId, recovery.key, now);
      // The PRF-wrapped private key stays: the passkey's PRF output did not change, only what it unlocks.
      for (const passkey of passkeys) {
        await updatePasskey(tx, passkey.id, { encrypted_user_key: passkey.encryptedUserKey, encrypted_public_key: passkey.encryptedPublicKey, revision_date: now });
      }
      // The device's private key stays wrapped with its device key; only what it unlocks changed.
      for (const device of devices) {
        await updateDeviceOfUser(tx, userId, device.id, { encrypted_user_key: device.encryptedUserKey, encrypted_public_key: device.encryptedPublicKey, revision_date: now });
      }
      for (const device of removedWithKeys) await updateDeviceOfUser(tx, userId, device.id, { ...NO_DEVICE_KEYS, revision_date: now });

      await setMasterPassword(tx, userId, {
        serverHash,
        key: password.wrappedUserKey,
        // As the official rotation: the hint is the request's, and one left out or null clears it.
        hint: unlock.masterPasswordUnlockData.masterPasswordHint ?? null,
        forcePasswordReset: false,
        now,
      });
      // The key id named the old user key: the new one's when the client sent it, else none
      // until the clients report it after they log in again.
      await updateUser(tx, userId, { ...accountKeysColumns(accountKeys), user_key_id: body.newUserKeyId?.toLowerCase() ?? null });
      await audit.record(tx, client, { type: EventType.User_RotatedKeys, userId, actingUserId: userId });
      await touchVault(tx, userId, now);
    });
  }

  return {
    rotate,

    /** What the new user key must be wrapped for (`GET /accounts/key-management/key-rotation-data`). */
    async rotationData({ userId }: UserCaller): Promise<KeyRotationDataResponse> {
      const [enrollments, grants, passkeys, devices] = await Promise.all([recoveryEnrollments(db, userId), grantsWithKey(db, userId), prfPasskeys(db, userId), activeDevicesOfUser(db, userId)]);
      return toKeyRotationDataResponse(enrollments, grants, passkeys, devices.filter(isTrusted));
    },
  };
}

export type KeyRotation = ReturnType<typeof createKeyRotation>;
