import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, registerAccount, testAccount } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { systemClock } from '../../shared/clock.js';
import { createFeatures } from '../../wiring.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PushType } from '../../platform/push/pushes.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

/**
 * The account rules the operator command relies on, through the services and the real HTTP
 * routes: disabled accounts, deletion of an organization's only owner, operator invitations.
 * One server for the file: each test makes its own accounts (fresh emails) and reads back only
 * those.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

/** The services as the operator command builds them, over the server's database. */
function servicesOf(s: TestServer, overrides: Partial<TestServer['config']> = {}) {
  return createFeatures({ config: { ...s.config, ...overrides }, database: s.database, clock: systemClock });
}

const token = (s: TestServer, form: Record<string, string>) => s.request('POST', '/identity/connect/token', { form });

describe('a disabled account', () => {
  it('cannot log in, and every session it had ends at once', async () => {
    const s = server;
    const email = freshEmail('dis');
    const user = await createUser(s, { email });
    const apiKey = (await s.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } }))
      .body.apiKey as string;
    const pushes = recordingPushes();
    const { accounts } = await createFeatures({ config: s.config, database: s.database, clock: systemClock, pushes });

    expect(await accounts.setDisabled(user.userId, true)).toBe(true);
    expect(await accounts.setDisabled(user.userId, true)).toBe(false);
    // Its open apps are told to log out, once.
    expect(pushes.of(PushType.LogOut).map((p) => p.target)).toEqual([{ user: user.userId }]);

    const login = await token(s, {
      grant_type: 'password',
      username: email,
      password: user.account.masterPasswordHash,
      scope: 'api offline_access',
      client_id: 'cli',
      deviceType: '25',
      deviceIdentifier: 'a7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a',
      deviceName: 'linux',
    });
    expect(login.status).toBe(400);
    expect(login.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'This account has been disabled. Contact your administrator.',
      ErrorModel: { Message: 'This account has been disabled. Contact your administrator.' },
    });
    const failed = await s.database.db.selectFrom('events').select('type').where('user_id', '=', user.userId).where('type', '=', EventType.User_FailedLogIn).execute();
    expect(failed).toHaveLength(1);

    expect((await s.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    const refresh = await token(s, { grant_type: 'refresh_token', client_id: 'cli', refresh_token: user.refreshToken });
    expect(refresh.status).toBe(400);
    const viaApiKey = await token(s, {
      grant_type: 'client_credentials',
      client_id: `user.${user.userId}`,
      client_secret: apiKey,
      scope: 'api',
      deviceType: '25',
      deviceIdentifier: 'a7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a',
      deviceName: 'linux',
    });
    expect(viaApiKey.status).toBe(400);
    expect(viaApiKey.body.error_description).toBe('This account has been disabled. Contact your administrator.');

    expect(await accounts.setDisabled(user.userId, false)).toBe(true);
    const again = await loginAccount(s, user.account);
    expect((await s.request('GET', '/api/accounts/profile', { token: again.accessToken })).status).toBe(200);
  });

  it('answers a wrong password as for any account, so only its owner learns it is disabled', async () => {
    const s = server;
    const email = freshEmail('quiet');
    const user = await createUser(s, { email });
    await (await servicesOf(s)).accounts.setDisabled(user.userId, true);
    const res = await token(s, {
      grant_type: 'password',
      username: email,
      password: testAccount(email, 'not the password').masterPasswordHash,
      scope: 'api',
      client_id: 'cli',
      deviceType: '25',
      deviceIdentifier: 'a7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a',
      deviceName: 'linux',
    });
    expect(res.status).toBe(400);
    expect(res.body.ErrorModel.Message).toBe('Username or password is incorrect. Try again.');
  });
});

describe('deleting an account', () => {
  const SOLE_OWNER = 'Cannot delete this user because it is the sole owner of at least one organization. Please delete these organizations or upgrade another user.';

  it('is refused while it is the only confirmed owner of an organization, from the API as from the operator', async () => {
    const s = server;
    const owner = await createUser(s, { email: freshEmail('owner') });
    const orgId = await seedOrganization(s);
    await seedMembership(s, { organizationId: orgId, userId: owner.userId, type: OrganizationUserType.Owner });
    // Another owner who has not been confirmed does not count.
    const pending = await createUser(s, { email: freshEmail('pending') });
    await seedMembership(s, { organizationId: orgId, userId: pending.userId, type: OrganizationUserType.Owner, status: 1 });

    const res = await s.request('DELETE', '/api/accounts', { token: owner.accessToken, json: { masterPasswordHash: owner.account.masterPasswordHash } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(SOLE_OWNER);
    await expect((await servicesOf(s)).accounts.removeAccount(owner.userId)).rejects.toThrow(SOLE_OWNER);
    expect(await s.database.db.selectFrom('users').select('id').where('id', '=', owner.userId).executeTakeFirst()).toBeDefined();
    expect(await s.database.db.selectFrom('events').select('type').where('user_id', '=', owner.userId).where('type', '=', EventType.User_Deleted).execute()).toEqual([]);
  });

  it('goes ahead when another confirmed owner remains, taking the memberships along', async () => {
    const s = server;
    const owner = await createUser(s, { email: freshEmail('first') });
    const other = await createUser(s, { email: freshEmail('second') });
    const orgId = await seedOrganization(s);
    await seedMembership(s, { organizationId: orgId, userId: owner.userId, type: OrganizationUserType.Owner });
    await seedMembership(s, { organizationId: orgId, userId: other.userId, type: OrganizationUserType.Owner });

    await (await servicesOf(s)).accounts.removeAccount(owner.userId);
    expect(await s.database.db.selectFrom('users').select('id').where('id', '=', owner.userId).executeTakeFirst()).toBeUndefined();
    expect(await s.database.db.selectFrom('organization_users').select('user_id').where('organization_id', '=', orgId).execute()).toEqual([{ user_id: other.userId }]);
    expect((await s.request('GET', '/api/accounts/profile', { token: owner.accessToken })).status).toBe(401);
    // The operator's deletion is recorded too, naming no acting user.
    const events = await s.database.db.selectFrom('events').select(['type', 'acting_user_id']).where('user_id', '=', owner.userId).where('type', '=', EventType.User_Deleted).execute();
    expect(events).toEqual([{ type: EventType.User_Deleted, acting_user_id: null }]);
  });
});

describe('operator invitations', () => {
  // Closed registration is a configuration of its own, which only the first test needs.
  let closed: TestServer;
  beforeAll(async () => {
    closed = await startTestServer({ env: { REGISTRATION_ENABLED: 'false' } });
  });
  afterAll(async () => closed.close());

  it('let the invited email register while registration is closed; a public verification token does not', async () => {
    const s = closed;
    const invitation = await (await servicesOf(s)).accounts.operatorInvitationToken('Guest@Example.com');
    // Issued while registration was open, by the same key: it verifies the email and nothing more.
    const publicToken = await (await servicesOf(s, { registrationEnabled: true })).accounts.verificationToken('walkin@example.com', null);

    const walkIn = await s.request('POST', '/identity/accounts/register/finish', {
      json: registerFinishBody(testAccount('walkin@example.com'), { emailVerificationToken: publicToken }),
    });
    expect(walkIn.status).toBe(400);
    expect(walkIn.body.message).toBe('Open registration has been disabled by the system administrator.');

    const elsewhere = await s.request('POST', '/identity/accounts/register/finish', {
      json: registerFinishBody(testAccount('someone-else@example.com'), { emailVerificationToken: invitation }),
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.validationErrors).toHaveProperty('emailVerificationToken');

    const guest = await s.request('POST', '/identity/accounts/register/finish', {
      json: registerFinishBody(testAccount('guest@example.com'), { emailVerificationToken: invitation }),
    });
    expect(guest.status, guest.text).toBe(200);
    expect(await s.database.db.selectFrom('users').select('email').execute()).toEqual([{ email: 'guest@example.com' }]);
  });

  it('are refused for an email that has an account', async () => {
    const email = freshEmail('taken');
    await registerAccount(server, { email });
    await expect((await servicesOf(server)).accounts.operatorInvitationToken(` ${email.replace('taken', 'TAKEN')}`)).rejects.toMatchObject({
      validationErrors: { email: [`Email '${email}' is already taken.`] },
    });
  });
});
