import { sql, type Kysely } from 'kysely';

/**
 * Storage counts uploaded files only: an announced attachment or Send file counts once its bytes
 * are stored (files/attachment-data.ts countedBytes), where earlier releases counted it from the
 * announcement. This gives back what the announcements not uploaded yet had counted, so the
 * counters mean the new thing; those announcements then count when (and if) they are uploaded.
 * Only rows holding a reservation are read (the documents are JSON text as the server wrote it)
 * and only their owners' counters are written.
 */
export function uncountedReservations() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const pending = '%"validated":false%';
      const users = new Map<string, number>();
      const organizations = new Map<string, number>();
      const add = (into: Map<string, number>, id: string, bytes: number) => into.set(id, (into.get(id) ?? 0) + bytes);

      const { rows: items } = await sql<{ user_id: string | null; organization_id: string | null; attachments: string }>`
        select user_id, organization_id, attachments from ciphers where attachments like ${pending}`.execute(db);
      for (const item of items) {
        const entries = Object.values(JSON.parse(item.attachments) as Record<string, { size: number; validated: boolean }>);
        const bytes = entries.reduce((sum, meta) => sum + (meta.validated ? 0 : Number(meta.size)), 0);
        if (item.organization_id) add(organizations, item.organization_id, bytes);
        else if (item.user_id) add(users, item.user_id, bytes);
      }
      const { rows: sends } = await sql<{ user_id: string; data: string }>`select user_id, data from sends where data like ${pending}`.execute(db);
      for (const send of sends) {
        const file = (JSON.parse(send.data) as { file?: { size: number; validated: boolean } }).file;
        if (file && !file.validated) add(users, send.user_id, Number(file.size));
      }

      for (const [table, counts] of [['users', users], ['organizations', organizations]] as const) {
        for (const [id, bytes] of counts) {
          if (bytes <= 0) continue;
          await sql`update ${sql.table(table)} set storage_bytes = case when storage_bytes > ${bytes} then storage_bytes - ${bytes} else 0 end where id = ${id}`.execute(db);
        }
      }
    },
  };
}
