import { BadRequest, NotFound } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { verifySecret, type SecretVerificationBody } from '../../platform/auth/secret-verification.js';
import { EventType } from '../../platform/audit/event-type.js';
import { attachmentBytes } from './attachment-data.js';
import { releaseStorage } from '../../platform/storage/quota.js';
import { removeFolders } from '../../platform/storage/orphans.js';
import { attachmentFolder } from '../../platform/storage/store-layout.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';
import { confirmedMembership } from '../../platform/access/org-access.js';
import type { VaultDeps } from './ciphers.service.js';
import { touchVault } from './revisions.js';
import { confirmedMemberUserIds, touchOrganizationMembers } from '../../platform/access/memberships.js';
import { CollectionType } from '../collections/collection-type.js';


/**
 * `POST /ciphers/purge`: the caller's whole vault, or with `organizationId` an organization's,
 * deleted for good after the caller proves their master password (the official
 * SecretVerificationRequestModel; one-time codes are not offered here).
 *
 * - Personal: every item the caller owns (trash and archive included) and every folder of
 *   theirs; organization items they reach are untouched. Their attachments' bytes go back to
 *   their storage in the transaction and the files go after commit. No event, as officially
 *   (Cipher_DeleteByUserId records none); the vault revision moves and a SyncVault push tells
 *   the caller's other devices.
 * - Organization: for confirmed owners and admins and custom members who may edit any
 *   collection (the official EditAnyCollection); anyone else gets 404, as for an unknown
 *   organization. Every item of the organization goes except those in a member's default
 *   collection, which only leave the organization's shared collections (as the official
 *   Cipher_DeleteByOrganizationId); storage goes back to the organization, the members'
 *   revisions move, each confirmed member gets a SyncVault push, and Organization_PurgedVault
 *   (1601) is recorded.
 */
export function createVaultPurge({ db, audit, clock, pushes, files, hasher }: VaultDeps & { hasher: PasswordHasher }) {
  async function purgePersonal(userId: string): Promise<void> {
    const now = clock.now().toISOString();
    const folders = await db.transaction().execute(async (tx) => {
      // Deleted and read in one statement: an upload reserved between a read and the delete would stay counted.
      const deleted = await tx.deleteFrom('ciphers').where('user_id', '=', userId).returning(['id', 'attachments']).execute();
      const withFiles = deleted.filter((r) => r.attachments);
      await releaseStorage(tx, { user_id: userId, organization_id: null }, withFiles.reduce((sum, r) => sum + attachmentBytes(r.attachments), 0));
      await tx.deleteFrom('folders').where('user_id', '=', userId).execute();
      await touchVault(tx, userId, now);
      return withFiles.map((r) => attachmentFolder(r.id));
    });
    // After commit: a crash in between leaves files without an item (the sweeper's), never the reverse.
    await removeFolders(files, folders);
    pushes.send(userPush(PushType.SyncVault, userId, new Date(now)));
  }

  async function purgeOrganization(userId: string, client: ClientContext, organizationId: string): Promise<void> {
    const membership = await confirmedMembership(db, organizationId.toLowerCase(), userId);
    if (!membership || !membership.rights.has('editAnyCollection')) throw new NotFound();
    const orgId = membership.organizationId;
    const now = clock.now().toISOString();
    const { folders, members } = await db.transaction().execute(async (tx) => {
      // Deleted and read in one statement, as for a personal vault.
      const deleted = await tx
        .deleteFrom('ciphers')
        .where('organization_id', '=', orgId)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('collection_ciphers as cc')
                .innerJoin('collections as col', 'col.id', 'cc.collection_id')
                .select('cc.cipher_id')
                .whereRef('cc.cipher_id', '=', 'ciphers.id')
                .where('col.type', '=', CollectionType.DefaultUserCollection),
            ),
          ),
        )
        .returning(['id', 'attachments'])
        .execute();
      const withFiles = deleted.filter((r) => r.attachments);
      await releaseStorage(tx, { user_id: null, organization_id: orgId }, withFiles.reduce((sum, r) => sum + attachmentBytes(r.attachments), 0));
      // Items kept for a member's default collection leave the organization's shared collections.
      await tx
        .deleteFrom('collection_ciphers')
        .where('cipher_id', 'in', (eb) => eb.selectFrom('ciphers').select('id').where('organization_id', '=', orgId))
        .where('collection_id', 'in', (eb) => eb.selectFrom('collections').select('id').where('organization_id', '=', orgId).where('type', '<>', CollectionType.DefaultUserCollection))
        .execute();
      await touchOrganizationMembers(tx, [orgId], now);
      await audit.record(tx, client, { type: EventType.Organization_PurgedVault, organizationId: orgId, actingUserId: userId });
      return { folders: withFiles.map((r) => attachmentFolder(r.id)), members: await confirmedMemberUserIds(tx, orgId) };
    });
    await removeFolders(files, folders);
    pushes.send(members.map((member) => userPush(PushType.SyncVault, member, new Date(now))));
  }

  return {
    async purge({ userId, client }: UserCaller, body: SecretVerificationBody, organizationId: string | undefined): Promise<void> {
      await verifySecret(db, hasher, clock, userId, body, () => new BadRequest('User verification failed.'));
      if (organizationId) await purgeOrganization(userId, client, organizationId);
      else await purgePersonal(userId);
    },
  };
}

export type VaultPurge = ReturnType<typeof createVaultPurge>;
