/**
 * Keeps `seedAccount` honest: what it writes must stay what registration writes, and what it
 * hands back must work as `createUser`'s does, or tests that use it would test another account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, seedAccount, type LoggedInUser } from './accounts.js';
import { rsaDecryptEncString, rsaEncryptToEncString } from './bw-crypto.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let registered: LoggedInUser;
let seeded: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer();
  registered = await createUser(server, { name: 'Registered' });
  seeded = await seedAccount(server, { name: 'Seeded' });
});
afterAll(async () => server?.close());

const userRow = (id: string) => server.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** The columns that differ between any two accounts, whoever made them. */
const OWN = ['id', 'email', 'name', 'master_password_hash', 'key', 'public_key', 'private_key', 'security_stamp', 'api_key', 'creation_date', 'revision_date', 'account_revision_date'] as const;

describe('seedAccount', () => {
  it('writes the row registration writes, but for the account\'s own values', async () => {
    const mine = await userRow(seeded.userId);
    const theirs = await userRow(registered.userId);
    const common = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).filter(([column]) => !(OWN as readonly string[]).includes(column)));
    expect(common(mine)).toEqual(common(theirs));
    expect(mine).toMatchObject({
      email: seeded.account.email,
      name: 'Seeded',
      key: seeded.account.encryptedUserKey,
      public_key: seeded.account.publicKeyB64,
      private_key: seeded.account.encryptedPrivateKey,
    });
    expect(mine.master_password_hash).not.toContain(seeded.account.masterPasswordHash);
    expect(mine.api_key).toHaveLength(theirs.api_key.length);
  });

  it('logs in as createUser does: a device, a login event, working tokens', async () => {
    const devices = async (userId: string) => (await server.database.db.selectFrom('devices').select(['identifier', 'type', 'name']).where('user_id', '=', userId).execute());
    const events = async (userId: string) => (await server.database.db.selectFrom('events').select('type').where('user_id', '=', userId).execute()).map((e) => e.type);
    expect(await devices(seeded.userId)).toEqual(await devices(registered.userId));
    expect(await events(seeded.userId)).toEqual(await events(registered.userId));
    const profile = await server.request('GET', '/api/accounts/profile', { token: seeded.accessToken });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ id: seeded.userId, email: seeded.account.email, key: seeded.account.encryptedUserKey });
    const refreshed = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: seeded.refreshToken } });
    expect(refreshed.status).toBe(200);
  });

  it('checks the master password as the server checks any other', async () => {
    const check = (masterPasswordHash: string) => server.request('POST', '/api/accounts/verify-password', { token: seeded.accessToken, json: { masterPasswordHash } });
    expect((await check(seeded.account.masterPasswordHash)).status).toBe(200);
    expect((await check(registered.account.masterPasswordHash)).status).toBe(400);
  });

  it('gives each account a key pair of its own that opens what its public key wraps', async () => {
    const other = await seedAccount(server);
    const keys = new Set([registered, seeded, other].map((u) => u.account.publicKeyB64));
    expect(keys.size).toBe(3);
    const secret = Buffer.from('organization key');
    expect(rsaDecryptEncString(rsaEncryptToEncString(secret, other.account.publicKeyB64), other.account.privateKeyDer).equals(secret)).toBe(true);
  });
});
