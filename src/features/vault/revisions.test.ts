import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { touchVault, vaultRevision } from './revisions.js';

describe('touchVault', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("moves the account's revision date and the vault revision, the first time too", async () => {
    const { userId } = await createUser(server);
    const db = server.database.db;
    const before = await vaultRevision(db, userId);
    await db.transaction().execute((tx) => touchVault(tx, userId, '2030-01-02T03:04:05.000Z'));
    await db.transaction().execute((tx) => touchVault(tx, userId, '2030-01-02T03:04:06.000Z'));
    expect(await vaultRevision(db, userId)).toBe(before + 2);
    const account = await db.selectFrom('users').select('account_revision_date').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(account.account_revision_date).toBe('2030-01-02T03:04:06.000Z');
  });

  it("takes the user's row before the revision's, as writes that update the user first do (no deadlock)", async () => {
    const { userId } = await createUser(server);
    const db = server.database.db;
    await db.transaction().execute((tx) => touchVault(tx, userId, '2030-01-01T00:00:00.000Z'));
    const before = await vaultRevision(db, userId);
    let userLocked!: () => void;
    const locked = new Promise<void>((resolve) => (userLocked = resolve));
    // An attachment upload: the user's storage first, the revisions after.
    const upload = db.transaction().execute(async (tx) => {
      await tx.updateTable('users').set({ storage_bytes: sql`storage_bytes + 1` }).where('id', '=', userId).execute();
      userLocked();
      // Time for the other transaction to reach its lock and wait there (PostgreSQL).
      await sleep(300);
      await touchVault(tx, userId, '2030-01-01T00:00:01.000Z');
    });
    await locked;
    // An item create of the same user meanwhile.
    const create = db.transaction().execute((tx) => touchVault(tx, userId, '2030-01-01T00:00:02.000Z'));
    await expect(Promise.all([upload, create])).resolves.toBeDefined();
    expect(await vaultRevision(db, userId)).toBe(before + 2);
  });
});
