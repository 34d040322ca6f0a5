import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seedUser } from '../../../test/support/admin.js';
import { seedOrgItem, seedPersonalItem } from '../../../test/support/org-items.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { freshDatabaseUrl, type TestServer } from '../../../test/support/test-server.js';
import { openDatabase } from '../database.js';
import { migrateToLatest } from '../migrate.js';
import { migrations } from './index.js';

const THIS = '0023-uncounted-reservations';

describe(`migration ${THIS}`, () => {
  it('gives back what announcements not uploaded yet counted under earlier releases, and nothing else', async () => {
    const fresh = await freshDatabaseUrl();
    const database = openDatabase(fresh.url);
    try {
      const all = migrations(database.engine);
      await migrateToLatest(database, { migrations: Object.fromEntries(Object.entries(all).filter(([name]) => name < THIS)) });
      const db = database.db;
      // The seeding helpers need only the database of a test server.
      const server = { database, config: { selfHosted: true } } as unknown as TestServer;
      const now = new Date().toISOString();
      const meta = (size: number, validated: boolean) => ({ fileName: 'x', key: null, size, validated, uploadStarted: now });
      const attach = (id: string, attachments: object) => db.updateTable('ciphers').set({ attachments: JSON.stringify(attachments) }).where('id', '=', id).execute();
      const send = (userId: string, size: number, validated: boolean) =>
        db
          .insertInto('sends')
          .values({
            id: randomUUID(),
            user_id: userId,
            type: 1,
            data: JSON.stringify({ name: 'x', notes: null, file: { id: 'f', fileName: 'x', size, validated, uploadStarted: now } }),
            key: 'k',
            password_hash: null,
            max_access_count: null,
            disabled: false,
            hide_email: false,
            creation_date: now,
            revision_date: now,
            expiration_date: null,
            deletion_date: now,
          })
          .execute();

      const [alice, bob, carol] = [await seedUser(server), await seedUser(server), await seedUser(server)];
      const org = await seedOrganization(server);
      await attach(await seedPersonalItem(server, alice), { a: meta(100, true), b: meta(40, false) });
      await send(alice, 50, false);
      await send(bob, 20, true);
      await attach(await seedOrgItem(server, org), { c: meta(7, false), d: meta(3, true) });
      // A counter already below what its reservations counted stops at zero.
      await attach(await seedPersonalItem(server, carol), { e: meta(30, false) });
      const counters = { [alice]: 190, [bob]: 20, [carol]: 10 };
      for (const [id, bytes] of Object.entries(counters)) await db.updateTable('users').set({ storage_bytes: bytes }).where('id', '=', id).execute();
      await db.updateTable('organizations').set({ storage_bytes: 10 }).where('id', '=', org).execute();

      expect((await migrateToLatest(database)).applied).toContain(THIS);
      const users = await db.selectFrom('users').select(['id', 'storage_bytes']).where('id', 'in', [alice, bob, carol]).execute();
      expect(Object.fromEntries(users.map((u) => [u.id, Number(u.storage_bytes)]))).toEqual({ [alice]: 100, [bob]: 20, [carol]: 0 });
      expect(Number((await db.selectFrom('organizations').select('storage_bytes').where('id', '=', org).executeTakeFirstOrThrow()).storage_bytes)).toBe(3);
    } finally {
      await database.close();
      await fresh.drop();
    }
  });
});
