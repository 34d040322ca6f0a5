import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Each test registers several accounts (slow key derivation); a busy CI machine needs the room.
vi.setConfig({ testTimeout: 120_000 });
import { seedAccount, loginAccount, testAccount } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import { registerFinishBody, rsaDecryptEncString, rsaEncryptToEncString } from '../../../test/support/bw-crypto.js';
import { testClock } from '../../../test/support/clock.js';
import { dataOf, memberEventTypes, memberOf, memberRow, orgWithOwner, seedPolicy } from '../../../test/support/members.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { freshDatabaseUrl, startTestServer, TEST_ENGINE, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PolicyType } from '../policies/policy-type.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';

// One mail sink and one server mailing to it for the file: each test makes its own organizations
// and accounts, and mails only fresh addresses, so it reads only its own mail, rows and events.
// Tests that need a clock, a database or a mail server of their own start their own server.
let sink: SmtpSink;
let server: TestServer;
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ env: sink.env });
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const users = (orgId: string) => `/api/organizations/${orgId}/users`;

async function inviteAndReceive(s: TestServer, token: string, orgId: string, email: string, type = Role.User) {
  const res = await s.request('POST', `${users(orgId)}/invite`, { token, json: { emails: [email], type, collections: [] } });
  expect(res.status, res.text).toBe(200);
  return invitationFrom(await sink.waitFor(email));
}

describe('invitation by email', () => {
  it('mails a link whose token lets the invitee accept, then the owner confirms with the org key (the bw confirm flow)', async () => {
    const s = server;
    const email = freshEmail('invitee');
    const { orgId, owner } = await orgWithOwner(s, { name: 'Acme & Co' });
    const invitation = await inviteAndReceive(s, owner.accessToken, orgId, email.replace('invitee', 'Invitee').replace('example', 'Example'));
    const mail = sink.messages.find((m) => m.to.includes(email));
    expect(mail?.to).toEqual([email]);
    expect(mail?.text).toContain('Subject: Join Acme & Co');
    expect(invitation).toMatchObject({ organizationId: orgId, email });

    const invitee = await seedAccount(s, { email });
    const accept = await s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/accept`, { token: invitee.accessToken, json: { token: invitation.token } });
    expect(accept.status, accept.text).toBe(200);
    expect(await memberRow(s, invitation.organizationUserId)).toMatchObject({ status: Status.Accepted, user_id: invitee.userId, email: null });
    // Accepted is not yet access.
    expect((await s.request('GET', `${users(orgId)}/mini-details`, { token: invitee.accessToken })).status).toBe(404);

    // What `bw confirm org-member` does: read the member, fetch its public key, post the wrapped org key.
    const member = await s.request('GET', `${users(orgId)}/${invitation.organizationUserId}`, { token: owner.accessToken });
    expect(member.body).toMatchObject({ status: Status.Accepted, userId: invitee.userId });
    const publicKey = await s.request('GET', `/api/users/${member.body.userId}/public-key`, { token: owner.accessToken });
    const orgKey = randomBytes(64);
    const key = rsaEncryptToEncString(orgKey, publicKey.body.publicKey);
    const confirm = await s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/confirm`, {
      token: owner.accessToken,
      json: { key, defaultUserCollectionName: '2.aQ==|aQ==|aQ==' },
    });
    expect(confirm.status, confirm.text).toBe(200);
    const row = await memberRow(s, invitation.organizationUserId);
    expect(row?.status).toBe(Status.Confirmed);
    expect(rsaDecryptEncString(row?.key ?? '', invitee.account.privateKeyDer).equals(orgKey)).toBe(true);
    expect((await s.request('GET', `${users(orgId)}/mini-details`, { token: invitee.accessToken })).status).toBe(200);
    const listed = await s.request('GET', users(orgId), { token: owner.accessToken });
    expect(dataOf(listed.body).find((m) => m.id === invitation.organizationUserId)).toMatchObject({ email, name: email.split('@')[0], status: 2 });
    expect(await memberEventTypes(s, [orgId])).toEqual([EventType.OrganizationUser_Invited, EventType.OrganizationUser_Confirmed]);
  });

  it('refuses a token for someone else, a forged or expired token, and a second accept', async () => {
    // A clock of its own, moved past the invitations' lifetime.
    const clock = testClock();
    const s = await startTestServer({ env: sink.env, clock });
    try {
      const { orgId, owner } = await orgWithOwner(s);
      const right = freshEmail('right');
      const invitation = await inviteAndReceive(s, owner.accessToken, orgId, right);
      const other = await inviteAndReceive(s, owner.accessToken, orgId, freshEmail('other'));
      const accept = (token: string, memberId: string, inviteToken: string) =>
        s.request('POST', `${users(orgId)}/${memberId}/accept`, { token, json: { token: inviteToken } });

      const intruder = await seedAccount(s, { email: freshEmail('intruder') });
      const stolen = await accept(intruder.accessToken, invitation.organizationUserId, invitation.token);
      expect(stolen.status).toBe(400);
      expect(stolen.body.message).toBe('User email does not match invite.');

      const invitee = await seedAccount(s, { email: right });
      expect((await accept(invitee.accessToken, invitation.organizationUserId, 'forged.token.value')).body.message).toBe('Invalid token.');
      // A token for another membership of the same organization does not open this one.
      expect((await accept(invitee.accessToken, invitation.organizationUserId, other.token)).body.message).toBe('Invalid token.');
      expect((await s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/accept`, { token: invitee.accessToken, json: {} })).body.validationErrors).toHaveProperty('token');
      // The right token on a membership that does not exist.
      expect((await accept(invitee.accessToken, randomUUID(), invitation.token)).status).toBe(404);

      clock.advance(5 * 24 * 3600 * 1000 + 60_000);
      // Access tokens expired with the clock too; log in again.
      const again = await createUserLogin(s, right);
      const ownerAgain = await createUserLogin(s, owner.account.email);
      expect((await accept(again, invitation.organizationUserId, invitation.token)).body.message).toBe('Invalid token.');
      expect((await memberRow(s, invitation.organizationUserId))?.status).toBe(Status.Invited);

      // A reinvite mails a fresh token.
      expect((await s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/reinvite`, { token: ownerAgain })).status).toBe(200);
      const fresh = invitationFrom(await sink.waitFor(right));
      expect(fresh.token).not.toBe(invitation.token);
      expect((await accept(again, invitation.organizationUserId, fresh.token)).status).toBe(200);
      const twice = await accept(again, invitation.organizationUserId, fresh.token);
      expect(twice.body.message).toBe('Invitation already accepted. You will receive an email when your organization membership is confirmed.');
    } finally {
      await s.close();
    }
  });

  it('enrols the member in account recovery on accept when the organization\'s policy says so', async () => {
    const s = server;
    const { orgId, owner } = await orgWithOwner(s, { planType: PlanType.EnterpriseAnnually });
    await seedPolicy(s, orgId, PolicyType.ResetPassword);
    const policy = () => s.database.db.updateTable('policies').where('organization_id', '=', orgId).where('type', '=', PolicyType.ResetPassword);
    await policy().set({ data: JSON.stringify({ autoEnrollEnabled: true }) }).execute();
    const recovered = freshEmail('recovered');
    const recoveryKey = rsaEncryptToEncString(randomBytes(64), testAccount(recovered).publicKeyB64);
    const invitation = await inviteAndReceive(s, owner.accessToken, orgId, recovered);
    const user = await seedAccount(s, { email: recovered });
    const accept = (json: Record<string, unknown>) => s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/accept`, { token: user.accessToken, json: { token: invitation.token, ...json } });

    const missing = await accept({});
    expect(missing.status).toBe(400);
    expect(missing.body.validationErrors.resetPasswordKey).toEqual(['Master Password reset is required, but not provided.']);
    expect((await accept({ resetPasswordKey: 'not an encrypted key' })).body.validationErrors).toHaveProperty('resetPasswordKey');
    expect((await memberRow(s, invitation.organizationUserId))?.status).toBe(Status.Invited);

    expect((await accept({ resetPasswordKey: recoveryKey })).status).toBe(200);
    const row = await memberRow(s, invitation.organizationUserId);
    expect(row).toMatchObject({ status: Status.Accepted, reset_password_key: recoveryKey });
    expect(await memberEventTypes(s, [orgId])).toEqual([EventType.OrganizationUser_Invited, EventType.OrganizationUser_ResetPassword_Enroll]);
    const listed = await s.request('GET', users(orgId), { token: owner.accessToken });
    expect(dataOf(listed.body).find((m) => m.id === invitation.organizationUserId)).toMatchObject({ resetPasswordEnrolled: true });

    // Without automatic enrolment a key sent along is not kept.
    await policy().set({ data: JSON.stringify({ autoEnrollEnabled: false }) }).execute();
    const keptOut = freshEmail('kept-out');
    const second = await inviteAndReceive(s, owner.accessToken, orgId, keptOut);
    const other = await seedAccount(s, { email: keptOut });
    const plain = await s.request('POST', `${users(orgId)}/${second.organizationUserId}/accept`, { token: other.accessToken, json: { token: second.token, resetPasswordKey: recoveryKey } });
    expect(plain.status, plain.text).toBe(200);
    expect((await memberRow(s, second.organizationUserId))?.reset_password_key).toBeNull();
  });

  it('is the only way in while registration is closed', async () => {
    // A database of its own, served first with registration open, then closed.
    const shared = TEST_ENGINE === 'postgres' ? await freshDatabaseUrl() : sqliteFile();
    let closed: TestServer | undefined;
    try {
      const open = await startTestServer({ databaseUrl: shared.url, env: sink.env });
      const { orgId, owner } = await orgWithOwner(open);
      await open.close();

      closed = await startTestServer({ databaseUrl: shared.url, env: { ...sink.env, REGISTRATION_ENABLED: 'false' } });
      const s = closed;
      const welcome = freshEmail('welcome');
      const invitation = await inviteAndReceive(s, owner.accessToken, orgId, welcome);
      const stranger = await s.request('POST', '/identity/accounts/register/finish', { json: registerFinishBody(testAccount('stranger@example.com')) });
      expect(stranger.status).toBe(400);
      expect(stranger.body.message).toBe('Open registration has been disabled by the system administrator.');
      // The address alone does not open registration, nor does another membership's token: anyone
      // could otherwise take an invitee's address first. send-verification-email tells no one
      // whether an address is invited.
      const squatter = await s.request('POST', '/identity/accounts/register/finish', { json: registerFinishBody(testAccount(welcome)) });
      expect(squatter.status).toBe(400);
      const wrongMembership = await s.request('POST', '/identity/accounts/register/finish', {
        json: registerFinishBody(testAccount(welcome), { orgInviteToken: invitation.token, organizationUserId: randomUUID() }),
      });
      expect(wrongMembership.status).toBe(400);
      const verification = await s.request('POST', '/identity/accounts/register/send-verification-email', { json: { email: welcome } });
      expect(verification.status).toBe(400);
      expect(verification.body.message).toBe('Open registration has been disabled by the system administrator.');

      const registered = await s.request('POST', '/identity/accounts/register/finish', {
        json: registerFinishBody(testAccount(welcome), { orgInviteToken: invitation.token, organizationUserId: invitation.organizationUserId }),
      });
      expect(registered.status, registered.text).toBe(200);
      const invitee = await createUserLogin(s, welcome);
      expect((await s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/accept`, { token: invitee, json: { token: invitation.token } })).status).toBe(200);
    } finally {
      await closed?.close();
      await shared.drop();
    }
  });

  it('answers 502 when the mail server is unreachable, keeping the invitation for a later reinvite', async () => {
    // A mail server of its own, closed before the server starts.
    const gone = await startSmtpSink();
    await gone.close();
    const s = await startTestServer({ env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(gone.port) } });
    try {
      const { orgId, owner } = await orgWithOwner(s);
      const res = await s.request('POST', `${users(orgId)}/invite`, { token: owner.accessToken, json: { emails: ['lost@example.com'], type: Role.User } });
      expect(res.status).toBe(502);
      expect((await s.database.db.selectFrom('organization_users').select('email').where('status', '=', Status.Invited).execute()).map((r) => r.email)).toEqual(['lost@example.com']);
    } finally {
      await s.close();
    }
  });
});

describe('policies at accept and confirm', () => {
  it('keeps a member of another organization out of a single-organization one, and vice versa', async () => {
    const s = server;
    const strict = await orgWithOwner(s);
    await seedPolicy(s, strict.orgId, PolicyType.SingleOrg);
    const other = await orgWithOwner(s);
    const joiner = freshEmail('joiner');
    const user = await seedAccount(s, { email: joiner });
    await seedMembership(s, { organizationId: other.orgId, userId: user.userId });

    const invitation = await inviteAndReceive(s, strict.owner.accessToken, strict.orgId, joiner);
    const accept = await s.request('POST', `${users(strict.orgId)}/${invitation.organizationUserId}/accept`, { token: user.accessToken, json: { token: invitation.token } });
    expect(accept.status).toBe(400);
    expect(accept.body.message).toBe('You may not join this organization until you leave or remove all other organizations.');

    // Joined elsewhere after accepting: confirmation is refused instead.
    await s.database.db.deleteFrom('organization_users').where('organization_id', '=', other.orgId).where('user_id', '=', user.userId).execute();
    expect((await s.request('POST', `${users(strict.orgId)}/${invitation.organizationUserId}/accept`, { token: user.accessToken, json: { token: invitation.token } })).status).toBe(200);
    await seedMembership(s, { organizationId: other.orgId, userId: user.userId });
    const confirm = await s.request('POST', `${users(strict.orgId)}/${invitation.organizationUserId}/confirm`, { token: strict.owner.accessToken, json: { key: '4.a2V5' } });
    expect(confirm.status).toBe(400);
    expect(confirm.body.message).toBe('User is a member of another organization.');

    // Vice versa: a confirmed member of the strict organization cannot join another one.
    const strictEmail = freshEmail('strict');
    const strictMember = await memberOf(s, strict.orgId, { email: strictEmail });
    const elsewhere = await inviteAndReceive(s, other.owner.accessToken, other.orgId, strictEmail);
    const blocked = await s.request('POST', `${users(other.orgId)}/${elsewhere.organizationUserId}/accept`, { token: strictMember.accessToken, json: { token: elsewhere.token } });
    expect(blocked.body.message).toBe('You cannot join this organization because you are a member of an organization which forbids it.');
    expect(await memberEventTypes(s, [strict.orgId, other.orgId])).toEqual([EventType.OrganizationUser_Invited, EventType.OrganizationUser_Invited]);

    // The policy binds only members with access, in an organization that is enabled and uses policies.
    const invited = await s.database.db.selectFrom('organization_users').selectAll().where('id', '=', elsewhere.organizationUserId).executeTakeFirstOrThrow();
    const acceptOnce = async () => {
      const res = await s.request('POST', `${users(other.orgId)}/${elsewhere.organizationUserId}/accept`, { token: strictMember.accessToken, json: { token: elsewhere.token } });
      // Back to invited, for the next case.
      await s.database.db.updateTable('organization_users').set({ status: invited.status, user_id: invited.user_id, email: invited.email }).where('id', '=', invited.id).execute();
      return res;
    };
    const strictOrg = () => s.database.db.updateTable('organizations').where('id', '=', strict.orgId);
    await strictOrg().set({ enabled: false }).execute();
    expect((await acceptOnce()).status).toBe(200);
    await strictOrg().set({ enabled: true, use_policies: false }).execute();
    expect((await acceptOnce()).status).toBe(200);
    await strictOrg().set({ use_policies: true }).execute();
    expect((await acceptOnce()).status).toBe(400);
    await s.database.db.updateTable('organization_users').set({ status: Status.Revoked }).where('id', '=', strictMember.memberId).execute();
    expect((await acceptOnce()).status).toBe(200);
  });

  it('refuses members without two-step login while it is required; owners and admins are exempt', async () => {
    const s = server;
    const { orgId, owner } = await orgWithOwner(s);
    await seedPolicy(s, orgId, PolicyType.TwoFactorAuthentication);
    const plain = freshEmail('plain');
    const user = await seedAccount(s, { email: plain });
    const invitation = await inviteAndReceive(s, owner.accessToken, orgId, plain);
    const accept = await s.request('POST', `${users(orgId)}/${invitation.organizationUserId}/accept`, { token: user.accessToken, json: { token: invitation.token } });
    expect(accept.body.message).toBe('You cannot join this organization until you enable two-step login on your user account.');

    const accepted = await memberOf(s, orgId, { status: Status.Accepted });
    const confirm = await s.request('POST', `${users(orgId)}/${accepted.memberId}/confirm`, { token: owner.accessToken, json: { key: '4.a2V5' } });
    expect(confirm.body.message).toBe('User does not have two-step login enabled.');

    const adminEmail = freshEmail('admin');
    const admin = await seedAccount(s, { email: adminEmail });
    const adminInvite = await inviteAndReceive(s, owner.accessToken, orgId, adminEmail, Role.Admin);
    expect((await s.request('POST', `${users(orgId)}/${adminInvite.organizationUserId}/accept`, { token: admin.accessToken, json: { token: adminInvite.token } })).status).toBe(200);
    expect((await s.request('POST', `${users(orgId)}/${adminInvite.organizationUserId}/confirm`, { token: owner.accessToken, json: { key: '4.a2V5' } })).status).toBe(200);
  });
});

function sqliteFile() {
  const path = join(tmpdir(), `strongroom-members-${randomBytes(6).toString('hex')}.sqlite`);
  return {
    url: `sqlite:${path}`,
    drop: async () => {
      for (const suffix of ['', '-wal', '-shm']) await rm(`${path}${suffix}`, { force: true });
    },
  };
}

/** Logs an already registered test account in again and returns the access token. */
async function createUserLogin(s: TestServer, email: string): Promise<string> {
  return (await loginAccount(s, testAccount(email))).accessToken;
}
