import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, passwordGrantForm, registerAccount, seedAccount, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import {
  decryptEncString,
  deriveMasterKey,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  masterPasswordHash,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  stretchMasterKey,
  symmetricKeyFrom,
  type SymmetricKey,
  type TestAccount,
} from '../support/bw-crypto.js';
import { seedPolicy } from '../support/members.js';
import { seedMembership, seedOrganization } from '../support/orgs.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';
import { cipherBody } from '../support/vault.js';
import { OrganizationUserType as Role } from '../../src/platform/access/roles.js';

/**
 * The official `bw` client after an organization admin recovered a member's account: the old
 * password is refused, the temporary one unlocks the member's own items, and once the member
 * replaced it with their own, that one does.
 */
let server: TestServer;
let bw: BwCli;
let member: TestAccount;
let memberLogin: LoggedInUser;
let apiKey: string;
const users = (orgId: string) => `/api/organizations/${orgId}/users`;

/** A new master password of the member's (real key derivation, as `bw` derives it), wrapping the member's user key. */
function passwordFor(email: string, iterations: number, userKey: SymmetricKey, password: string) {
  const masterKey = deriveMasterKey(password, email, iterations);
  const hash = masterPasswordHash(masterKey, password);
  const kdf = { kdfType: 0, iterations, memory: null, parallelism: null };
  const wrapped = encryptToEncString(userKey.raw, stretchMasterKey(masterKey));
  return { authenticationData: { salt: email, kdf, masterPasswordAuthenticationHash: hash }, unlockData: { salt: email, kdf, masterKeyWrappedUserKey: wrapped } };
}

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls });
  member = await registerAccount(server, { email: 'recovered-member@example.com', password: 'the forgotten password', derivation: 'real' });
  memberLogin = await loginAccount(server, member);
  expect((await server.request('POST', '/api/ciphers', { token: memberLogin.accessToken, json: cipherBody('login', member.userKey, {}) })).status).toBe(200);
  apiKey = (await server.request('POST', '/api/accounts/api-key', { token: memberLogin.accessToken, json: { masterPasswordHash: member.masterPasswordHash } })).body.apiKey;
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 180_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

// Each CLI command takes seconds, many more on a busy machine.
describe('official bw client: account recovery', { timeout: 300_000 }, () => {
  it('refuses the old password, unlocks with the temporary one, then with the member’s own', async () => {
    // The organization, its key pair, an owner holding its key, the policy on; the member enrolls.
    const orgKey = generateSymmetricKey();
    const pair = generateRsaKeyPair();
    const orgId = await seedOrganization(server, { overrides: { public_key: pair.publicKeyB64, private_key: encryptToEncString(pair.privateKeyDer, orgKey) } });
    const owner = await seedAccount(server);
    await seedMembership(server, { organizationId: orgId, userId: owner.userId, type: Role.Owner, key: rsaEncryptToEncString(orgKey.raw, owner.account.publicKeyB64) });
    const memberId = await seedMembership(server, { organizationId: orgId, userId: memberLogin.userId, key: rsaEncryptToEncString(orgKey.raw, member.publicKeyB64) });
    await seedPolicy(server, orgId, 8);
    const enrolled = await server.request('PUT', `${users(orgId)}/${memberLogin.userId}/reset-password-enrollment`, {
      token: memberLogin.accessToken,
      json: { resetPasswordKey: rsaEncryptToEncString(member.userKey.raw, pair.publicKeyB64), masterPasswordHash: member.masterPasswordHash },
    });
    expect(enrolled.status).toBe(200);

    // The owner unwraps the member's user key through the organization's keys and sets a temporary password.
    const details = (await server.request('GET', `${users(orgId)}/${memberId}/reset-password-details`, { token: owner.accessToken })).body;
    const orgPrivateKey = decryptEncString(details.encryptedPrivateKey, orgKey);
    const userKey = symmetricKeyFrom(rsaDecryptEncString(details.resetPasswordKey, orgPrivateKey));
    const temporary = 'temporary password from the owner';
    const temporaryBody = passwordFor(details.masterPasswordSalt, details.kdfIterations, userKey, temporary);
    const recovered = await server.request('PUT', `${users(orgId)}/${memberId}/recover-account`, {
      token: owner.accessToken,
      json: { resetMasterPassword: true, resetTwoFactor: false, ...temporaryBody },
    });
    expect(recovered.status, recovered.text).toBe(200);

    const old = await bw.login(member.email, member.password);
    expect(old.code).toBe(1);
    expect(old.stderr + old.stdout).toContain('Invalid master password');
    // The server takes the temporary password; `bw` itself sends the member to the web vault to replace it.
    const forced = await bw.login(member.email, temporary);
    expect(forced.code).toBe(1);
    expect(forced.stderr + forced.stdout).toContain('An organization administrator recently changed your master password');
    // With the API key, `bw` skips that check: the temporary password unlocks and decrypts the member's items.
    expect((await bw.loginApiKey(`user.${memberLogin.userId}`, apiKey)).code).toBe(0);
    expect((await bw.unlock(temporary)).code).toBe(0);
    expect((await bw.json<{ name: string }[]>(['list', 'items'])).map((i) => i.name)).toEqual(['login item']);
    expect((await bw.logout()).code).toBe(0);

    // The member sets their own password, as the web vault does after such a login.
    const own = 'the member’s own new password';
    const login = await server.request('POST', '/identity/connect/token', {
      form: { ...passwordGrantForm(member), password: temporaryBody.authenticationData.masterPasswordAuthenticationHash },
    });
    expect(login.body.ForcePasswordReset).toBe(true);
    const token = login.body.access_token as string;
    const replaced = await server.request('PUT', '/api/accounts/update-temp-password', { token, json: { ...passwordFor(member.email, 600_000, member.userKey, own), masterPasswordHint: null } });
    expect(replaced.status, replaced.text).toBe(200);

    expect((await bw.login(member.email, temporary)).code).toBe(1);
    const res = await bw.login(member.email, own);
    expect(res.code, res.stderr).toBe(0);
    expect((await bw.json<{ name: string }[]>(['list', 'items'])).map((i) => i.name)).toEqual(['login item']);
  });
});
