import { sql, type Kysely } from 'kysely';

/**
 * The items that have attachments, by id (#43): the file sweeper looks, at start and hourly, for
 * attachments announced and never uploaded, and without this index that is a scan of every item.
 * On SQLite that scan runs on the event loop: at six million items it held every request for
 * seconds each hour and slowed each restart. Few items have attachments, so the index is small.
 */
export function itemsWithAttachments() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`create index ciphers_with_attachments on ciphers (id) where attachments is not null`.execute(db);
    },
  };
}
