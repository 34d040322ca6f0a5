import { BadRequest, NotFound } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { accessibleCipher, accessibleCiphers, cipherEvents, personalRevision, touchPersonalSettings, touchRevisions, type CipherRight } from './cipher-access.js';
import { removeFolders } from '../../platform/storage/orphans.js';
import { deleteCiphers, setDeletedDate, upsertUserSettings, type CipherRow } from './ciphers.repository.js';
import { assertOwnFolder, type VaultDeps } from './ciphers.service.js';
import { cipherJson, cipherMiniJson } from './ciphers.schemas.js';
import { cipherPushes, collectionIdsOf, sendBuilt, userPush, type CipherPushType } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';
import { attachmentBytes } from './attachment-data.js';
import { adminCiphers } from './admin-ciphers.js';
import { releaseStorage } from '../../platform/storage/quota.js';
import { attachmentFolder } from '../../platform/storage/store-layout.js';

/**
 * Moves of items between states. The states are two independent marks: in the trash
 * (`deletedDate`, on the item) and archived (`archivedDate`, per user), so an archived item
 * can be trashed and comes back to the archive when restored; the official clients model it
 * the same way (their archive view is "archived and not deleted").
 *
 * | operation        | accepts                              | otherwise                              |
 * |------------------|--------------------------------------|----------------------------------------|
 * | archive          | not archived, not in the trash       | archived: no change; trashed: 400/skip |
 * | unarchive        | archived (in the trash or not)       | no change                              |
 * | soft delete      | not in the trash (archived or not)   | no change (keeps the first date)       |
 * | restore          | in the trash                         | no change                              |
 * | permanent delete | any state                            |                                        |
 * | move (folder)    | any state                            |                                        |
 *
 * Organization items need a right (cipher-access.ts): archive and unarchive need edit; trash,
 * restore and permanent delete need delete; moving to one's own folder needs only sight. A
 * single call on an item the caller sees but lacks the right for answers 400 with Bitwarden's
 * text; bulk calls skip such items.
 *
 * Single calls answer 404 for an id the caller cannot see; bulk calls ignore such ids. An
 * operation that changes nothing writes nothing. Every change bumps the item's and the
 * account's revision date, except that archive, unarchive and move change only the caller's own
 * settings of an organization item: its shared revision stays (touchPersonalSettings).
 */
export const BULK_LIMIT = 500;

/** Bitwarden's texts for each bulk operation over the limit. */
export const BULK_LIMIT_MESSAGES = {
  softDelete: `You can only delete up to ${BULK_LIMIT} items at a time.`,
  delete: `You can only delete up to ${BULK_LIMIT} items at a time. Consider using the "Purge Vault" option instead.`,
  restore: `You can only restore up to ${BULK_LIMIT} items at a time.`,
  move: `You can only move up to ${BULK_LIMIT} items at a time.`,
  archive: `You can only archive up to ${BULK_LIMIT} items at a time.`,
  unarchive: `You can only unarchive up to ${BULK_LIMIT} items at a time.`,
} as const;

export const TRASHED_CANNOT_ARCHIVE = 'Item is in the trash, the item must be restored before archiving.';

/** The ids of one call: a single id (404 when not accessible) or a bulk list (ignored when not). */
export interface Selection {
  ids: readonly string[];
  single: boolean;
  /**
   * Set by the admin console's routes: the items are reached as the organization's admin
   * (admin-ciphers.ts), all or none (404), in the organization named by a bulk call.
   */
  admin?: { organizationId: string | null };
}

function checkLimit(selection: Selection, message: string) {
  if (selection.ids.length > BULK_LIMIT) throw new BadRequest(message, { ids: [message] });
}

async function select(executor: Executor, userId: string, selection: Selection, right: CipherRight): Promise<CipherRow[]> {
  const ids = selection.ids.map((id) => id.toLowerCase());
  if (selection.admin) return adminCiphers(executor, userId, selection.admin.organizationId, ids, right === 'delete' ? 'delete' : 'edit');
  if (selection.single) {
    const [id] = ids;
    if (!id) throw new NotFound();
    return [await accessibleCipher(executor, userId, id, right)];
  }
  return accessibleCiphers(executor, userId, ids, right);
}

/**
 * What a change pushes after its commit (push-messages.ts): a single call on one item sends
 * `item` for it when given; every other call sends one SyncCiphers to the caller. `device`:
 * the acting device's identifier as ContextId where the official server excludes it, else null.
 */
interface Announcement {
  item?: CipherPushType;
  device: string | null;
}


export function createCipherLifecycle({ db, audit, clock, pushes, files, apiBase }: VaultDeps) {
  /** The changed items as JSON text: the admin console's mini form for its selections, else as the caller sees them. */
  const answer = (selection: Selection, rows: readonly CipherRow[]) =>
    rows.map((row) => (selection.admin ? cipherMiniJson(row, apiBase) : cipherJson(row, 'cipher', apiBase)));

  /** Runs a state change on the selected rows that `accepts`, in one transaction, and announces it once committed. */
  async function change(
    userId: string,
    selection: Selection,
    right: CipherRight,
    limitMessage: string,
    accepts: (row: CipherRow) => boolean,
    apply: (tx: Executor, rows: CipherRow[], now: string) => Promise<CipherRow[]>,
    announcement: Announcement,
    /** `personal`: only the caller's own settings of the items change (see touchPersonalSettings). */
    scope: 'item' | 'personal' = 'item',
  ): Promise<CipherRow[]> {
    checkLimit(selection, limitMessage);
    const item = selection.single ? announcement.item : undefined;
    const done = await db.transaction().execute(async (tx) => {
      const rows = await select(tx, userId, selection, right);
      const targets = rows.filter(accepts);
      if (targets.length === 0) return { result: selection.single ? rows : [], changed: null };
      const now = clock.now().toISOString();
      // A permanent delete takes the item's collections with it: read them for the push first.
      const collections = item === PushType.SyncLoginDelete && targets[0] ? await collectionIdsOf(tx, targets[0].id) : undefined;
      const changed = await apply(tx, targets, now);
      if (scope === 'personal') await touchPersonalSettings(tx, userId, targets, now);
      else await touchRevisions(tx, userId, targets, now);
      return { result: changed, changed: { row: changed[0] ?? targets[0], collections, now } };
    });
    if (done.changed) {
      const { row, collections, now } = done.changed;
      if (item !== undefined && row) await sendBuilt(pushes, () => cipherPushes(db, item, row, announcement.device, collections));
      else pushes.send(userPush(PushType.SyncCiphers, userId, new Date(now), announcement.device));
    }
    return done.result;
  }

  return {
    async archive({ userId, client }: UserCaller, selection: Selection): Promise<string[]> {
      const rows = await change(
        userId,
        selection,
        'edit',
        BULK_LIMIT_MESSAGES.archive,
        (row) => {
          if (row.deleted_date && selection.single) throw new BadRequest(TRASHED_CANNOT_ARCHIVE);
          return !row.archived_date && !row.deleted_date;
        },
        async (tx, rows, now) => {
          await writeArchivedDate(tx, userId, rows, now);
          return rows.map((r) => ({ ...r, archived_date: now, revision_date: personalRevision(r, now) }));
        },
        { device: client.deviceIdentifier },
        'personal',
      );
      return answer(selection, rows);
    },

    async unarchive({ userId, client }: UserCaller, selection: Selection): Promise<string[]> {
      const rows = await change(
        userId,
        selection,
        'edit',
        BULK_LIMIT_MESSAGES.unarchive,
        (row) => Boolean(row.archived_date),
        async (tx, rows, now) => {
          await writeArchivedDate(tx, userId, rows, null);
          return rows.map((r) => ({ ...r, archived_date: null, revision_date: personalRevision(r, now) }));
        },
        { device: client.deviceIdentifier },
        'personal',
      );
      return answer(selection, rows);
    },

    async softDelete({ userId, client }: UserCaller, selection: Selection): Promise<void> {
      await change(
        userId,
        selection,
        'delete',
        BULK_LIMIT_MESSAGES.softDelete,
        (row) => !row.deleted_date,
        async (tx, rows, now) => {
          await setDeletedDate(tx, ids(rows), now, now);
          await audit.record(tx, client, cipherEvents(EventType.Cipher_SoftDeleted, userId, rows));
          return rows.map((r) => ({ ...r, deleted_date: now, revision_date: now }));
        },
        bulkOrItem(selection, PushType.SyncCipherUpdate, client),
      );
    },

    async restore({ userId, client }: UserCaller, selection: Selection): Promise<string[]> {
      const rows = await change(
        userId,
        selection,
        'delete',
        BULK_LIMIT_MESSAGES.restore,
        (row) => Boolean(row.deleted_date),
        async (tx, rows, now) => {
          await setDeletedDate(tx, ids(rows), null, now);
          await audit.record(tx, client, cipherEvents(EventType.Cipher_Restored, userId, rows));
          return rows.map((r) => ({ ...r, deleted_date: null, revision_date: now }));
        },
        bulkOrItem(selection, PushType.SyncCipherUpdate, client),
      );
      return answer(selection, rows);
    },

    /** Gone for good: from every read and every sync. */
    async deletePermanently({ userId, client }: UserCaller, selection: Selection): Promise<void> {
      let withFiles: CipherRow[] = [];
      await change(
        userId,
        selection,
        'delete',
        BULK_LIMIT_MESSAGES.delete,
        () => true,
        async (tx, rows) => {
          withFiles = rows.filter((r) => r.attachments);
          // One update per owner (an account or an organization), not per item.
          const freed = new Map<string, { owner: CipherRow; bytes: number }>();
          for (const row of withFiles) {
            const key = row.organization_id ?? row.user_id ?? '';
            const entry = freed.get(key) ?? { owner: row, bytes: 0 };
            entry.bytes += attachmentBytes(row.attachments);
            freed.set(key, entry);
          }
          for (const { owner, bytes } of freed.values()) await releaseStorage(tx, owner, bytes);
          await deleteCiphers(tx, ids(rows));
          await audit.record(tx, client, cipherEvents(EventType.Cipher_Deleted, userId, rows));
          return [];
        },
        bulkOrItem(selection, PushType.SyncLoginDelete, client),
      );
      // After commit: a crash in between leaves files without an item, never an item without files.
      await removeFolders(files, withFiles.map((row) => attachmentFolder(row.id)));
    },

    async move({ userId }: UserCaller, selection: Selection, folderId: string | null): Promise<void> {
      const folder = folderId?.toLowerCase() ?? null;
      checkLimit(selection, BULK_LIMIT_MESSAGES.move);
      await assertOwnFolder(db, userId, folder);
      await change(
        userId,
        selection,
        'read',
        BULK_LIMIT_MESSAGES.move,
        () => true,
        async (tx, rows) => {
          await upsertUserSettings(
            tx,
            rows.map((r) => ({ user_id: userId, cipher_id: r.id, folder_id: folder, favorite: false, archived_date: null })),
            ['folder_id'],
          );
          return [];
        },
        { device: null },
        'personal',
      );
    },
  };
}

/** One item: its own push with the acting device as ContextId; many: one SyncCiphers with none. */
function bulkOrItem(selection: Selection, item: CipherPushType, client: ClientContext): Announcement {
  return selection.single ? { item, device: client.deviceIdentifier } : { device: null };
}

function ids(rows: readonly CipherRow[]): string[] {
  return rows.map((r) => r.id);
}

async function writeArchivedDate(tx: Executor, userId: string, rows: readonly CipherRow[], date: string | null) {
  await upsertUserSettings(
    tx,
    rows.map((r) => ({ user_id: userId, cipher_id: r.id, folder_id: r.folder_id, favorite: Boolean(r.favorite), archived_date: date })),
    ['archived_date'],
  );
}

export type CipherLifecycle = ReturnType<typeof createCipherLifecycle>;
