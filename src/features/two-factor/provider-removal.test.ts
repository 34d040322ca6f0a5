import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { memberOf, memberRow, orgWithOwner, seedPolicy } from '../../../test/support/members.js';
import { SoftAuthenticator } from '../../../test/support/soft-authenticator.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';
import { TwoFactorProviderType as Provider } from './two-factor-rules.js';
import { upsertProvider } from './two-factor.repository.js';

/** The per-provider removal routes current clients call: DELETE /two-factor/duo, /yubikey and /webauthn/all. */
const ORIGIN = 'https://vault.example.com';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { PUBLIC_URL: ORIGIN } });
});
afterAll(async () => server?.close());

const api = (user: LoggedInUser, method: string, path: string, json: unknown) => server.request(method, `/api${path}`, { token: user.accessToken, json });
const secretOf = (user: LoggedInUser) => ({ masterPasswordHash: user.account.masterPasswordHash });
const typesOf = async (user: LoggedInUser) =>
  (await server.database.db.selectFrom('two_factor_providers').select('type').where('user_id', '=', user.userId).orderBy('type').execute()).map((r) => r.type);
const disabledEvents = async (user: LoggedInUser) =>
  server.database.db.selectFrom('events').select('type').where('user_id', '=', user.userId).where('type', '=', EventType.User_Disabled2fa).execute();

/** Registers a security key in slot `id` through the official routes. */
async function registerKey(user: LoggedInUser, id: number): Promise<void> {
  const read = await api(user, 'POST', '/two-factor/get-webauthn', secretOf(user));
  const started = await api(user, 'POST', '/two-factor/get-webauthn-challenge', { userVerificationToken: read.body.userVerificationToken });
  expect(started.status, started.text).toBe(200);
  const put = await api(user, 'PUT', '/two-factor/webauthn', { ...secretOf(user), id, name: `Key ${id}`, deviceResponse: new SoftAuthenticator(ORIGIN).register(started.body.options) });
  expect(put.status, put.text).toBe(200);
}

describe('DELETE /two-factor/webauthn/all', () => {
  it('removes every security key with the token get-webauthn answered, and records it once', async () => {
    const user = await createUser(server);
    await registerKey(user, 1);
    await registerKey(user, 2);
    expect(await typesOf(user)).toEqual([Provider.WebAuthn]);

    const read = await api(user, 'POST', '/two-factor/get-webauthn', secretOf(user));
    const res = await api(user, 'DELETE', '/two-factor/webauthn/all', { userVerificationToken: read.body.userVerificationToken });
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expect(await typesOf(user)).toEqual([]);
    expect(await disabledEvents(user)).toHaveLength(1);
    const listed = await api(user, 'POST', '/two-factor/get-webauthn', secretOf(user));
    expect(listed.body.webAuthn).toEqual({ enabled: false, keys: [] });
  });

  it("refuses another provider's token or a wrong password, removing nothing", async () => {
    const user = await createUser(server);
    await registerKey(user, 1);
    const email = await api(user, 'POST', '/two-factor/get-email', secretOf(user));
    for (const body of [{ userVerificationToken: email.body.userVerificationToken }, { masterPasswordHash: 'd3Jvbmc=' }, {}]) {
      const res = await api(user, 'DELETE', '/two-factor/webauthn/all', body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('User verification failed.');
    }
    expect(await typesOf(user)).toEqual([Provider.WebAuthn]);
    expect(await disabledEvents(user)).toEqual([]);
  });
});

describe('DELETE /two-factor/duo and /two-factor/yubikey', () => {
  it('turn off the provider an account has, leave the others, and the last one gone revokes under the Two-step login policy', async () => {
    const { orgId } = await orgWithOwner(server);
    await seedPolicy(server, orgId, PolicyType.TwoFactorAuthentication);
    const member = await memberOf(server, orgId);
    // Neither is set up by this server; an account restored from elsewhere may have them.
    const now = new Date().toISOString();
    await upsertProvider(server.database.db, member.userId, Provider.Duo, { host: 'api-x.duosecurity.com' }, now);
    await upsertProvider(server.database.db, member.userId, Provider.YubiKey, { Key1: 'cccccc' }, now);

    const duo = await api(member, 'DELETE', '/two-factor/duo', secretOf(member));
    expect(duo.status, duo.text).toBe(204);
    expect(await typesOf(member)).toEqual([Provider.YubiKey]);
    expect((await memberRow(server, member.memberId))?.status).toBe(Status.Confirmed);

    const yubikey = await api(member, 'DELETE', '/two-factor/yubikey', secretOf(member));
    expect(yubikey.status, yubikey.text).toBe(204);
    expect(await typesOf(member)).toEqual([]);
    expect(await disabledEvents(member)).toHaveLength(2);
    expect((await memberRow(server, member.memberId))?.status).toBe(Status.Revoked);
  });

  it('changes nothing for a provider the account does not have', async () => {
    const user = await createUser(server);
    const res = await api(user, 'DELETE', '/two-factor/yubikey', secretOf(user));
    expect(res.status).toBe(204);
    expect(await disabledEvents(user)).toEqual([]);
  });

  it('answers 401 without a signed-in user', async () => {
    expect((await server.request('DELETE', '/api/two-factor/duo', { json: {} })).status).toBe(401);
  });
});
