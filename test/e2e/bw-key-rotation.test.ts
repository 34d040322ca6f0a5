import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { deriveMasterKey, encryptText, encryptToEncString, generateSymmetricKey, keyId, masterPasswordHash, stretchMasterKey } from '../support/bw-crypto.js';
import { textSendBody } from '../support/sends.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';
import { cipherBody } from '../support/vault.js';

/**
 * The official `bw` after a user key rotation with a password change: it logs in with the new
 * password and decrypts every item and folder name with the rotated key; its old session, the old
 * refresh token and the old password are refused.
 */
let server: TestServer;
let bw: BwCli;
let user: LoggedInUser;
const PASSWORD = 'rotation master password';
const NEW_PASSWORD = 'the rotated master password';

async function api(method: string, path: string, json?: unknown) {
  const res = await server.request(method, path, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body as { id: string };
}

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls });
  const account = await registerAccount(server, { email: 'rotating@example.com', password: PASSWORD, name: 'Rotating User', derivation: 'real' });
  user = await loginAccount(server, account);
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

describe('official bw client: user key rotation', { timeout: 300_000 }, () => {
  it('decrypts the whole vault with the rotated key and refuses the old session and password', async () => {
    const { account } = user;
    const oldKey = account.userKey;
    const folder = await api('POST', '/api/folders', { name: encryptText('Rotated folder', oldKey) });
    const login = await api('POST', '/api/ciphers', cipherBody('login', oldKey, { folderId: folder.id }));
    const note = await api('POST', '/api/ciphers', cipherBody('secureNote', oldKey));
    await api('PUT', `/api/ciphers/${note.id}/delete`);
    const deletion = new Date(Date.now() + 86_400_000).toISOString();
    const send = await api('POST', '/api/sends', textSendBody(deletion, { key: encryptToEncString(randomBytes(16), oldKey) }));
    expect((await bw.login(account.email, PASSWORD)).code).toBe(0);

    const newKey = generateSymmetricKey();
    const masterKey = deriveMasterKey(NEW_PASSWORD, account.email, account.iterations);
    const newHash = masterPasswordHash(masterKey, NEW_PASSWORD);
    const rotated = await server.request('POST', '/api/accounts/key-management/rotate-user-account-keys', {
      token: user.accessToken,
      json: {
        oldMasterKeyAuthenticationHash: account.masterPasswordHash,
        accountUnlockData: {
          masterPasswordUnlockData: {
            kdfType: 0,
            kdfIterations: account.iterations,
            email: account.email,
            masterKeyAuthenticationHash: newHash,
            masterKeyEncryptedUserKey: encryptToEncString(newKey.raw, stretchMasterKey(masterKey)),
            masterPasswordHint: null,
          },
          emergencyAccessUnlockData: [],
          organizationAccountRecoveryUnlockData: [],
          passkeyUnlockData: [],
          deviceKeyUnlockData: [],
        },
        accountKeys: { userKeyEncryptedAccountPrivateKey: encryptToEncString(account.privateKeyDer, newKey), accountPublicKey: account.publicKeyB64 },
        accountData: {
          ciphers: [
            { ...cipherBody('login', newKey, { folderId: folder.id }), id: login.id },
            { ...cipherBody('secureNote', newKey), id: note.id },
          ],
          folders: [{ id: folder.id, name: encryptText('Rotated folder', newKey) }],
          sends: [{ ...textSendBody(deletion, { key: encryptToEncString(randomBytes(16), newKey) }), id: send.id }],
        },
      },
    });
    expect(rotated.status, rotated.text).toBe(200);

    // The CLI's session and refresh token died with the rotation.
    expect((await bw.run(['sync', '--force'])).code).not.toBe(0);
    const refresh = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: user.refreshToken } });
    expect(refresh.status).toBe(400);
    await bw.logout();
    const old = await bw.login(account.email, PASSWORD);
    expect(old.code).toBe(1);
    expect(old.stderr + old.stdout).toContain('Invalid master password');

    const res = await bw.login(account.email, NEW_PASSWORD);
    expect(res.code, res.stderr).toBe(0);
    const items = await bw.json<{ id: string; name: string; folderId: string | null; login?: { username: string; password: string } }[]>(['list', 'items']);
    expect(items.map((i) => i.name)).toEqual(['login item']);
    expect(items[0]).toMatchObject({ folderId: folder.id, login: { username: 'alice', password: 's3cret password' } });
    const trashed = await bw.json<{ name: string }[]>(['list', 'items', '--trash']);
    expect(trashed.map((i) => i.name)).toEqual(['secureNote item']);
    const folders = await bw.json<{ id: string | null; name: string }[]>(['list', 'folders']);
    expect(folders.filter((f) => f.id).map((f) => f.name)).toEqual(['Rotated folder']);
    // The CLI tells the server the id of the key it now holds (the rotation cleared the old one).
    const row = await server.database.db.selectFrom('users').select('user_key_id').where('id', '=', user.userId).executeTakeFirstOrThrow();
    expect(row.user_key_id).toBe(keyId(newKey));
  });
});
