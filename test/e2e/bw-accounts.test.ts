import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount, testAccount } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import type { TestAccount } from '../support/bw-crypto.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';

/**
 * The official `bw` client against a real Strongroom over HTTPS: login, status, lock, unlock,
 * logout, API-key login, a wrong password, and a password change ending the old session.
 */
let server: TestServer;
let bw: BwCli;
let account: TestAccount;
const PASSWORD = 'cli master password';

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls });
  account = await registerAccount(server, { email: 'cli-user@example.com', password: PASSWORD, name: 'CLI User', derivation: 'real' });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

// Each CLI command takes seconds, many more on a busy machine.
describe('official bw client: accounts', { timeout: 300_000 }, () => {
  it('refuses a wrong password with its normal message', async () => {
    const res = await bw.login(account.email, 'not the password');
    expect(res.code).toBe(1);
    expect(res.stderr + res.stdout).toContain('Invalid master password');
  });

  it('logs in with the master password and shows the vault unlocked', async () => {
    const res = await bw.login(account.email, PASSWORD);
    expect(res.code, res.stderr).toBe(0);
    expect(bw.session).toMatch(/.{20,}/);
    const status = await bw.status();
    expect(status).toMatchObject({ status: 'unlocked', userEmail: account.email, serverUrl: server.baseUrl });
    const row = await server.database.db.selectFrom('users').select(['id', 'user_key_id']).executeTakeFirstOrThrow();
    expect(status.userId).toBe(row.id);
    // The CLI posts its user key id after the first login; the server now knows it.
    expect(row.user_key_id).toBe(account.userKeyId);
  });

  it('locks and unlocks', async () => {
    expect((await bw.lock()).code).toBe(0);
    expect((await bw.status()).status).toBe('locked');
    expect((await bw.unlock(PASSWORD)).code).toBe(0);
    expect((await bw.status()).status).toBe('unlocked');
  });

  it('logs out, then logs in with the personal API key', async () => {
    const user = await loginAccount(server, account);
    const key = await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: { masterPasswordHash: account.masterPasswordHash } });
    expect((await bw.logout()).code).toBe(0);
    expect((await bw.status()).status).toBe('unauthenticated');

    const res = await bw.loginApiKey(`user.${user.userId}`, key.body.apiKey);
    expect(res.code, res.stderr).toBe(0);
    expect((await bw.status()).status).toBe('locked');
    expect((await bw.unlock(PASSWORD)).code).toBe(0);
    expect((await bw.status()).status).toBe('unlocked');
  });

  it('loses its session on the server after a password change made elsewhere', async () => {
    expect((await bw.logout()).code).toBe(0);
    expect((await bw.login(account.email, PASSWORD)).code).toBe(0);
    expect((await bw.run(['sync', '--force'])).code).toBe(0);

    const other = await loginAccount(server, account);
    const next = testAccount(account.email, 'a different master password', undefined, 'real');
    const changed = await server.request('POST', '/api/accounts/password', {
      token: other.accessToken,
      json: { masterPasswordHash: account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash, key: next.encryptedUserKey },
    });
    expect(changed.status).toBe(200);

    const res = await bw.run(['sync', '--force']);
    expect(res.code).not.toBe(0);
  });
});
