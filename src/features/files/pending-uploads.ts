import type { Db } from '../../db/database.js';
import { parseSendData, SendType } from '../sends/sends.schemas.js';
import { SEND_UPLOAD_WINDOW_MS } from '../sends/sends.service.js';
import { parseAttachments, serializeAttachments, type AttachmentMeta } from '../vault/attachment-data.js';
import { lockCipher, setAttachments, storedAttachments } from '../vault/attachments.repository.js';
import { UPLOAD_WINDOW_MS } from '../vault/attachments.service.js';

/** The longest a request may last: REQUEST_TIMEOUT_SECONDS' maximum (config/settings). */
const LONGEST_REQUEST_MS = 60 * 60 * 1000;

/**
 * How long an announced file waits for its upload: the hour its upload URL is good for (from the
 * announcement or the last renewal), plus the longest an upload begun in that hour may last, so
 * no upload in flight loses its announcement. Two hours.
 */
export const PENDING_UPLOAD_TTL_MS = Math.max(UPLOAD_WINDOW_MS, SEND_UPLOAD_WINDOW_MS) + LONGEST_REQUEST_MS;

/** Documents holding an announcement not uploaded (the server writes them as compact JSON text). */
const PENDING = '%"validated":false%';
const BATCH = 500;

/**
 * The next items after `after` (by id) whose attachments hold an announcement not uploaded.
 * `is not null` lets the partial index of items with attachments (migration 0035) serve it: most
 * items have none, and without it this was a scan of every item on each sweep.
 */
export function itemsWithPendingUploads(db: Db, after: string) {
  return db.selectFrom('ciphers').select(['id', 'attachments']).where('attachments', 'is not', null).where('attachments', 'like', PENDING).where('id', '>', after).orderBy('id').limit(BATCH);
}

/**
 * Drops the announcements whose upload never came, PENDING_UPLOAD_TTL_MS after their upload URL
 * was given or renewed, as a failed upload drops them: the attachment leaves its item, a file
 * Send goes. They counted no storage (attachment-data.ts countedBytes) and have no stored file
 * (a failed upload leaves none; the file sweep removes any other). Answers how many went.
 */
export async function dropStaleAnnouncements(db: Db, now: Date): Promise<number> {
  const cutoff = now.getTime() - PENDING_UPLOAD_TTL_MS;
  const stale = (meta: Pick<AttachmentMeta, 'validated' | 'uploadStarted'>) => !meta.validated && Date.parse(meta.uploadStarted) < cutoff;
  let dropped = 0;
  for (let after = ''; ; ) {
    const items = await itemsWithPendingUploads(db, after).execute();
    for (const item of items) {
      if (!Object.values(parseAttachments(item.attachments)).some(stale)) continue;
      dropped += await db.transaction().execute(async (tx) => {
        await lockCipher(tx, item.id);
        const all = parseAttachments((await storedAttachments(tx, item.id))?.attachments);
        const gone = Object.entries(all).filter(([, meta]) => stale(meta));
        for (const [id] of gone) delete all[id];
        if (gone.length > 0) await setAttachments(tx, item.id, serializeAttachments(all), null);
        return gone.length;
      });
    }
    if (items.length < BATCH) break;
    after = items[items.length - 1]!.id;
  }
  for (let after = ''; ; ) {
    const sends = await db.selectFrom('sends').select(['id', 'data']).where('type', '=', SendType.File).where('data', 'like', PENDING).where('id', '>', after).orderBy('id').limit(BATCH).execute();
    for (const send of sends) {
      const file = parseSendData(send.data).file;
      if (!file || !stale(file)) continue;
      // Not if its upload completed (or the Send changed) since it was read.
      const done = await db.deleteFrom('sends').where('id', '=', send.id).where('data', '=', send.data).executeTakeFirst();
      dropped += Number(done.numDeletedRows);
    }
    if (sends.length < BATCH) break;
    after = sends[sends.length - 1]!.id;
  }
  return dropped;
}
