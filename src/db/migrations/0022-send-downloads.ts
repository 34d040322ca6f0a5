import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Send file download URLs, each good for one download: a row per URL handed out, deleted by the
 * download that uses it (one conditional delete, so two instances of a fleet cannot both serve
 * it). Rows go with their Send; expired ones are dropped when the Send hands out the next URL.
 */
export function sendDownloads(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('send_downloads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('send_id', 'text', (c) => c.notNull().references('sends.id').onDelete('cascade'))
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('send_downloads_send').on('send_downloads').columns(['send_id', 'expiration_date']).execute();
    },
  };
}
