import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { CiphersTable, CipherUserSettingsTable, FoldersTable } from '../../db/schema.js';
import { BadRequest, HttpError } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import { touchVault } from './revisions.js';
import { cipherEvents } from './cipher-access.js';
import { EventType } from '../../platform/audit/event-type.js';
import { serializeCipherData, toCipherData } from './cipher-data.js';
import type { ImportCiphersRequest } from './ciphers.schemas.js';
import { chunks } from '../../db/chunks.js';
import { createWorkQueue, mapInSlices, yieldToLoop } from '../../shared/work-slices.js';
import { deleteCiphers, insertCiphers, newCipherRow, upsertUserSettings } from './ciphers.repository.js';
import type { VaultDeps } from './ciphers.service.js';
import { deleteFolders, insertFolders, listFolders } from './folders.repository.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';

/** Bitwarden's per-request import limits. */
export const IMPORT_LIMITS = { ciphers: 7000, folderRelationships: 7000, folders: 2000 };
export const IMPORT_TOO_LARGE = 'You cannot import this much data at once.';

/** Re-labels a validation error of one item with its place in the import (`ciphers[3].login`). */
export function within<T>(prefix: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof HttpError && error.validationErrors) {
      const renamed = Object.fromEntries(Object.entries(error.validationErrors).map(([k, v]) => [`${prefix}.${k}`, v]));
      throw new BadRequest(error.message, renamed);
    }
    throw error;
  }
}

/** Items written per transaction: a few milliseconds of the database, between which others' requests run. */
const ITEMS_PER_SLICE = 100;

/**
 * `bw import` of a personal vault: folders, items, and which item goes in which folder. Work that
 * grows with the import is cut into slices (docs/security.md): the items are checked a few
 * milliseconds at a time, and written ITEMS_PER_SLICE to a transaction with the event loop let go
 * between them, so an import of 7,000 items never holds the server for everyone else. Every item
 * is checked before the first is written, so bad input writes nothing; should a later slice fail
 * (the database, not the input), the slices already written are undone. A user's imports run one
 * after another, and two users' at most side by side. A folder sent with the id of one of the
 * user's folders is reused (re-importing an export into the same account), any other id is ignored.
 */
export function createCipherImport({ db, audit, clock, pushes }: VaultDeps) {
  const queue = createWorkQueue({ concurrency: 2, queueLimit: 32, busy: 'The server is busy with other imports. Try again in a moment.' });

  /** Removes what a failed import wrote, with an event for each item it removes. */
  async function undo(userId: string, client: ClientContext, cipherIds: string[], folderIds: string[]): Promise<void> {
    await db.transaction().execute(async (tx) => {
      await audit.record(tx, client, cipherEvents(EventType.Cipher_Deleted, userId, cipherIds.map((id) => ({ id }))));
      await deleteCiphers(tx, cipherIds);
      await deleteFolders(tx, userId, folderIds);
      await touchVault(tx, userId, clock.now().toISOString());
    });
  }

  async function write(userId: string, client: ClientContext, request: ImportCiphersRequest, contents: string[], folderOf: Map<number, number>): Promise<string> {
    const now = clock.now().toISOString();
    const newFolders: Insertable<FoldersTable>[] = [];
    const written: string[] = [];
    try {
      const folderIds = await db.transaction().execute(async (tx) => {
        const existing = new Set((await listFolders(tx, userId)).map((f) => f.id));
        const ids = request.folders.map((folder) => {
          const given = folder.id?.toLowerCase();
          if (given && existing.has(given)) return given;
          const id = randomUUID();
          newFolders.push({ id, user_id: userId, name: folder.name, creation_date: now, revision_date: now });
          return id;
        });
        await insertFolders(tx, newFolders);
        await touchVault(tx, userId, now);
        return ids;
      });
      for (const slice of chunks(request.ciphers.map((_, i) => i), ITEMS_PER_SLICE)) {
        await yieldToLoop();
        const ciphers: Insertable<CiphersTable>[] = [];
        const settings: Insertable<CipherUserSettingsTable>[] = [];
        for (const i of slice) {
          const cipher = request.ciphers[i] as ImportCiphersRequest['ciphers'][number];
          const id = randomUUID();
          const folderIndex = folderOf.get(i);
          ciphers.push(newCipherRow({ user_id: userId, organization_id: null }, cipher, contents[i] as string, now, id));
          settings.push({
            user_id: userId,
            cipher_id: id,
            folder_id: folderIndex === undefined ? null : (folderIds[folderIndex] ?? null),
            favorite: cipher.favorite ?? false,
            archived_date: null,
          });
        }
        await db.transaction().execute(async (tx) => {
          await insertCiphers(tx, ciphers);
          await upsertUserSettings(tx, settings, []);
          await audit.record(tx, client, cipherEvents(EventType.Cipher_Created, userId, ciphers));
          await touchVault(tx, userId, now);
        });
        written.push(...ciphers.map((c) => c.id));
      }
    } catch (error) {
      if (written.length > 0 || newFolders.length > 0) await undo(userId, client, written, newFolders.map((f) => f.id));
      throw error;
    }
    return now;
  }

  return {
    async import({ userId, client }: UserCaller, request: ImportCiphersRequest): Promise<void> {
      if (
        request.ciphers.length > IMPORT_LIMITS.ciphers ||
        request.folders.length > IMPORT_LIMITS.folders ||
        request.folderRelationships.length > IMPORT_LIMITS.folderRelationships
      ) {
        throw new BadRequest(IMPORT_TOO_LARGE);
      }
      const contents = await mapInSlices(request.ciphers, (cipher, i) =>
        within(`ciphers[${i}]`, () => {
          if (cipher.organizationId) throw BadRequest.field('organizationId', 'A personal import cannot hold organization items.');
          return serializeCipherData(toCipherData(cipher));
        }),
      );
      const folderOf = new Map<number, number>();
      request.folderRelationships.forEach((rel, i) => {
        if (rel.key >= request.ciphers.length) throw BadRequest.field(`folderRelationships[${i}].key`, 'No item has this index.');
        if (rel.value >= request.folders.length) throw BadRequest.field(`folderRelationships[${i}].value`, 'No folder has this index.');
        folderOf.set(rel.key, rel.value);
      });
      const imported = await queue(userId, () => write(userId, client, request, contents, folderOf));
      pushes.send(userPush(PushType.SyncVault, userId, new Date(imported)));
    },
  };
}

export type CipherImport = ReturnType<typeof createCipherImport>;
