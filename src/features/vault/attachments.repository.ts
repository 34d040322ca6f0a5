import { sendAhead } from '../../db/postgres-driver.js';
import type { Executor } from '../../db/database.js';
import { rowChange } from './ciphers.repository.js';

export async function setAttachments(executor: Executor, cipherId: string, attachments: string | null, revisionDate: string | null): Promise<void> {
  await executor
    .updateTable('ciphers')
    .set(revisionDate ? { attachments, revision_date: revisionDate, ...rowChange } : { attachments, ...rowChange })
    .where('id', '=', cipherId)
    .execute();
}

export async function storedAttachments(executor: Executor, cipherId: string): Promise<{ id: string; attachments: string | null; user_id: string | null; organization_id: string | null } | undefined> {
  return executor.selectFrom('ciphers').select(['id', 'attachments', 'user_id', 'organization_id']).where('id', '=', cipherId).executeTakeFirst();
}

/**
 * Takes the item's row lock for the rest of the transaction, so that two changes to its
 * attachments document cannot interleave their read and write: `select … for update` on
 * PostgreSQL, which writes nothing; on SQLite the transaction holds the database's write lock
 * from its start (db/dialect.ts) and the clause is left out. Sent ahead (sendAhead): the read
 * that follows goes out with it, and PostgreSQL starts that read once the lock is granted, so it
 * sees what the lock waited for. Nothing outside the database may rely on the lock before the
 * transaction's next statement has answered.
 */
export async function lockCipher(executor: Executor, cipherId: string): Promise<void> {
  await sendAhead(executor, executor.selectFrom('ciphers').select('id').where('id', '=', cipherId).forUpdate());
}
