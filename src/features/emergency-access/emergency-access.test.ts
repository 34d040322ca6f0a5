import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, passwordGrantForm, seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { eventsOf } from '../../../test/support/admin.js';
import {
  decryptEncString,
  decryptText,
  deriveMasterKey,
  encryptToEncString,
  masterPasswordHash,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  stretchMasterKey,
  symmetricKeyFrom,
} from '../../../test/support/bw-crypto.js';
import { testClock } from '../../../test/support/clock.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PushType } from '../../platform/push/pushes.js';
import { PolicyType } from '../policies/policy-type.js';

/** Emergency access over HTTP, with the clients' cryptography: invite to view or takeover, and every refusal. */
const DAY = 86_400_000;
const clock = testClock();
const pushes = recordingPushes();
let server: TestServer;
let sink: SmtpSink;
let alice: LoggedInUser;
let bob: LoggedInUser;
let carol: LoggedInUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ clock, env: sink.env, pushes });
  alice = await seedAccount(server, { email: 'ea-alice@example.com', name: 'Alice' });
  bob = await seedAccount(server, { email: 'ea-bob@example.com', name: 'Bob' });
  carol = await seedAccount(server, { email: 'ea-carol@example.com', name: 'Carol' });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const ea = (who: LoggedInUser, method: string, path: string, json?: unknown) =>
  server.request(method, `/api/emergency-access${path}`, { token: who.accessToken, ...(json === undefined ? {} : { json }) });

/** The link of the newest invitation mailed to `to`: the grant's id and token, as the web vault reads them. */
async function invitationTo(to: string): Promise<{ id: string; token: string; link: URL }> {
  const mail = await sink.waitFor(to);
  const href = /https?:\/\/\S+#\/accept-emergency\?\S+/.exec(mail.text)?.[0];
  expect(href, mail.text).toBeDefined();
  const link = new URL(href!);
  const query = new URLSearchParams(link.hash.split('?')[1]);
  return { id: query.get('id')!, token: query.get('token')!, link };
}

/** Invite, accept and confirm: a grant of `type` from `grantor` to `grantee`, confirmed with the grantor's user key wrapped for the grantee. */
async function confirmedGrant(grantor: LoggedInUser, grantee: LoggedInUser, type: 0 | 1, waitTimeDays = 7): Promise<string> {
  const invited = await ea(grantor, 'POST', '/invite', { email: grantee.account.email.toUpperCase(), type, waitTimeDays });
  expect(invited.status, invited.text).toBe(200);
  const { id, token } = await invitationTo(grantee.account.email);
  const accepted = await ea(grantee, 'POST', `/${id}/accept`, { token });
  expect(accepted.status, accepted.text).toBe(200);
  await sink.waitFor(grantor.account.email);
  const key = rsaEncryptToEncString(grantor.account.userKey.raw, grantee.account.publicKeyB64);
  const confirmed = await ea(grantor, 'POST', `/${id}/confirm`, { key });
  expect(confirmed.status, confirmed.text).toBe(200);
  await sink.waitFor(grantee.account.email);
  return id;
}

/** Moves the clock; access tokens follow the server's clock, so the named users log in again. */
async function advance(ms: number, ...users: LoggedInUser[]): Promise<void> {
  clock.advance(ms);
  for (const user of users) user.accessToken = (await loginAccount(server, user.account)).accessToken;
}

/** A value of a secret field no log line may carry (the log audit looks for what the test sent). */
const secret = () => `secret-${randomUUID()}`;

const grantsIn = (res: { body: unknown }) => (res.body as { data: { id: string; email: string }[] }).data;

const statusOf = async (id: string) => (await server.database.db.selectFrom('emergency_access').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const eventCount = async (type: EventType) => (await eventsOf(server, type)).length;

describe('a view grant, from invitation to reading the vault', () => {
  it('invites by mail, accepts with the token, confirms with the wrapped key, and lets the grantee read the items once approved', async () => {
    const item = await server.request('POST', '/api/ciphers', { token: alice.accessToken, json: cipherBody('login', alice.account.userKey) });
    expect(item.status, item.text).toBe(200);

    const invited = await ea(alice, 'POST', '/invite', { email: bob.account.email, type: 0, waitTimeDays: 7 });
    expect(invited.status, invited.text).toBe(200);
    const { id, token, link } = await invitationTo(bob.account.email);
    expect(link.hash.startsWith('#/accept-emergency?')).toBe(true);
    const query = new URLSearchParams(link.hash.split('?')[1]);
    expect({ name: query.get('name'), email: query.get('email') }).toEqual({ name: 'Alice', email: bob.account.email });

    // Both lists carry the date of the invitation, which the 2026 clients show.
    const { creation_date: creationDate } = await server.database.db.selectFrom('emergency_access').select('creation_date').where('id', '=', id).executeTakeFirstOrThrow();
    expect(Number.isNaN(Date.parse(creationDate))).toBe(false);
    const trusted = await ea(alice, 'GET', '/trusted');
    expect(trusted.body.data).toEqual([
      { object: 'emergencyAccessGranteeDetails', id, status: 0, type: 0, waitTimeDays: 7, granteeId: null, name: null, email: bob.account.email, avatarColor: null, creationDate },
    ]);
    // Not the invitee's until accepted.
    expect((await ea(bob, 'GET', '/granted')).body.data).toEqual([]);

    expect((await ea(bob, 'POST', `/${id}/accept`, { token })).status).toBe(200);
    const acceptedMail = await sink.waitFor(alice.account.email);
    expect(acceptedMail.text).toContain('Bob has accepted');
    expect((await ea(bob, 'POST', `/${id}/accept`, { token })).body.message).toMatch(/^Invitation already accepted\. You will receive an email/);
    expect((await ea(bob, 'GET', '/granted')).body.data).toEqual([
      { object: 'emergencyAccessGrantorDetails', id, status: 1, type: 0, waitTimeDays: 7, grantorId: alice.userId, name: 'Alice', email: alice.account.email, avatarColor: null, creationDate },
    ]);
    expect((await ea(alice, 'GET', `/${id}`)).body).toMatchObject({ object: 'emergencyAccessGranteeDetails', status: 1, granteeId: bob.userId, name: 'Bob', email: bob.account.email });

    // Initiating before the grantor confirms is refused.
    expect((await ea(bob, 'POST', `/${id}/initiate`)).body.message).toBe('Emergency Access not valid.');
    const key = rsaEncryptToEncString(alice.account.userKey.raw, bob.account.publicKeyB64);
    expect((await ea(alice, 'POST', `/${id}/confirm`, { key })).status).toBe(200);
    expect((await sink.waitFor(bob.account.email)).text).toContain('Alice has confirmed you');

    expect((await ea(bob, 'POST', `/${id}/view`)).body.message).toBe('Emergency Access not valid.');
    expect((await ea(bob, 'POST', `/${id}/initiate`)).status).toBe(200);
    expect((await sink.waitFor(alice.account.email)).text).toMatch(/Bob has asked for emergency access to view your account[\s\S]*7 days/);
    expect((await ea(bob, 'POST', `/${id}/view`)).body.message).toBe('Emergency Access not valid.');
    expect((await ea(alice, 'POST', `/${id}/approve`)).status).toBe(200);
    expect((await sink.waitFor(bob.account.email)).text).toContain("access request to Alice's account has been approved");

    const view = await ea(bob, 'POST', `/${id}/view`);
    expect(view.status, view.text).toBe(200);
    expect(view.body.object).toBe('emergencyAccessView');
    const userKey = symmetricKeyFrom(rsaDecryptEncString(view.body.keyEncrypted, bob.account.privateKeyDer));
    expect(userKey.raw.equals(alice.account.userKey.raw)).toBe(true);
    expect(view.body.ciphers).toHaveLength(1);
    expect(view.body.ciphers[0]).toMatchObject({ object: 'cipher', id: item.body.id, permissions: { delete: true, restore: true } });
    // Clients 2026.7 fail on a `data` that is not a string; item answers carry none (vault/ciphers.schemas.ts).
    expect(view.body.ciphers[0]).not.toHaveProperty('data');
    expect(decryptText(view.body.ciphers[0].name, userKey)).toBe('login item');
    // A view grant does not take over.
    expect((await ea(bob, 'POST', `/${id}/takeover`)).body.message).toBe('Emergency Access not valid.');

    for (const type of [EventType.EmergencyAccess_Invited, EventType.EmergencyAccess_Accepted, EventType.EmergencyAccess_Confirmed, EventType.EmergencyAccess_RecoveryInitiated, EventType.EmergencyAccess_RecoveryApproved, EventType.EmergencyAccess_Viewed]) {
      const events = await eventsOf(server, type);
      expect(events.length, String(type)).toBeGreaterThan(0);
      expect(events.at(-1), String(type)).toMatchObject({ user_id: alice.userId });
    }
    expect((await eventsOf(server, EventType.EmergencyAccess_Viewed)).at(-1)).toMatchObject({ acting_user_id: bob.userId });

    // Either party ends it.
    expect((await ea(bob, 'DELETE', `/${id}`)).status).toBe(200);
    expect((await ea(alice, 'GET', '/trusted')).body.data).toEqual([]);
    expect(await eventCount(EventType.EmergencyAccess_Removed)).toBe(1);
  });

  it("serves the attachments of the grantor's items through a short-lived download URL", async () => {
    const dave = await seedAccount(server, { email: 'ea-dave@example.com' });
    const item = await server.request('POST', '/api/ciphers', { token: dave.accessToken, json: cipherBody('secureNote', dave.account.userKey) });
    const started = await server.request('POST', `/api/ciphers/${item.body.id}/attachment/v2`, {
      token: dave.accessToken,
      json: { key: encryptToEncString(Buffer.alloc(64, 1), dave.account.userKey), fileName: encryptToEncString('a.txt', dave.account.userKey), fileSize: 5, adminRequest: false },
    });
    expect(started.status, started.text).toBe(200);
    const form = new FormData();
    form.append('data', new Blob([Buffer.from('hello')]), 'a.txt');
    const uploaded = await fetch(`${server.baseUrl}/api/ciphers/${item.body.id}/attachment/${started.body.attachmentId}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${dave.accessToken}` } });
    expect(uploaded.status).toBe(200);

    const id = await confirmedGrant(dave, carol, 0, 1);
    const path = `/${id}/${item.body.id}/attachment/${started.body.attachmentId}`;
    expect((await ea(carol, 'GET', path)).body.message).toBe('Emergency Access not valid.');
    expect((await ea(carol, 'POST', `/${id}/initiate`)).status).toBe(200);
    expect((await ea(dave, 'POST', `/${id}/approve`)).status).toBe(200);
    const data = await ea(carol, 'GET', path);
    expect(data.status, data.text).toBe(200);
    expect(data.body).toMatchObject({ object: 'attachment', id: started.body.attachmentId, size: '5' });
    const url = new URL(data.body.url);
    const bytes = await fetch(`${server.baseUrl}${url.pathname}${url.search}`);
    expect(Buffer.from(await bytes.arrayBuffer()).toString()).toBe('hello');
    // Only the grantor's own items.
    const other = await server.request('POST', '/api/ciphers', { token: carol.accessToken, json: cipherBody('login', carol.account.userKey) });
    expect((await ea(carol, 'GET', `/${id}/${other.body.id}/attachment/${started.body.attachmentId}`)).status).toBe(404);
  });
});

describe('a view of a large vault', () => {
  it('shows every item of a vault larger than one slice of reads', async () => {
    const sue = await seedAccount(server, { email: 'ea-sue@example.com' });
    const tom = await seedAccount(server, { email: 'ea-tom@example.com' });
    const first = await server.request('POST', '/api/ciphers', { token: sue.accessToken, json: cipherBody('login', sue.account.userKey) });
    expect(first.status, first.text).toBe(200);
    const row = await server.database.db.selectFrom('ciphers').selectAll().where('id', '=', first.body.id).executeTakeFirstOrThrow();
    const copies = Array.from({ length: 1000 }, () => ({ ...row, id: randomUUID() }));
    for (let i = 0; i < copies.length; i += 250) await server.database.db.insertInto('ciphers').values(copies.slice(i, i + 250)).execute();
    const id = await confirmedGrant(sue, tom, 0, 1);
    expect((await ea(tom, 'POST', `/${id}/initiate`)).status).toBe(200);
    expect((await ea(sue, 'POST', `/${id}/approve`)).status).toBe(200);
    const view = await ea(tom, 'POST', `/${id}/view`);
    expect(view.status, view.text.slice(0, 300)).toBe(200);
    const ids = (view.body.ciphers as { id: string }[]).map((c) => c.id).sort();
    expect(ids).toEqual([row.id, ...copies.map((c) => c.id)].sort());
  });
});

describe('a takeover grant', () => {
  it('waits, grants after the wait unless rejected, and sets the new password that then logs in, ending the old sessions', async () => {
    const erin = await seedAccount(server, { email: 'ea-erin@example.com', name: 'Erin' });
    const frank = await seedAccount(server, { email: 'ea-frank@example.com', name: 'Frank' });
    // Erin is a plain member of one organization and owns another, with a master password policy.
    const memberOf = await seedOrganization(server, { name: 'Member of' });
    const membership = await seedMembership(server, { organizationId: memberOf, userId: erin.userId, type: OrganizationUserType.User });
    const owns = await seedOrganization(server, { name: 'Owns' });
    await seedMembership(server, { organizationId: owns, userId: erin.userId, type: OrganizationUserType.Owner });
    await server.database.db
      .insertInto('policies')
      .values({ id: randomUUID(), organization_id: owns, type: PolicyType.MasterPassword, enabled: true, data: JSON.stringify({ minLength: 12 }), creation_date: clock.now().toISOString(), revision_date: clock.now().toISOString() })
      .execute();

    const id = await confirmedGrant(erin, frank, 1, 2);
    expect((await ea(frank, 'POST', `/${id}/initiate`)).status).toBe(200);
    await sink.waitFor(erin.account.email);
    expect((await ea(frank, 'POST', `/${id}/takeover`)).body.message).toBe('Emergency Access not valid.');
    expect((await ea(frank, 'GET', `/${id}/policies`)).body.message).toBe('Emergency Access not valid.');

    // Rejected, asked again, then granted by the timeout after the wait.
    expect((await ea(erin, 'POST', `/${id}/reject`)).status).toBe(200);
    expect((await sink.waitFor(frank.account.email)).text).toContain('Erin has rejected');
    expect(await statusOf(id)).toBe(2);
    expect((await ea(frank, 'POST', `/${id}/initiate`)).status).toBe(200);
    await sink.waitFor(erin.account.email);
    await advance(DAY);
    expect(await server.app.features.emergencyTimeout.runOnce()).toBe(0);
    expect(await statusOf(id)).toBe(3);
    await advance(DAY, erin, frank);
    // Two-step login turned on: the takeover turns it off, else it would lock the grantee out.
    await server.database.db.insertInto('two_factor_providers').values({ user_id: erin.userId, type: 0, enabled: true, metadata: '{}', last_used_step: null, creation_date: clock.now().toISOString(), revision_date: clock.now().toISOString() }).execute();
    expect(await server.app.features.emergencyTimeout.runOnce()).toBe(1);
    expect(await statusOf(id)).toBe(4);
    // A view of a takeover grant is refused.
    expect((await ea(frank, 'POST', `/${id}/view`)).body.message).toBe('Emergency Access not valid.');

    const policies = await ea(frank, 'GET', `/${id}/policies`);
    expect(policies.status, policies.text).toBe(200);
    expect(policies.body.data).toEqual([expect.objectContaining({ object: 'policy', organizationId: owns, type: PolicyType.MasterPassword, data: { minLength: 12 } })]);

    const takeover = await ea(frank, 'POST', `/${id}/takeover`);
    expect(takeover.status, takeover.text).toBe(200);
    expect(takeover.body).toEqual({ object: 'emergencyAccessTakeover', keyEncrypted: expect.any(String), kdf: 0, kdfIterations: erin.account.iterations, kdfMemory: null, kdfParallelism: null, salt: erin.account.email });
    const userKey = rsaDecryptEncString(takeover.body.keyEncrypted, frank.account.privateKeyDer);
    expect(userKey.equals(erin.account.userKey.raw)).toBe(true);

    // The new password, made as the web vault makes it (the stand-in derivation of the test accounts).
    const password = 'a brand new master password';
    const masterKey = deriveMasterKey(password, erin.account.email, 1);
    const hash = masterPasswordHash(masterKey, password);
    const key = encryptToEncString(userKey, stretchMasterKey(masterKey));
    const kdf = { kdfType: 0, iterations: erin.account.iterations, memory: null, parallelism: null };
    const salt = takeover.body.salt as string;
    const otherKdf = { ...kdf, iterations: erin.account.iterations + 1 };
    const changedKdf = await ea(frank, 'POST', `/${id}/password`, { authenticationData: { kdf: otherKdf, salt, masterPasswordAuthenticationHash: hash }, unlockData: { kdf: otherKdf, salt, masterKeyWrappedUserKey: key } });
    expect(changedKdf.status).toBe(400);
    expect(changedKdf.body.validationErrors).toHaveProperty(['unlockData.kdf']);
    const wrongSalt = await ea(frank, 'POST', `/${id}/password`, { authenticationData: { kdf, salt, masterPasswordAuthenticationHash: hash }, unlockData: { kdf, salt: 'other@example.com', masterKeyWrappedUserKey: key } });
    expect(wrongSalt.status).toBe(400);
    expect(wrongSalt.body.validationErrors).toHaveProperty(['unlockData.salt']);
    expect((await ea(frank, 'POST', `/${id}/password`, { key })).body.validationErrors).toHaveProperty('newMasterPasswordHash');

    await server.database.db.updateTable('users').set({ master_password_hint: 'the old one' }).where('id', '=', erin.userId).execute();
    pushes.clear();
    const set = await ea(frank, 'POST', `/${id}/password`, { authenticationData: { kdf, salt, masterPasswordAuthenticationHash: hash }, unlockData: { kdf, salt, masterKeyWrappedUserKey: key } });
    expect(set.status, set.text).toBe(200);

    expect(pushes.of(PushType.LogOut).map((p) => p.target)).toEqual([{ user: erin.userId }]);
    // The hint was for the old password, and the KDF stays as it was.
    const stored = await server.database.db.selectFrom('users').select(['master_password_hint', 'kdf_iterations']).where('id', '=', erin.userId).executeTakeFirstOrThrow();
    expect(stored).toEqual({ master_password_hint: null, kdf_iterations: erin.account.iterations });
    // Erin's sessions are over; the old password no longer logs in; the new one does and unwraps the same user key.
    expect((await server.request('GET', '/api/accounts/profile', { token: erin.accessToken })).status).toBe(401);
    expect((await server.request('POST', '/identity/connect/token', { form: passwordGrantForm(erin.account) })).status).toBe(400);
    const again = await loginAccount(server, erin.account, { password: hash });
    const login = await server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(erin.account), password: hash } });
    expect(login.status, login.text).toBe(200);
    expect(decryptEncString(login.body.Key as string, stretchMasterKey(masterKey)).equals(erin.account.userKey.raw)).toBe(true);
    expect(again.userId).toBe(erin.userId);

    // Two-step login is off, and Erin left the organization she did not own.
    expect(await server.database.db.selectFrom('two_factor_providers').select('type').where('user_id', '=', erin.userId).execute()).toEqual([]);
    const memberships = await server.database.db.selectFrom('organization_users').select('organization_id').where('user_id', '=', erin.userId).execute();
    expect(memberships.map((m) => m.organization_id)).toEqual([owns]);
    expect((await eventsOf(server, EventType.OrganizationUser_Removed, memberOf)).map((e) => e.organization_user_id)).toEqual([membership]);
    expect((await eventsOf(server, EventType.EmergencyAccess_TakenOver)).at(-1)).toMatchObject({ user_id: erin.userId, acting_user_id: frank.userId });
  });

  it('is refused while the grantor belongs to an organization that uses Automatic User Confirmation', async () => {
    const gina = await seedAccount(server, { email: 'ea-gina@example.com' });
    const hank = await seedAccount(server, { email: 'ea-hank@example.com' });
    const id = await confirmedGrant(gina, hank, 1, 1);
    expect((await ea(hank, 'POST', `/${id}/initiate`)).status).toBe(200);
    expect((await ea(gina, 'POST', `/${id}/approve`)).status).toBe(200);
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: gina.userId });
    const now = clock.now().toISOString();
    await server.database.db.insertInto('policies').values({ id: randomUUID(), organization_id: org, type: PolicyType.AutomaticUserConfirmation, enabled: true, data: null, creation_date: now, revision_date: now }).execute();
    expect((await ea(hank, 'POST', `/${id}/takeover`)).body.message).toMatch(/Automatic User Confirmation/);
    expect((await ea(hank, 'POST', `/${id}/password`, { newMasterPasswordHash: secret(), key: encryptToEncString('k', gina.account.userKey) })).body.message).toMatch(/Automatic User Confirmation/);
    expect((await ea(gina, 'POST', '/invite', { email: 'someone@example.com', type: 0, waitTimeDays: 1 })).body.message).toMatch(/Automatic User Confirmation/);
  });
});

describe('refusals', () => {
  it('refuses a wait time out of range, the own address and an address already named, naming the field', async () => {
    await advance(0, carol);
    for (const waitTimeDays of [0, -1, 32_768, 1.5]) {
      const res = await ea(carol, 'POST', '/invite', { email: 'x@example.com', type: 0, waitTimeDays });
      expect(res.status, String(waitTimeDays)).toBe(400);
      expect(res.body.validationErrors, String(waitTimeDays)).toHaveProperty('waitTimeDays');
    }
    expect((await ea(carol, 'POST', '/invite', { email: 'x@example.com', type: 2, waitTimeDays: 1 })).body.validationErrors).toHaveProperty('type');
    const self = await ea(carol, 'POST', '/invite', { email: carol.account.email.toUpperCase(), type: 0, waitTimeDays: 1 });
    expect(self.body.validationErrors?.email).toEqual(['You cannot add yourself as an emergency access contact.']);
    expect((await ea(carol, 'POST', '/invite', { email: 'twice@example.com', type: 0, waitTimeDays: 1 })).status).toBe(200);
    expect((await ea(carol, 'POST', '/invite', { email: 'Twice@example.com', type: 1, waitTimeDays: 3 })).body.validationErrors?.email).toEqual(['Emergency contact already invited.']);
    expect(grantsIn(await ea(carol, 'GET', '/trusted')).filter((g) => g.email === 'twice@example.com')).toHaveLength(1);
  });

  it("refuses a forged, expired or someone else's token", async () => {
    const ivan = await seedAccount(server, { email: 'ea-ivan@example.com' });
    const judy = await seedAccount(server, { email: 'ea-judy@example.com' });
    expect((await ea(ivan, 'POST', '/invite', { email: judy.account.email, type: 0, waitTimeDays: 1 })).status).toBe(200);
    const { id, token } = await invitationTo(judy.account.email);
    // Carol has the link, but it names Judy.
    expect((await ea(carol, 'POST', `/${id}/accept`, { token })).body.message).toBe('Invalid token.');
    expect((await ea(judy, 'POST', `/${id}/accept`, { token: `${token.slice(0, -4)}AAAA` })).body.message).toBe('Invalid token.');
    expect((await ea(judy, 'POST', `/${randomUUID()}/accept`, { token })).body.message).toBe('Invalid token.');
    expect((await ea(judy, 'POST', `/${id}/accept`, {})).body.validationErrors).toHaveProperty('token');
    // A reinvite mails a fresh link; the old one lapses after five days.
    expect((await ea(ivan, 'POST', `/${id}/reinvite`)).status).toBe(200);
    const fresh = await invitationTo(judy.account.email);
    await advance(5 * DAY + 60_000, ivan, judy);
    expect((await ea(judy, 'POST', `/${id}/accept`, { token })).body.message).toBe('Invalid token.');
    expect((await ea(judy, 'POST', `/${id}/accept`, { token: fresh.token })).body.message).toBe('Invalid token.');
    expect((await ea(ivan, 'POST', `/${id}/reinvite`)).status).toBe(200);
    const last = await invitationTo(judy.account.email);
    expect((await ea(judy, 'POST', `/${id}/accept`, { token: last.token })).status).toBe(200);
    expect((await ea(ivan, 'POST', `/${id}/reinvite`)).body.message).toBe('Emergency Access not valid.');
  });

  it('refuses steps out of order, and keeps a held key on update only', async () => {
    const kate = await seedAccount(server, { email: 'ea-kate@example.com' });
    const leo = await seedAccount(server, { email: 'ea-leo@example.com' });
    const id = await confirmedGrant(kate, leo, 0, 3);
    expect((await ea(kate, 'POST', `/${id}/confirm`, { key: rsaEncryptToEncString(Buffer.alloc(64), leo.account.publicKeyB64) })).body.message).toBe('Emergency Access not valid.');
    expect((await ea(kate, 'POST', `/${id}/approve`)).body.message).toBe('Emergency Access not valid.');
    expect((await ea(kate, 'POST', `/${id}/reject`)).body.message).toBe('Emergency Access not valid.');
    expect((await ea(kate, 'POST', `/${id}/confirm`, { key: 'not an encstring' })).body.validationErrors).toHaveProperty('key');

    const key = rsaEncryptToEncString(kate.account.userKey.raw, leo.account.publicKeyB64);
    expect((await ea(kate, 'PUT', `/${id}`, { type: 1, waitTimeDays: 10, keyEncrypted: key })).status).toBe(200);
    const row = await server.database.db.selectFrom('emergency_access').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect({ type: row.type, wait: row.wait_time_days, key: row.key_encrypted }).toEqual({ type: 1, wait: 10, key });
    expect((await ea(kate, 'POST', `/${id}`, { type: 0, waitTimeDays: 0 })).body.validationErrors).toHaveProperty('waitTimeDays');

    // An invitation holds no key, so an update cannot slip one in.
    expect((await ea(kate, 'POST', '/invite', { email: 'nokey@example.com', type: 0, waitTimeDays: 1 })).status).toBe(200);
    const invited = grantsIn(await ea(kate, 'GET', '/trusted')).find((g) => g.email === 'nokey@example.com')!;
    expect((await ea(kate, 'POST', `/${invited.id}`, { type: 0, waitTimeDays: 2, keyEncrypted: key })).status).toBe(200);
    expect((await server.database.db.selectFrom('emergency_access').select('key_encrypted').where('id', '=', invited.id).executeTakeFirstOrThrow()).key_encrypted).toBeNull();
    expect((await ea(kate, 'POST', `/${invited.id}/delete`)).status).toBe(200);
  });
});

describe('a takeover racing a change of the grantor', () => {
  it("checks the new password against the grantor's KDF as it is when the password is written", async () => {
    const ivy = await seedAccount(server, { email: 'ea-ivy@example.com' });
    const jack = await seedAccount(server, { email: 'ea-jack@example.com' });
    const id = await confirmedGrant(ivy, jack, 1, 1);
    expect((await ea(jack, 'POST', `/${id}/initiate`)).status).toBe(200);
    expect((await ea(ivy, 'POST', `/${id}/approve`)).status).toBe(200);
    const kdf = { kdfType: 0, iterations: ivy.account.iterations, memory: null, parallelism: null };
    const salt = ivy.account.email;
    const body = { authenticationData: { kdf, salt, masterPasswordAuthenticationHash: secret() }, unlockData: { kdf, salt, masterKeyWrappedUserKey: encryptToEncString('k', ivy.account.userKey) } };
    // Ivy changes her KDF while the takeover is under way: the takeover, checked against the old
    // row, must wait for the change and then refuse the KDF it was made with.
    let pending: ReturnType<typeof ea> | undefined;
    await server.database.db.transaction().execute(async (tx) => {
      await tx.updateTable('users').set({ kdf_iterations: ivy.account.iterations + 1 }).where('id', '=', ivy.userId).execute();
      pending = ea(jack, 'POST', `/${id}/password`, body);
      await new Promise((resolve) => setTimeout(resolve, 1500));
    });
    const res = await pending!;
    expect(res.status, res.text).toBe(400);
    expect(res.body.validationErrors).toHaveProperty(['unlockData.kdf']);
    expect((await server.database.db.selectFrom('users').select('kdf_iterations').where('id', '=', ivy.userId).executeTakeFirstOrThrow()).kdf_iterations).toBe(ivy.account.iterations + 1);
  });
});

describe('bounds on invitations', () => {
  it('caps the contacts of one grantor, lets two invitations of one address at once make one grant, and limits the mails', async () => {
    const kim = await seedAccount(server, { email: 'ea-kim@example.com' });
    // Two invitations of one address at once: one grant, the other refused on email.
    const both = await Promise.all([0, 1].map(() => ea(kim, 'POST', '/invite', { email: 'ea-twice@example.com', type: 0, waitTimeDays: 1 })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(both.find((r) => r.status === 400)!.body.validationErrors).toHaveProperty('email');
    const { id } = await invitationTo('ea-twice@example.com');

    // Up to the cap with stored grants, then the next one is refused on email.
    const now = clock.now().toISOString();
    const rows = Array.from({ length: 99 }, (_, i) => ({ id: randomUUID(), grantor_id: kim.userId, grantee_id: null, email: `ea-cap-${i}@example.com`, key_encrypted: null, type: 0, status: 0, wait_time_days: 1, recovery_initiated_date: null, last_notification_date: null, creation_date: now, revision_date: now }));
    await server.database.db.insertInto('emergency_access').values(rows).execute();
    const over = await ea(kim, 'POST', '/invite', { email: 'ea-one-too-many@example.com', type: 0, waitTimeDays: 1 });
    expect(over.status).toBe(400);
    expect(over.body.validationErrors).toHaveProperty('email');

    // Two invitations and the refused one above counted; resends share the budget of 10 an hour.
    for (let i = 0; i < 7; i++) expect((await ea(kim, 'POST', `/${id}/reinvite`)).status, `resend ${i}`).toBe(200);
    const limited = await ea(kim, 'POST', `/${id}/reinvite`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await ea(kim, 'POST', '/invite', { email: 'ea-later@example.com', type: 0, waitTimeDays: 1 })).status).toBe(429);
  });
});

describe('joining an organization that uses Automatic User Confirmation', () => {
  it("ends every grant of the member, on both sides, when they are confirmed, and no one else's", async () => {
    const pat = await seedAccount(server, { email: 'ea-pat@example.com' });
    const quinn = await seedAccount(server, { email: 'ea-quinn@example.com' });
    const rita = await seedAccount(server, { email: 'ea-rita@example.com' });
    const owner = await seedAccount(server, { email: 'ea-auc-owner@example.com' });
    const asGrantor = await confirmedGrant(pat, quinn, 0, 1);
    const asGrantee = await confirmedGrant(rita, pat, 1, 1);
    const unrelated = await confirmedGrant(rita, quinn, 0, 1);
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner });
    const now = clock.now().toISOString();
    await server.database.db.insertInto('policies').values({ id: randomUUID(), organization_id: org, type: PolicyType.AutomaticUserConfirmation, enabled: true, data: null, creation_date: now, revision_date: now }).execute();
    const membership = await seedMembership(server, { organizationId: org, userId: pat.userId, status: 1 });

    const confirmed = await server.request('POST', `/api/organizations/${org}/users/${membership}/confirm`, { token: owner.accessToken, json: { key: encryptToEncString('org key', pat.account.userKey) } });
    expect(confirmed.status, confirmed.text).toBe(200);
    const left = await server.database.db.selectFrom('emergency_access').select('id').where('id', 'in', [asGrantor, asGrantee, unrelated]).execute();
    expect(left.map((r) => r.id)).toEqual([unrelated]);
    const removed = (await eventsOf(server, EventType.EmergencyAccess_Removed)).filter((e) => e.acting_user_id === owner.userId);
    expect(removed.map((e) => e.user_id).sort()).toEqual([pat.userId, rita.userId].sort());
  });

  it('ends them too when the member accepts an invitation to such an organization', async () => {
    const sam = await seedAccount(server, { email: 'ea-sam@example.com' });
    const tess = await seedAccount(server, { email: 'ea-tess@example.com' });
    const owner = await seedAccount(server, { email: 'ea-auc-owner2@example.com' });
    const asGrantor = await confirmedGrant(sam, tess, 0, 1);
    const asGrantee = await confirmedGrant(tess, sam, 1, 1);
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner });
    const now = clock.now().toISOString();
    await server.database.db.insertInto('policies').values({ id: randomUUID(), organization_id: org, type: PolicyType.AutomaticUserConfirmation, enabled: true, data: null, creation_date: now, revision_date: now }).execute();

    const invited = await server.request('POST', `/api/organizations/${org}/users/invite`, { token: owner.accessToken, json: { emails: [sam.account.email], type: OrganizationUserType.User, collections: [] } });
    expect(invited.status, invited.text).toBe(200);
    const invitation = invitationFrom(await sink.waitFor(sam.account.email));
    const accepted = await server.request('POST', `/api/organizations/${org}/users/${invitation.organizationUserId}/accept`, { token: sam.accessToken, json: { token: invitation.token } });
    expect(accepted.status, accepted.text).toBe(200);

    expect(await server.database.db.selectFrom('emergency_access').select('id').where('id', 'in', [asGrantor, asGrantee]).execute()).toEqual([]);
    const removed = (await eventsOf(server, EventType.EmergencyAccess_Removed)).filter((e) => e.acting_user_id === sam.userId);
    expect(removed.map((e) => e.user_id).sort()).toEqual([sam.userId, tess.userId].sort());
  });
});

describe('who may call what', () => {
  it('lets only the grantor and the grantee act, each on their own steps; anyone else gets 404 and changes nothing', async () => {
    const mia = await seedAccount(server, { email: 'ea-mia@example.com' });
    const ned = await seedAccount(server, { email: 'ea-ned@example.com' });
    const stranger = await seedAccount(server, { email: 'ea-stranger@example.com' });
    // An admin of an organization the grantor belongs to has no say over the grantor's contacts.
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: mia.userId });
    const admin = await seedAccount(server, { email: 'ea-admin@example.com' });
    await seedMembership(server, { organizationId: org, userId: admin.userId, type: OrganizationUserType.Admin });
    const id = await confirmedGrant(mia, ned, 0, 1);
    const key = rsaEncryptToEncString(mia.account.userKey.raw, ned.account.publicKeyB64);
    const cipher = randomUUID();

    const grantorOnly = ['GET /{id}', 'PUT /{id}', 'POST /{id}', 'POST /{id}/reinvite', 'POST /{id}/confirm', 'POST /{id}/approve', 'POST /{id}/reject'];
    const granteeOnly = ['POST /{id}/accept', 'POST /{id}/initiate', 'POST /{id}/view', 'POST /{id}/takeover', 'POST /{id}/password', 'GET /{id}/policies', `GET /{id}/${cipher}/attachment/abc`];
    const either = ['DELETE /{id}', 'POST /{id}/delete'];
    const bodies: Record<string, unknown> = {
      'PUT /{id}': { type: 0, waitTimeDays: 1 },
      'POST /{id}': { type: 0, waitTimeDays: 1 },
      'POST /{id}/confirm': { key },
      'POST /{id}/accept': { token: secret() },
      'POST /{id}/password': { newMasterPasswordHash: secret(), key: encryptToEncString('k', mia.account.userKey) },
    };
    const call = (who: LoggedInUser, route: string) => {
      const [method, path] = route.split(' ') as [string, string];
      return ea(who, method, path.replace('{id}', id), bodies[route]);
    };
    const before = await server.database.db.selectFrom('emergency_access').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    for (const route of [...grantorOnly, ...granteeOnly, ...either]) {
      for (const [name, who] of [['stranger', stranger], ['admin', admin]] as const) {
        const res = await call(who, route);
        // The accept step checks the token before the grant: a stranger's is refused as invalid.
        if (route === 'POST /{id}/accept') expect(res.body.message, `${name} ${route}`).toBe('Invalid token.');
        else expect(res.status, `${name} ${route}`).toBe(404);
      }
      if (grantorOnly.includes(route)) expect((await call(ned, route)).status, `grantee ${route}`).toBe(404);
      if (granteeOnly.includes(route) && route !== 'POST /{id}/accept') expect((await call(mia, route)).status, `grantor ${route}`).toBe(404);
    }
    expect(await server.database.db.selectFrom('emergency_access').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toEqual(before);
    // The rightful party passes the ownership check on each of its steps, then the status of the
    // confirmed view grant decides: the grantor's reads and edits pass, steps out of order get 400;
    // the grantee asks for access, and the access itself is not granted yet.
    const expected: Record<string, number> = {
      'GET /{id}': 200,
      'PUT /{id}': 200,
      'POST /{id}': 200,
      'POST /{id}/reinvite': 400,
      'POST /{id}/confirm': 400,
      'POST /{id}/approve': 400,
      'POST /{id}/reject': 400,
      'POST /{id}/initiate': 200,
      'POST /{id}/view': 400,
      'POST /{id}/takeover': 400,
      'POST /{id}/password': 400,
      'GET /{id}/policies': 400,
      [`GET /{id}/${cipher}/attachment/abc`]: 400,
    };
    for (const route of grantorOnly) expect((await call(mia, route)).status, `grantor ${route}`).toBe(expected[route]);
    for (const route of granteeOnly.filter((r) => r !== 'POST /{id}/accept')) expect((await call(ned, route)).status, `grantee ${route}`).toBe(expected[route]);
    expect((await call(ned, 'DELETE /{id}')).status).toBe(200);
    for (const who of [stranger, admin]) {
      expect((await ea(who, 'GET', '/trusted')).body.data).toEqual([]);
      expect((await ea(who, 'GET', '/granted')).body.data).toEqual([]);
    }
    expect((await server.request('GET', '/api/emergency-access/trusted')).status).toBe(401);
  });
});
