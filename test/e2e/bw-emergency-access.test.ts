import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount, seedAccount, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { DEFAULT_TEST_ITERATIONS, deriveMasterKey, encryptToEncString, masterPasswordHash, rsaDecryptEncString, rsaEncryptToEncString, stretchMasterKey } from '../support/bw-crypto.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';
import { cipherBody } from '../support/vault.js';

/**
 * The official `bw` client after an emergency takeover: the contact sets the grantor's new master
 * password over the API, as the web vault does; `bw` then logs in as the grantor with it and
 * decrypts the grantor's items, and the old password is refused.
 */
let server: TestServer;
let sink: SmtpSink;
let bw: BwCli;
let grantor: LoggedInUser;
let grantee: LoggedInUser;
const OLD_PASSWORD = 'the grantor master password';
const NEW_PASSWORD = 'set by the emergency contact';

beforeAll(async () => {
  const tls = await createTestTls();
  sink = await startSmtpSink();
  server = await startTestServer({ tls, env: sink.env });
  const account = await registerAccount(server, { email: 'ea-grantor@example.com', password: OLD_PASSWORD, name: 'Grantor', derivation: 'real' });
  grantor = await loginAccount(server, account);
  grantee = await seedAccount(server, { email: 'ea-grantee@example.com' });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
  await sink?.close();
});

const ea = (who: LoggedInUser, path: string, json?: unknown) => server.request('POST', `/api/emergency-access${path}`, { token: who.accessToken, ...(json === undefined ? {} : { json }) });

describe('official bw client: emergency takeover', { timeout: 300_000 }, () => {
  it("logs in as the grantor with the password the contact set, decrypts the grantor's items, and refuses the old one", async () => {
    const item = await server.request('POST', '/api/ciphers', { token: grantor.accessToken, json: cipherBody('login', grantor.account.userKey) });
    expect(item.status, item.text).toBe(200);

    expect((await ea(grantor, '/invite', { email: grantee.account.email, type: 1, waitTimeDays: 1 })).status).toBe(200);
    const mail = await sink.waitFor(grantee.account.email);
    const query = new URLSearchParams(/#\/accept-emergency\?(\S+)/.exec(mail.text)![1]);
    const id = query.get('id')!;
    expect((await ea(grantee, `/${id}/accept`, { token: query.get('token') })).status).toBe(200);
    expect((await ea(grantor, `/${id}/confirm`, { key: rsaEncryptToEncString(grantor.account.userKey.raw, grantee.account.publicKeyB64) })).status).toBe(200);
    expect((await ea(grantee, `/${id}/initiate`)).status).toBe(200);
    expect((await ea(grantor, `/${id}/approve`)).status).toBe(200);

    const takeover = await ea(grantee, `/${id}/takeover`);
    expect(takeover.status, takeover.text).toBe(200);
    const userKey = rsaDecryptEncString(takeover.body.keyEncrypted, grantee.account.privateKeyDer);
    expect(takeover.body.kdfIterations).toBe(DEFAULT_TEST_ITERATIONS);
    const masterKey = deriveMasterKey(NEW_PASSWORD, grantor.account.email, takeover.body.kdfIterations);
    const kdf = { kdfType: takeover.body.kdf, iterations: takeover.body.kdfIterations, memory: null, parallelism: null };
    const salt = grantor.account.email;
    const set = await ea(grantee, `/${id}/password`, {
      authenticationData: { kdf, salt, masterPasswordAuthenticationHash: masterPasswordHash(masterKey, NEW_PASSWORD) },
      unlockData: { kdf, salt, masterKeyWrappedUserKey: encryptToEncString(userKey, stretchMasterKey(masterKey)) },
    });
    expect(set.status, set.text).toBe(200);

    const refused = await bw.login(grantor.account.email, OLD_PASSWORD);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('Invalid master password');

    const res = await bw.login(grantor.account.email, NEW_PASSWORD);
    expect(res.code, res.stderr).toBe(0);
    const items = await bw.json<{ id: string; name: string; login: { username: string } }[]>(['list', 'items']);
    expect(items.map((i) => [i.id, i.name])).toEqual([[item.body.id, 'login item']]);
  });
});
