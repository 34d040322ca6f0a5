import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { touchVault } from './revisions.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { accessibleCipher, cipherEvents, personalRevision, touchPersonalSettings, reachedCollections, touchRevisions } from './cipher-access.js';
import { organizationItems } from './org-items.js';
import { serializeCipherData, toCipherData } from './cipher-data.js';
import { cipherJson, cipherMiniJson, type CipherPartialRequest, type CipherRequest } from './ciphers.schemas.js';
import {
  insertCiphers,
  newCipherRow,
  listPersonalCiphers,
  updateCipherContent,
  upsertUserSettings,
  type CipherRow,
} from './ciphers.repository.js';
import { findFolder } from './folders.repository.js';
import { cipherAsAdmin } from './admin-ciphers.js';
import { cipherPushes, sendBuilt } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import type { FileStore } from '../../platform/storage/file-store.js';
import { withNewKeys } from './attachment-data.js';
import { lockCipher } from './attachments.repository.js';
import { assertEncryptedByUserKey } from './encrypted-by.js';

export interface VaultDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  /** Told after each commit what changed (push-messages.ts). */
  pushes: Pushes;
  /** Where attachment files live: a permanent delete removes them after commit. */
  files: FileStore;
  /** Base of the attachment URLs in the items answered (attachment-data.ts apiBaseUrl). */
  apiBase: string;
}

/** Bitwarden's text for a stale lastKnownRevisionDate; the clients show it as it is. */
export const OUT_OF_DATE =
  'The item cannot be saved because it is out of date. To edit this item, first sync your vault, or log out and back in.';

/** Clients round or truncate the revision date they echo (the SDK drops milliseconds). */
const REVISION_TOLERANCE_MS = 1000;

/** Refuses a write based on an older copy of the item than the one stored. */
export function assertCurrent(existing: Pick<CipherRow, 'revision_date'>, lastKnownRevisionDate: string | null | undefined): void {
  if (lastKnownRevisionDate && Date.parse(existing.revision_date) - Date.parse(lastKnownRevisionDate) > REVISION_TOLERANCE_MS) {
    throw new BadRequest(OUT_OF_DATE);
  }
}

export async function assertOwnFolder(executor: Executor, userId: string, folderId: string | null | undefined, field = 'folderId') {
  if (folderId && !(await findFolder(executor, userId, folderId.toLowerCase()))) {
    throw BadRequest.field(field, 'Folder not found.');
  }
}

/** `POST /ciphers` makes personal items; organization items come through `POST /ciphers/create` or a share. */
function assertPersonal(request: { organizationId?: string | null }) {
  if (request.organizationId) {
    throw BadRequest.field('organizationId', 'Organization items are created with their collections (POST /ciphers/create).');
  }
}

/**
 * Creating, reading and replacing items; lifecycle moves are in cipher-lifecycle.ts. Items are
 * answered as JSON text (cipherJson), which the routes send as it is.
 */
export function createCipherService({ db, audit, clock, pushes, apiBase }: VaultDeps) {
  const answer = (row: CipherRow) => cipherJson(row, 'cipher', apiBase);

  return {
    /** The caller's items and the organization items they reach through collections, as in sync, in the details form. */
    async list({ userId }: UserCaller): Promise<string[]> {
      const [personal, collections] = await Promise.all([listPersonalCiphers(db, userId), reachedCollections(db, userId)]);
      const own = new Set(personal.map((c) => c.id));
      const rows = [...personal, ...(await organizationItems(db, userId, collections)).filter((c) => !own.has(c.id))];
      return rows.map((row) => cipherJson(row, 'cipherDetails', apiBase));
    },

    async get({ userId }: UserCaller, id: string): Promise<string> {
      return answer(await accessibleCipher(db, userId, id.toLowerCase()));
    },

    /** The item in the details form, with the collections the caller sees it in. */
    async details({ userId }: UserCaller, id: string): Promise<string> {
      return cipherJson(await accessibleCipher(db, userId, id.toLowerCase()), 'cipherDetails', apiBase);
    },

    async create({ userId, client }: UserCaller, request: CipherRequest): Promise<string> {
      assertPersonal(request);
      const data = serializeCipherData(toCipherData(request));
      const folderId = request.folderId?.toLowerCase() ?? null;
      const created = await db.transaction().execute(async (tx) => {
        await assertOwnFolder(tx, userId, folderId);
        await assertEncryptedByUserKey(tx, userId, request.encryptedByKeyId);
        const now = clock.now().toISOString();
        const row: CipherRow = {
          ...newCipherRow({ user_id: userId, organization_id: null }, request, data, now),
          folder_id: folderId,
          favorite: request.favorite ?? false,
          archived_date: null,
        };
        const { folder_id, favorite, archived_date, ...cipher } = row;
        await insertCiphers(tx, [cipher]);
        // No settings row stands for no folder and no favorite (the reads join it optionally).
        if (folder_id || favorite) await upsertUserSettings(tx, [{ user_id: userId, cipher_id: row.id, folder_id, favorite: Boolean(favorite), archived_date }], []);
        await audit.record(tx, client, cipherEvents(EventType.Cipher_Created, userId, [row]));
        await touchVault(tx, userId, now);
        return row;
      });
      await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherCreate, created, client.deviceIdentifier, []));
      return answer(created);
    },

    /**
     * PUT replaces the whole item; a stale client copy is refused and nothing is written.
     * `asAdmin`: the admin console's edit (`PUT /ciphers/{id}/admin`): the item is reached as the
     * organization's admin (admin-ciphers.ts) and the caller's own folder and favorite stay; it
     * answers the item's mini form.
     */
    async update({ userId, client }: UserCaller, id: string, request: CipherRequest, asAdmin = false): Promise<string> {
      const data = serializeCipherData(toCipherData(request));
      const folderId = request.folderId?.toLowerCase() ?? null;
      const updated = await db.transaction().execute(async (tx) => {
        // The attachments document is read and written back: an upload landing in between must wait.
        await lockCipher(tx, id.toLowerCase());
        const existing = asAdmin ? await cipherAsAdmin(tx, userId, id) : await accessibleCipher(tx, userId, id.toLowerCase(), 'edit');
        if ((request.organizationId?.toLowerCase() ?? null) !== existing.organization_id) {
          throw BadRequest.field(
            'organizationId',
            existing.organization_id ? 'An organization item cannot change organization.' : 'Share the item to move it to an organization.',
          );
        }
        if (existing.deleted_date) {
          throw new BadRequest('You cannot edit an item in the trash. Restore it first.');
        }
        assertCurrent(existing, request.lastKnownRevisionDate);
        if (!asAdmin) await assertOwnFolder(tx, userId, folderId);
        if (!asAdmin && !existing.organization_id) await assertEncryptedByUserKey(tx, userId, request.encryptedByKeyId);
        const now = clock.now().toISOString();
        const content = {
          type: request.type,
          data,
          key: request.key ?? null,
          reprompt: request.reprompt ?? 0,
          attachments: withNewKeys(existing.attachments, request.attachments2),
          revision_date: now,
        };
        await updateCipherContent(tx, existing.id, content);
        const favorite = asAdmin ? Boolean(existing.favorite) : (request.favorite ?? false);
        if (!asAdmin && folderId !== existing.folder_id || favorite !== Boolean(existing.favorite)) {
          await upsertUserSettings(tx, [{ user_id: userId, cipher_id: existing.id, folder_id: folderId, favorite, archived_date: null }], [
            'folder_id',
            'favorite',
          ]);
        }
        await audit.record(tx, client, cipherEvents(EventType.Cipher_Updated, userId, [existing]));
        await touchRevisions(tx, userId, [existing], now);
        return { ...existing, ...content, folder_id: asAdmin ? existing.folder_id : folderId, favorite };
      });
      await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherUpdate, updated, client.deviceIdentifier));
      return asAdmin ? cipherMiniJson(updated, apiBase) : answer(updated);
    },

    /** The caller's own folder and favorite of an item, in any state (trash and archive too). */
    async updatePartial({ userId }: UserCaller, id: string, request: CipherPartialRequest): Promise<string> {
      const folderId = request.folderId?.toLowerCase() ?? null;
      const favorite = request.favorite ?? false;
      const updated = await db.transaction().execute(async (tx) => {
        const existing = await accessibleCipher(tx, userId, id.toLowerCase());
        await assertOwnFolder(tx, userId, folderId);
        const now = clock.now().toISOString();
        await upsertUserSettings(tx, [{ user_id: userId, cipher_id: existing.id, folder_id: folderId, favorite, archived_date: null }], [
          'folder_id',
          'favorite',
        ]);
        await touchPersonalSettings(tx, userId, [existing], now);
        return { ...existing, folder_id: folderId, favorite, revision_date: personalRevision(existing, now) };
      });
      return answer(updated);
    },
  };
}

export type CipherService = ReturnType<typeof createCipherService>;
