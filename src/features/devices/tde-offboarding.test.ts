import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordGrantForm, seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptEncString, deriveMasterKey, encryptToEncString, masterPasswordHash, stretchMasterKey } from '../../../test/support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { MemberDecryptionType, saveSsoConfig } from '../sso/sso-config.repository.js';
import { OFFBOARDING_REFUSALS } from './tde-offboarding.js';

/**
 * `PUT /accounts/update-tde-offboarding-password`: a member without a master password, whose
 * organization went from trusted devices back to master passwords, sets one.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const db = () => server.database.db;
const ITERATIONS = 600_000;

/** A member of an SSO organization whose account has no master password (as one made through SSO with trusted devices). */
async function memberWithoutPassword(decryption: number, opts: { useSso?: boolean; sso?: boolean } = {}): Promise<{ user: LoggedInUser; orgId: string }> {
  const user = await seedAccount(server);
  const orgId = await seedOrganization(server, { overrides: { use_sso: opts.useSso ?? true } });
  await seedMembership(server, { organizationId: orgId, userId: user.userId });
  if (opts.sso ?? true) {
    const now = new Date().toISOString();
    await saveSsoConfig(db(), {
      organizationId: orgId,
      enabled: true,
      data: { configType: 1, memberDecryptionType: decryption, authority: 'https://idp.example.com', clientId: 'strongroom', clientSecret: 'sealed' },
      creationDate: now,
      revisionDate: now,
    });
  }
  await db().updateTable('users').set({ master_password_hash: null, key: null }).where('id', '=', user.userId).execute();
  return { user, orgId };
}

function newPassword(user: LoggedInUser, password: string) {
  const salt = user.account.email.toLowerCase();
  const masterKey = deriveMasterKey(password, salt, ITERATIONS);
  const hash = masterPasswordHash(masterKey, password);
  const kdf = { kdfType: 0, iterations: ITERATIONS, memory: null, parallelism: null };
  const wrapped = encryptToEncString(user.account.userKey.raw, stretchMasterKey(masterKey));
  return { masterKey, hash, body: { authenticationData: { salt, kdf, masterPasswordAuthenticationHash: hash }, unlockData: { salt, kdf, masterKeyWrappedUserKey: wrapped }, masterPasswordHint: 'the usual' } };
}

const offboard = (user: LoggedInUser, json: unknown) => server.request('PUT', '/api/accounts/update-tde-offboarding-password', { token: user.accessToken, json });
const userRow = (id: string) => db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('PUT /api/accounts/update-tde-offboarding-password', () => {
  it('sets the first master password, which then logs in and unwraps the user key, and records the event', async () => {
    const { user } = await memberWithoutPassword(MemberDecryptionType.MasterPassword);
    const next = newPassword(user, 'a password at last');
    const res = await offboard(user, next.body);
    expect(res.status, res.text).toBe(200);
    const login = await server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account), password: next.hash } });
    expect(login.status, login.text).toBe(200);
    expect(login.body.UserDecryptionOptions.HasMasterPassword).toBe(true);
    expect(decryptEncString(login.body.Key, stretchMasterKey(next.masterKey)).equals(user.account.userKey.raw)).toBe(true);
    expect((await userRow(user.userId)).master_password_hint).toBe('the usual');
    const events = await db().selectFrom('events').select('type').where('user_id', '=', user.userId).where('type', '=', EventType.User_TdeOffboardingPasswordSet).execute();
    expect(events).toHaveLength(1);
    // The old sessions ended with the new password.
    expect((await server.request('GET', '/api/sync', { token: user.accessToken })).status).toBe(401);
  });

  it('refuses while the organization still unlocks with trusted devices, and changes nothing', async () => {
    const { user } = await memberWithoutPassword(MemberDecryptionType.TrustedDeviceEncryption);
    const res = await offboard(user, newPassword(user, 'too early').body);
    expect(res.status).toBe(400);
    expect(res.text).toContain(OFFBOARDING_REFUSALS.stillTde);
    expect((await userRow(user.userId)).master_password_hash).toBeNull();
  });

  it('refuses an account with a master password, one in no SSO organization, and one without SSO settings', async () => {
    const withPassword = await seedAccount(server);
    expect((await offboard(withPassword, newPassword(withPassword, 'x').body)).text).toContain(OFFBOARDING_REFUSALS.hasPassword);
    const noSso = await memberWithoutPassword(MemberDecryptionType.MasterPassword, { useSso: false });
    expect((await offboard(noSso.user, newPassword(noSso.user, 'x').body)).text).toContain(OFFBOARDING_REFUSALS.noSsoOrganization);
    const noConfig = await memberWithoutPassword(MemberDecryptionType.MasterPassword, { sso: false });
    expect((await offboard(noConfig.user, newPassword(noConfig.user, 'x').body)).text).toContain(OFFBOARDING_REFUSALS.noConfig);
  });

  it('refuses a body with no complete password, or a salt that is not the account email, naming the field, and changes nothing', async () => {
    const { user } = await memberWithoutPassword(MemberDecryptionType.MasterPassword);
    const empty = await offboard(user, { masterPasswordHint: 'only a hint' });
    expect(empty.status).toBe(400);
    expect(Object.keys(empty.body.validationErrors)).toEqual(['authenticationData', 'unlockData', 'newMasterPasswordHash', 'key']);
    const next = newPassword(user, 'x');
    const salted = await offboard(user, { ...next.body, authenticationData: { ...next.body.authenticationData, salt: 'other@example.com' }, unlockData: { ...next.body.unlockData, salt: 'other@example.com' } });
    expect(salted.status).toBe(400);
    expect(Object.keys(salted.body.validationErrors)).toEqual(['unlockData.salt']);
    expect((await userRow(user.userId)).master_password_hash).toBeNull();
  });
});
