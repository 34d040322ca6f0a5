import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { CiphersTable, CipherUserSettingsTable, FoldersTable } from '../../db/schema.js';
import { BadRequest, HttpError } from '../../http/errors.js';
import type { ClientContext } from '../../http/request-context.js';
import { touchVault } from './revisions.js';
import { cipherEvents } from './cipher-access.js';
import { EventType } from '../events/event-type.js';
import { serializeCipherData, toCipherData } from './cipher-data.js';
import type { ImportCiphersRequest } from './ciphers.schemas.js';
import { insertCiphers, upsertUserSettings } from './ciphers.repository.js';
import type { VaultDeps } from './ciphers.service.js';
import { insertFolders, listFolders } from './folders.repository.js';
import { userPush } from '../notifications/push-messages.js';
import { PushType } from '../notifications/pushes.js';

/** Bitwarden's per-request import limits. */
export const IMPORT_LIMITS = { ciphers: 7000, folderRelationships: 7000, folders: 2000 };
export const IMPORT_TOO_LARGE = 'You cannot import this much data at once.';

/** Re-labels a validation error of one item with its place in the import (`ciphers[3].login`). */
function within<T>(prefix: string, build: () => T): T {
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

/**
 * `bw import` of a personal vault: folders, items, and which item goes in which folder. It
 * all lands in one transaction or not at all. A folder sent with the id of one of the user's
 * folders is reused (re-importing an export into the same account), any other id is ignored.
 */
export function createCipherImport({ db, audit, clock, pushes }: VaultDeps) {
  return {
    async import(userId: string, client: ClientContext, request: ImportCiphersRequest): Promise<void> {
      if (
        request.ciphers.length > IMPORT_LIMITS.ciphers ||
        request.folders.length > IMPORT_LIMITS.folders ||
        request.folderRelationships.length > IMPORT_LIMITS.folderRelationships
      ) {
        throw new BadRequest(IMPORT_TOO_LARGE);
      }
      const contents = request.ciphers.map((cipher, i) =>
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

      const imported = await db.transaction().execute(async (tx) => {
        const now = clock.now().toISOString();
        const existing = new Set((await listFolders(tx, userId)).map((f) => f.id));
        const newFolders: Insertable<FoldersTable>[] = [];
        const folderIds = request.folders.map((folder) => {
          const given = folder.id?.toLowerCase();
          if (given && existing.has(given)) return given;
          const id = randomUUID();
          newFolders.push({ id, user_id: userId, name: folder.name, creation_date: now, revision_date: now });
          return id;
        });
        const ciphers: Insertable<CiphersTable>[] = [];
        const settings: Insertable<CipherUserSettingsTable>[] = [];
        request.ciphers.forEach((cipher, i) => {
          const id = randomUUID();
          const folderIndex = folderOf.get(i);
          ciphers.push({
            id,
            user_id: userId,
            organization_id: null,
            type: cipher.type,
            data: contents[i] as string,
            key: cipher.key ?? null,
            reprompt: cipher.reprompt ?? 0,
            attachments: null,
            creation_date: now,
            revision_date: now,
            deleted_date: null,
          });
          settings.push({
            user_id: userId,
            cipher_id: id,
            folder_id: folderIndex === undefined ? null : (folderIds[folderIndex] ?? null),
            favorite: cipher.favorite ?? false,
            archived_date: null,
          });
        });
        await insertFolders(tx, newFolders);
        await insertCiphers(tx, ciphers);
        await upsertUserSettings(tx, settings, []);
        await audit.record(tx, client, cipherEvents(EventType.Cipher_Created, userId, ciphers));
        await touchVault(tx, userId, now);
        return now;
      });
      pushes.send(userPush(PushType.SyncVault, userId, new Date(imported)));
    },
  };
}

export type CipherImport = ReturnType<typeof createCipherImport>;
