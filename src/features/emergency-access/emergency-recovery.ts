import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import { chunks } from '../../db/chunks.js';
import type { Db, Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { deleteMembership } from '../../platform/access/memberships.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { accountSalt, newMasterPasswordOf, setMasterPassword } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findUserById, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { Clock } from '../../shared/clock.js';
import { policiesOfMemberships } from '../policies/policies.repository.js';
import { toPolicyResponse, type PolicyResponse } from '../policies/policies.schemas.js';
import { deleteAllProviders } from '../two-factor/two-factor.repository.js';
import { parseAttachments, type AttachmentResponse } from '../vault/attachment-data.js';
import { signedDownload } from '../vault/attachments.service.js';
import { findPersonalCiphers, listPersonalIds } from '../vault/ciphers.repository.js';
import { cipherJson } from '../vault/ciphers.schemas.js';
import { lockUser, membershipsOf, type EmergencyAccessRow } from './emergency-access.repository.js';
import { EmergencyAccessStatus as Status, EmergencyAccessType } from './emergency-access-status.js';
import type { PasswordBody, TakeoverResponse } from './emergency-access.schemas.js';
import { grantOf, NOT_VALID, refuseUnderAutoConfirm } from './emergency-access.service.js';

export interface EmergencyRecoveryDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  keys: SigningKeys;
  hasher: PasswordHasher;
  pushes: Pushes;
  apiBase: string;
  /** The grantor's phones leave the organizations a takeover removes them from (the mobile relay). */
  registrations?: PushRegistrations;
}

const AUTO_CONFIRM = 'Emergency access is not available for this account: it is a member of an organization that uses Automatic User Confirmation.';

/**
 * What a grantee does with granted access (status 4, "recovery approved"), each only with the
 * grant's own type, as the official IsValidRequest checks: a view grant reads the grantor's
 * personal items and their attachments; a takeover grant reads the grantor's KDF settings and
 * wrapped user key, then sets the grantor's new master password.
 */
export function createEmergencyRecovery(deps: EmergencyRecoveryDeps) {
  const { db, clock, audit, keys, hasher, pushes, apiBase } = deps;

  async function granted(userId: string, id: string, type: EmergencyAccessType, executor: Executor = db): Promise<EmergencyAccessRow> {
    const grant = await grantOf(executor, userId, id, ['grantee'], executor !== db);
    if (grant.status !== (Status.RecoveryApproved as number) || grant.type !== (type as number) || !grant.key_encrypted) throw new BadRequest(NOT_VALID);
    return grant;
  }

  async function grantorOf(grant: EmergencyAccessRow): Promise<UserRow> {
    const grantor = await findUserById(db, grant.grantor_id);
    if (!grantor) throw new NotFound();
    return grantor;
  }

  /**
   * The new password as the client sent it (newMasterPasswordOf). The grantee derives the new
   * master key with the KDF and salt the takeover answered: the official server refuses others,
   * since the grantor's other clients still expect them.
   */
  function newPassword(grantor: UserRow, body: PasswordBody) {
    const next = newMasterPasswordOf(grantor, body);
    return { clientHash: next.authenticationHash, key: next.wrappedUserKey };
  }

  return {
    /** POST {id}/view: the grantor's personal items, as `cipher` answers, with the wrapped key; JSON text. */
    async view(caller: UserCaller, id: string): Promise<string> {
      const grant = await granted(caller.userId, id, EmergencyAccessType.View);
      // Ids first, then the rows a slice at a time, as sync reads a vault: only one slice's rows
      // are held beside the answer's text, however large the grantor's vault.
      const items: string[] = [];
      for (const slice of chunks(await listPersonalIds(db, grant.grantor_id))) {
        for (const row of await findPersonalCiphers(db, grant.grantor_id, slice)) items.push(cipherJson(row, 'cipher', apiBase));
      }
      await audit.record(db, caller.client, { type: EventType.EmergencyAccess_Viewed, userId: grant.grantor_id, actingUserId: caller.userId });
      return `{"object":"emergencyAccessView","keyEncrypted":${JSON.stringify(grant.key_encrypted)},"ciphers":[${items.join(',')}]}`;
    },

    /** GET {id}/{cipherId}/attachment/{attachmentId}: a viewed item's attachment with a download URL good for a minute. */
    async attachment(caller: UserCaller, id: string, cipherId: string, attachmentId: string): Promise<AttachmentResponse> {
      const grant = await granted(caller.userId, id, EmergencyAccessType.View);
      const cid = cipherId.toLowerCase();
      // Only that item, and only if it is the grantor's own.
      const [row] = await findPersonalCiphers(db, grant.grantor_id, [cid]);
      const meta = row ? parseAttachments(row.attachments)[attachmentId] : undefined;
      if (!meta || !meta.validated) throw new NotFound();
      // The vault's own download route serves the bytes for this token.
      return signedDownload(keys, apiBase, cid, attachmentId, meta);
    },

    /** POST {id}/takeover: what the grantee needs to make the new password: the grantor's KDF and the wrapped key. */
    async takeover(caller: UserCaller, id: string): Promise<TakeoverResponse> {
      const grant = await granted(caller.userId, id, EmergencyAccessType.Takeover);
      const grantor = await grantorOf(grant);
      await refuseUnderAutoConfirm(db, grantor.id, AUTO_CONFIRM);
      return {
        object: 'emergencyAccessTakeover',
        keyEncrypted: grant.key_encrypted ?? '',
        kdf: grantor.kdf,
        kdfIterations: grantor.kdf_iterations,
        kdfMemory: grantor.kdf_memory,
        kdfParallelism: grantor.kdf_parallelism,
        salt: accountSalt(grantor),
      };
    },

    /**
     * POST {id}/password: sets the grantor's new master password, turns off their two-step
     * login and new-device checks (they would lock the grantee out), removes them from every
     * organization they do not own, and ends all their sessions, as the official server does.
     */
    async password(caller: UserCaller, id: string, body: PasswordBody): Promise<void> {
      const grant = await granted(caller.userId, id, EmergencyAccessType.Takeover);
      const grantor = await grantorOf(grant);
      await refuseUnderAutoConfirm(db, grantor.id, AUTO_CONFIRM);
      const change = newPassword(grantor, body);
      const serverHash = await hasher.hash(change.clientHash);
      let left: { id: string; organization_id: string }[] = [];
      await db.transaction().execute(async (tx) => {
        // Still granted now that the transaction holds the grant: a rejection may have come between.
        await granted(caller.userId, grant.id, EmergencyAccessType.Takeover, tx);
        // The checks above read the grantor before the hashing; a KDF change or a policy may
        // have come since, so they run again on the locked row before anything is written.
        const fresh = await lockUser(tx, grant.grantor_id);
        if (!fresh) throw new NotFound();
        await refuseUnderAutoConfirm(tx, fresh.id, AUTO_CONFIRM);
        newPassword(fresh, body);
        const now = clock.now().toISOString();
        // The grantor's hint was for the old password; the official server clears it.
        await setMasterPassword(tx, grantor.id, { serverHash, key: change.key, hint: null, forcePasswordReset: false, now });
        await deleteAllProviders(tx, grantor.id);
        await updateUser(tx, grantor.id, { verify_devices: false });
        left = (await membershipsOf(tx, grantor.id)).filter((m) => m.type !== (OrganizationUserType.Owner as number));
        for (const membership of left) await deleteMembership(tx, membership.id, now);
        await audit.record(tx, caller.client, [
          { type: EventType.EmergencyAccess_TakenOver, userId: grantor.id, actingUserId: caller.userId },
          ...left.map((m) => ({ type: EventType.OrganizationUser_Removed, organizationId: m.organization_id, organizationUserId: m.id, actingUserId: caller.userId })),
        ]);
      });
      pushes.send(logOutPush(grantor.id));
      for (const membership of left) deps.registrations?.leftOrganization(membership.organization_id, [grantor.id]);
    },

    /**
     * GET {id}/policies: for a takeover, the policies of the grantor's organizations when the
     * grantor owns one (the client applies their master password rules to the new password);
     * an empty list otherwise, as the official server answers.
     */
    async policies(caller: UserCaller, id: string): Promise<PolicyResponse[]> {
      const grant = await granted(caller.userId, id, EmergencyAccessType.Takeover);
      const owner = (await membershipsOf(db, grant.grantor_id)).some((m) => m.type === (OrganizationUserType.Owner as number));
      if (!owner) return [];
      return (await policiesOfMemberships(db, grant.grantor_id, [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed])).map(toPolicyResponse);
    },
  };
}

export type EmergencyRecovery = ReturnType<typeof createEmergencyRecovery>;
