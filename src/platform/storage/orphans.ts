import type { Executor } from '../../db/database.js';
import type { FileStore } from './file-store.js';
import { attachmentFolder, sendFolder } from './store-layout.js';

/** A Send's `type` when it carries a file (SendType.File); text Sends have no folder. */
export const FILE_SEND_TYPE = 1;

/**
 * The store folders (`attachments/{cipherId}`, `sends/{sendId}`) of the files an account or an
 * organization holds, read inside the deleting transaction before its rows go: the caller removes
 * them with `removeFolders` once the transaction has committed. Deleting the rows first means a
 * crash in between leaves files no row names (the file sweeper removes those), never a row whose
 * file is gone. Storage counters need no change: they belong to the rows being deleted.
 */
export async function fileFoldersOf(executor: Executor, owner: { userId: string } | { organizationId: string }): Promise<string[]> {
  if ('organizationId' in owner) {
    const items = await executor.selectFrom('ciphers').select('id').where('organization_id', '=', owner.organizationId).where('attachments', 'is not', null).execute();
    return items.map((r) => attachmentFolder(r.id));
  }
  const items = await executor.selectFrom('ciphers').select('id').where('user_id', '=', owner.userId).where('attachments', 'is not', null).execute();
  const sends = await executor.selectFrom('sends').select('id').where('user_id', '=', owner.userId).where('type', '=', FILE_SEND_TYPE).execute();
  return [...items.map((r) => attachmentFolder(r.id)), ...sends.map((r) => sendFolder(r.id))];
}

/**
 * Removes the folders from the store after a commit. The rows are already gone, so a failure
 * here must not fail the request: it goes to `onError`, and the sweeper removes what is left.
 */
export async function removeFolders(store: FileStore, folders: readonly string[], onError: (error: unknown) => void = () => undefined): Promise<void> {
  for (const folder of folders) {
    try {
      await store.deleteAll(folder);
    } catch (error) {
      onError(error);
    }
  }
}
