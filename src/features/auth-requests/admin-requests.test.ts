import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loginAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import {
  decryptEncString,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  symmetricKeyFrom,
} from '../../../test/support/bw-crypto.js';
import { dataOf, memberOf, memberRow, seedPolicy, type SeededMember } from '../../../test/support/members.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PushType } from '../../platform/push/pushes.js';
import { PolicyType } from '../policies/policy-type.js';
import { ADMIN_REQUEST_TEXTS } from './admin-requests.service.js';
import { AUTH_REQUEST_TEXTS } from './auth-requests.service.js';

/**
 * Device approvals by organization admins, end to end over HTTP with real keys: a member enrolled
 * in account recovery asks from a new device, an owner unwraps the member's user key with the
 * organization key and wraps it for the request's public key, and the new device unwraps it.
 */
const pushes = recordingPushes();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ pushes });
});
afterAll(async () => server?.close());
beforeEach(() => pushes.clear());

const db = () => server.database.db;
const orgRequests = (orgId: string) => `/api/organizations/${orgId}/auth-requests`;
const WEB = { 'device-type': '9' };

/** An organization with a real key pair, the account recovery policy on, and an owner holding the organization key. */
async function recoveryOrg() {
  const orgKey = generateSymmetricKey();
  const pair = generateRsaKeyPair();
  const orgId = await seedOrganization(server, { overrides: { public_key: pair.publicKeyB64, private_key: encryptToEncString(pair.privateKeyDer, orgKey) } });
  await seedPolicy(server, orgId, PolicyType.ResetPassword);
  const withKey = async (type: Role, permissions?: Record<string, boolean>) => {
    const member = await memberOf(server, orgId, { type, ...(permissions ? { permissions } : {}) });
    await db().updateTable('organization_users').set({ key: rsaEncryptToEncString(orgKey.raw, member.account.publicKeyB64) }).where('id', '=', member.memberId).execute();
    return member;
  };
  const owner = await withKey(Role.Owner);
  return { orgId, orgPublicKey: pair.publicKeyB64, owner, withKey };
}
type RecoveryOrg = Awaited<ReturnType<typeof recoveryOrg>>;

/** Enrolls the member in the organization's account recovery, as the web vault does. */
async function enroll(org: RecoveryOrg, member: SeededMember) {
  const json = { resetPasswordKey: rsaEncryptToEncString(member.account.userKey.raw, org.orgPublicKey), masterPasswordHash: member.account.masterPasswordHash };
  const res = await server.request('PUT', `/api/organizations/${org.orgId}/users/${member.userId}/reset-password-enrollment`, { token: member.accessToken, json });
  expect(res.status, res.text).toBe(200);
}

/** The member signed in on a new device that holds no key (as an SSO login with trusted devices leaves it), and that device's key pair. */
async function newDevice(member: LoggedInUser) {
  const device = { deviceType: '9', deviceIdentifier: randomUUID(), deviceName: 'chrome' };
  const session = await loginAccount(server, member.account, device);
  return { ...device, token: session.accessToken, keys: generateRsaKeyPair() };
}
type NewDevice = Awaited<ReturnType<typeof newDevice>>;

const ask = (member: LoggedInUser, device: NewDevice, overrides: Record<string, unknown> = {}, headers: Record<string, string> = WEB) =>
  server.request('POST', '/api/auth-requests/admin-request', {
    token: device.token,
    headers,
    json: { email: member.account.email, publicKey: device.keys.publicKeyB64, deviceIdentifier: device.deviceIdentifier, accessCode: 'x'.repeat(25), type: 2, ...overrides },
  });

/** What the admin's web vault does to approve: the member's escrowed user key, unwrapped with the organization key, wrapped for the request. */
async function wrapForRequest(org: RecoveryOrg, admin: SeededMember, organizationUserId: string, requestPublicKey: string): Promise<string> {
  const details = await server.request('GET', `/api/organizations/${org.orgId}/users/${organizationUserId}/reset-password-details`, { token: admin.accessToken });
  expect(details.status, details.text).toBe(200);
  const orgKey = symmetricKeyFrom(rsaDecryptEncString((await memberRow(server, admin.memberId))?.key ?? '', admin.account.privateKeyDer));
  const orgPrivateKey = decryptEncString(details.body.encryptedPrivateKey, orgKey);
  const userKey = rsaDecryptEncString(details.body.resetPasswordKey, orgPrivateKey);
  return rsaEncryptToEncString(userKey, requestPublicKey);
}

/** An enrolled member of `org` who asked from a new device: the request's id and the device. */
async function asked(org: RecoveryOrg, type?: Role) {
  const member = await memberOf(server, org.orgId, type === undefined ? {} : { type });
  await enroll(org, member);
  const device = await newDevice(member);
  const res = await ask(member, device);
  expect(res.status, res.text).toBe(200);
  pushes.clear();
  return { member, device, id: res.body.id as string };
}

const row = (id: string) => db().selectFrom('auth_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const eventsOf = (type: EventType, organizationId: string | null) =>
  db()
    .selectFrom('events')
    .select(['user_id', 'organization_id', 'organization_user_id', 'acting_user_id'])
    .where('type', '=', type)
    .where(organizationId === null ? (eb) => eb('organization_id', 'is', null) : (eb) => eb('organization_id', '=', organizationId))
    .execute();

describe('an admin approves a new device', () => {
  it('the member asks, an owner lists, unwraps and wraps the user key and approves; the device unwraps the same user key', async () => {
    const org = await recoveryOrg();
    const member = await memberOf(server, org.orgId);
    await enroll(org, member);
    const device = await newDevice(member);
    pushes.clear();
    const logsFrom = server.logs.lines.length;

    const res = await ask(member, device);
    expect(res.status, res.text).toBe(200);
    // The owner, who may answer, is mailed (logged: no mail server in tests); the member is not.
    const mailed = server.logs.lines.slice(logsFrom).join('\n');
    expect(mailed).toContain('Review a device approval request');
    expect(mailed).toContain(org.owner.account.email);
    expect(mailed).toContain(`/#/organizations/${org.orgId}/settings/device-approvals`);
    const id = res.body.id as string;
    expect(res.body).toMatchObject({ object: 'auth-request', publicKey: device.keys.publicKeyB64, requestDeviceIdentifier: device.deviceIdentifier, requestApproved: false, key: null, responseDate: null });
    expect((await row(id)).organization_id).toBe(org.orgId);
    // Nothing is pushed to the member's devices: an admin request is not theirs to answer, nor listed among their pending ones.
    expect(pushes.sent).toEqual([]);
    expect((await server.request('GET', '/api/auth-requests/pending', { token: member.accessToken })).body.data).toEqual([]);
    const requested = await eventsOf(EventType.User_RequestedDeviceApproval, org.orgId);
    expect(requested).toEqual([{ user_id: member.userId, organization_id: org.orgId, organization_user_id: null, acting_user_id: member.userId }]);

    const listed = await server.request('GET', orgRequests(org.orgId), { token: org.owner.accessToken });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([
      {
        object: 'pending-org-auth-request',
        id,
        userId: member.userId,
        organizationUserId: member.memberId,
        email: member.account.email,
        publicKey: device.keys.publicKeyB64,
        requestDeviceIdentifier: device.deviceIdentifier,
        requestDeviceType: 'Chrome',
        requestIpAddress: expect.any(String),
        requestCountryName: null,
        creationDate: expect.any(String),
      },
    ]);

    const encryptedUserKey = await wrapForRequest(org, org.owner, member.memberId, listed.body.data[0].publicKey);
    const approved = await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: org.owner.accessToken, json: { requestApproved: true, encryptedUserKey } });
    expect(approved.status, approved.text).toBe(200);
    expect(server.logs.lines.slice(logsFrom).join('\n')).toContain('Your device was approved');
    expect(pushes.sent).toEqual([{ type: PushType.AuthRequestResponse, payload: { Id: id, UserId: member.userId }, contextId: expect.anything(), target: { authRequest: id } }]);
    expect(await eventsOf(EventType.OrganizationUser_ApprovedAuthRequest, org.orgId)).toEqual([
      { user_id: null, organization_id: org.orgId, organization_user_id: member.memberId, acting_user_id: org.owner.userId },
    ]);
    expect((await server.request('GET', orgRequests(org.orgId), { token: org.owner.accessToken })).body.data).toEqual([]);

    // The new device reads the answer with its token, as the clients do for an admin request, and unwraps the user key.
    const answer = await server.request('GET', `/api/auth-requests/${id}`, { token: device.token });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ id, requestApproved: true, key: encryptedUserKey, masterPasswordHash: null, responseDate: expect.any(String) });
    expect(rsaDecryptEncString(answer.body.key, device.keys.privateKeyDer).equals(member.account.userKey.raw)).toBe(true);
  });

  it('asks each organization the member is enrolled with, and each sees only its own', async () => {
    const first = await recoveryOrg();
    const second = await recoveryOrg();
    const notEnrolled = await recoveryOrg();
    const member = await memberOf(server, first.orgId);
    await enroll(first, member);
    await db().insertInto('organization_users').values({ ...(await memberRow(server, member.memberId))!, id: randomUUID(), organization_id: second.orgId, reset_password_key: null }).execute();
    const inSecond = (await db().selectFrom('organization_users').select('id').where('organization_id', '=', second.orgId).where('user_id', '=', member.userId).executeTakeFirstOrThrow()).id;
    await db().insertInto('organization_users').values({ ...(await memberRow(server, member.memberId))!, id: randomUUID(), organization_id: notEnrolled.orgId, reset_password_key: null }).execute();
    await enroll(second, { ...member, memberId: inSecond });
    const device = await newDevice(member);
    const res = await ask(member, device);
    expect(res.status, res.text).toBe(200);

    const made = await db().selectFrom('auth_requests').select(['id', 'organization_id']).where('user_id', '=', member.userId).where('type', '=', 2).execute();
    expect(made.map((r) => r.organization_id).sort()).toEqual([first.orgId, second.orgId].sort());
    expect(made.map((r) => r.id)).toContain(res.body.id);
    const inFirst = made.find((r) => r.organization_id === first.orgId)!.id;
    const ofSecond = made.find((r) => r.organization_id === second.orgId)!.id;
    expect(dataOf((await server.request('GET', orgRequests(first.orgId), { token: first.owner.accessToken })).body).map((r) => r.id)).toEqual([inFirst]);
    expect((await server.request('GET', orgRequests(notEnrolled.orgId), { token: notEnrolled.owner.accessToken })).body.data).toEqual([]);
    // Another organization's request does not exist here, whatever the answer.
    const key = await wrapForRequest(first, first.owner, member.memberId, device.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(first.orgId)}/${ofSecond}`, { token: first.owner.accessToken, json: { requestApproved: true, encryptedUserKey: key } })).status).toBe(404);
    expect((await server.request('POST', `${orgRequests(first.orgId)}/deny`, { token: first.owner.accessToken, json: { ids: [ofSecond] } })).status).toBe(200);
    expect((await row(ofSecond)).approved).toBeNull();
    expect((await eventsOf(EventType.User_RequestedDeviceApproval, null)).filter((e) => e.user_id === member.userId)).toHaveLength(1);
  });
});

describe('denials and bulk answers', () => {
  it('a denial is stored and recorded, not pushed; the member reads it as answered and not approved', async () => {
    const org = await recoveryOrg();
    const { id, device, member } = await asked(org);
    const denied = await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: org.owner.accessToken, json: { requestApproved: false, encryptedUserKey: null } });
    expect(denied.status, denied.text).toBe(200);
    expect(pushes.sent).toEqual([]);
    expect(await eventsOf(EventType.OrganizationUser_RejectedAuthRequest, org.orgId)).toEqual([
      { user_id: null, organization_id: org.orgId, organization_user_id: member.memberId, acting_user_id: org.owner.userId },
    ]);
    const read = await server.request('GET', `/api/auth-requests/${id}`, { token: device.token });
    expect(read.body).toMatchObject({ requestApproved: false, key: null, responseDate: expect.any(String) });
  });

  it('answered twice: 400 with the official text, the first answer stands', async () => {
    const org = await recoveryOrg();
    const { id, member, device } = await asked(org);
    const key = await wrapForRequest(org, org.owner, member.memberId, device.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: org.owner.accessToken, json: { requestApproved: true, encryptedUserKey: key } })).status).toBe(200);
    const again = await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: org.owner.accessToken, json: { requestApproved: false } });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe(AUTH_REQUEST_TEXTS.answered);
    const denyAll = await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: org.owner.accessToken, json: { ids: [id] } });
    expect(denyAll.status).toBe(400);
    expect(denyAll.body.message).toBe(AUTH_REQUEST_TEXTS.answered);
    expect((await row(id)).approved).toBeTruthy();
    expect((await row(id)).key).toBe(key);
    // A batch with an answered request in it denies none of the others either.
    const other = await asked(org);
    const mixed = await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: org.owner.accessToken, json: { ids: [other.id, id] } });
    expect(mixed.status).toBe(400);
    expect((await row(other.id)).response_date).toBeNull();
  });

  it('bulk: approves and denies what it can, skips the rest; bulk deny denies all or nothing', async () => {
    const org = await recoveryOrg();
    const a = await asked(org);
    const b = await asked(org);
    const c = await asked(org);
    const answered = await asked(org);
    await server.request('POST', `${orgRequests(org.orgId)}/${answered.id}`, { token: org.owner.accessToken, json: { requestApproved: false } });
    pushes.clear();
    const keyA = await wrapForRequest(org, org.owner, a.member.memberId, a.device.keys.publicKeyB64);
    const json = [
      { id: a.id, approved: true, key: keyA },
      { id: b.id, approved: false },
      { id: answered.id, approved: true, key: keyA },
      { id: randomUUID(), approved: false },
    ];
    const res = await server.request('POST', orgRequests(org.orgId), { token: org.owner.accessToken, json });
    expect(res.status, res.text).toBe(200);
    expect(await row(a.id)).toMatchObject({ key: keyA, response_date: expect.any(String) });
    expect(Boolean((await row(a.id)).approved)).toBe(true);
    expect((await row(b.id)).approved).toBeFalsy();
    expect((await row(b.id)).response_date).not.toBeNull();
    expect((await row(answered.id)).key).toBeNull();
    expect(pushes.sent.map((p) => p.target)).toEqual([{ authRequest: a.id }]);
    expect(rsaDecryptEncString((await server.request('GET', `/api/auth-requests/${a.id}`, { token: a.device.token })).body.key, a.device.keys.privateKeyDer).equals(a.member.account.userKey.raw)).toBe(true);

    // An approval without its key is bad input: nothing of the batch is written.
    const d = await asked(org);
    const bad = await server.request('POST', orgRequests(org.orgId), { token: org.owner.accessToken, json: [{ id: d.id, approved: false }, { id: c.id, approved: true }] });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.validationErrors)).toEqual(['[1].key']);
    expect((await row(d.id)).response_date).toBeNull();

    const denied = await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: org.owner.accessToken, json: { ids: [c.id, d.id, randomUUID()] } });
    expect(denied.status, denied.text).toBe(200);
    for (const id of [c.id, d.id]) expect((await row(id)).approved).toBeFalsy();
    expect((await row(d.id)).response_date).not.toBeNull();
    const rejected = (await eventsOf(EventType.OrganizationUser_RejectedAuthRequest, org.orgId)).map((e) => e.organization_user_id).sort();
    expect(rejected).toEqual([answered.member.memberId, b.member.memberId, c.member.memberId, d.member.memberId].sort());
  });
});

describe('lifetimes', () => {
  it('unanswered for 7 days: gone from the list, not answerable, 404 to the member; an approval is readable for 12 hours', async () => {
    const org = await recoveryOrg();
    const old = await asked(org);
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000).toISOString();
    await db().updateTable('auth_requests').set({ creation_date: eightDaysAgo }).where('id', '=', old.id).execute();
    expect((await server.request('GET', orgRequests(org.orgId), { token: org.owner.accessToken })).body.data).toEqual([]);
    const key = await wrapForRequest(org, org.owner, old.member.memberId, old.device.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/${old.id}`, { token: org.owner.accessToken, json: { requestApproved: true, encryptedUserKey: key } })).status).toBe(404);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: org.owner.accessToken, json: { ids: [old.id] } })).status).toBe(404);
    await server.request('POST', orgRequests(org.orgId), { token: org.owner.accessToken, json: [{ id: old.id, approved: true, key }] });
    expect((await row(old.id)).response_date).toBeNull();
    expect((await server.request('GET', `/api/auth-requests/${old.id}`, { token: old.device.token })).status).toBe(404);

    const fresh = await asked(org);
    const freshKey = await wrapForRequest(org, org.owner, fresh.member.memberId, fresh.device.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/${fresh.id}`, { token: org.owner.accessToken, json: { requestApproved: true, encryptedUserKey: freshKey } })).status).toBe(200);
    const read = (id: string) => server.request('GET', `/api/auth-requests/${id}`, { token: fresh.device.token });
    await db().updateTable('auth_requests').set({ response_date: new Date(Date.now() - 11 * 3600 * 1000).toISOString() }).where('id', '=', fresh.id).execute();
    expect((await read(fresh.id)).status).toBe(200);
    await db().updateTable('auth_requests').set({ response_date: new Date(Date.now() - 13 * 3600 * 1000).toISOString() }).where('id', '=', fresh.id).execute();
    expect((await read(fresh.id)).status).toBe(404);
  });
});

describe('asking again', () => {
  const mailsSince = (from: number) => server.logs.lines.slice(from).filter((line) => line.includes('Review a device approval request')).length;
  const requestsOf = async (userId: string) => (await db().selectFrom('auth_requests').select('id').where('user_id', '=', userId).execute()).length;

  it('from the same device while unanswered: the same request with the new key, no new row, event or mail', async () => {
    const org = await recoveryOrg();
    const { member, device, id } = await asked(org);
    const events = (await eventsOf(EventType.User_RequestedDeviceApproval, org.orgId)).length;
    const logsFrom = server.logs.lines.length;
    // The clients make a new key pair each time they ask: the request keeps its id and takes the new key.
    const again = { ...device, keys: generateRsaKeyPair() };
    for (let i = 0; i < 3; i++) {
      const res = await ask(member, again);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id, publicKey: again.keys.publicKeyB64 });
    }
    expect(await requestsOf(member.userId)).toBe(1);
    expect(mailsSince(logsFrom)).toBe(0);
    expect(await eventsOf(EventType.User_RequestedDeviceApproval, org.orgId)).toHaveLength(events);
    // The admin wraps for the key now listed, and the device that asked last unwraps the user key.
    const listed = (await server.request('GET', orgRequests(org.orgId), { token: org.owner.accessToken })).body.data as { id: string; publicKey: string }[];
    expect(listed).toEqual([expect.objectContaining({ id, publicKey: again.keys.publicKeyB64 })]);
    const key = await wrapForRequest(org, org.owner, member.memberId, again.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: org.owner.accessToken, json: { requestApproved: true, encryptedUserKey: key } })).status).toBe(200);
    const read = await server.request('GET', `/api/auth-requests/${id}`, { token: again.token });
    expect(rsaDecryptEncString(read.body.key, again.keys.privateKeyDer).equals(member.account.userKey.raw)).toBe(true);

    // Answered, it is not reused: asking again makes a new request, and mails the approvers again.
    const logsAfter = server.logs.lines.length;
    const next = await ask(member, again);
    expect(next.status, next.text).toBe(200);
    expect(next.body.id).not.toBe(id);
    expect(mailsSince(logsAfter)).toBe(1);
    // Another device of the member asks on its own.
    const other = await ask(member, await newDevice(member));
    expect(other.body.id).not.toBe(next.body.id);
    expect(await requestsOf(member.userId)).toBe(3);
  });

  it('from a device whose request expired: a new request', async () => {
    const org = await recoveryOrg();
    const { member, device, id } = await asked(org);
    await db().updateTable('auth_requests').set({ creation_date: new Date(Date.now() - 8 * 24 * 3600 * 1000).toISOString() }).where('id', '=', id).execute();
    const res = await ask(member, device);
    expect(res.status, res.text).toBe(200);
    expect(res.body.id).not.toBe(id);
  });

  it('beyond RATE_LIMIT_DEVICE_APPROVAL: 429 with Retry-After, and nothing made', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_DEVICE_APPROVAL: '2/1h' } });
    try {
      const orgId = await seedOrganization(limited);
      await seedPolicy(limited, orgId, PolicyType.ResetPassword);
      const member = await memberOf(limited, orgId);
      await limited.database.db.updateTable('organization_users').set({ reset_password_key: '4.a2V5' }).where('id', '=', member.memberId).execute();
      const device = { deviceType: '9', deviceIdentifier: randomUUID(), deviceName: 'chrome' };
      const token = (await loginAccount(limited, member.account, device)).accessToken;
      const json = { email: member.account.email, publicKey: generateRsaKeyPair().publicKeyB64, deviceIdentifier: device.deviceIdentifier, accessCode: 'x'.repeat(25), type: 2 };
      const post = () => limited.request('POST', '/api/auth-requests/admin-request', { token, headers: WEB, json });
      expect((await post()).status).toBe(200);
      expect((await post()).status).toBe(200);
      const refused = await post();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.text).toMatch(/Too many device approval requests/);
      const rows = await limited.database.db.selectFrom('auth_requests').select('id').where('user_id', '=', member.userId).execute();
      expect(rows).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });
});

describe('access and bad input', () => {
  it('a custom member with manageResetPassword may answer; a plain user 403; a non-member 404', async () => {
    const org = await recoveryOrg();
    const recoverer = await org.withKey(Role.Custom, { manageResetPassword: true });
    const user = await memberOf(server, org.orgId);
    const outsider = (await recoveryOrg()).owner;
    const { id, member, device } = await asked(org);
    for (const [who, status] of [[user, 403], [outsider, 404]] as const) {
      expect((await server.request('GET', orgRequests(org.orgId), { token: who.accessToken })).status).toBe(status);
      expect((await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: who.accessToken, json: { requestApproved: false } })).status).toBe(status);
      expect((await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: who.accessToken, json: { ids: [id] } })).status).toBe(status);
      expect((await server.request('POST', orgRequests(org.orgId), { token: who.accessToken, json: [{ id, approved: false }] })).status).toBe(status);
    }
    expect((await row(id)).response_date).toBeNull();
    const key = await wrapForRequest(org, recoverer, member.memberId, device.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: recoverer.accessToken, json: { requestApproved: true, encryptedUserKey: key } })).status).toBe(200);
  });

  it("only those who may recover a member see and answer their request: an owner's an owner, an admin's an owner or admin", async () => {
    const org = await recoveryOrg();
    const recoverer = await org.withKey(Role.Custom, { manageResetPassword: true });
    const admin = await org.withKey(Role.Admin);
    const mailsFrom = server.logs.lines.length;
    const owners = await asked(org, Role.Owner);
    // Only those who may answer an owner's request are mailed about it.
    const ownersMail = server.logs.lines.slice(mailsFrom).filter((line) => line.includes('Review a device approval request')).join('\n');
    expect(ownersMail).toContain(org.owner.account.email);
    expect(ownersMail).not.toContain(admin.account.email);
    expect(ownersMail).not.toContain(recoverer.account.email);
    const admins = await asked(org, Role.Admin);
    const users = await asked(org);
    const listedBy = async (who: SeededMember) => ((await server.request('GET', orgRequests(org.orgId), { token: who.accessToken })).body.data as { id: string }[]).map((r) => r.id).sort();
    expect(await listedBy(org.owner)).toEqual([owners.id, admins.id, users.id].sort());
    expect(await listedBy(admin)).toEqual([admins.id, users.id].sort());
    expect(await listedBy(recoverer)).toEqual([users.id]);

    // Out of reach, a request is unknown: 404 alone, skipped in a batch; a junk key changes nothing.
    const junk = rsaEncryptToEncString(generateSymmetricKey().raw, owners.device.keys.publicKeyB64);
    for (const [who, hidden] of [[recoverer, [owners, admins]], [admin, [owners]]] as const) {
      for (const { id } of hidden) {
        expect((await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: who.accessToken, json: { requestApproved: true, encryptedUserKey: junk } })).status).toBe(404);
        expect((await server.request('POST', `${orgRequests(org.orgId)}/${id}`, { token: who.accessToken, json: { requestApproved: false } })).status).toBe(404);
        expect((await server.request('POST', orgRequests(org.orgId), { token: who.accessToken, json: [{ id, approved: true, key: junk }] })).status).toBe(200);
        expect((await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: who.accessToken, json: { ids: [id] } })).status).toBe(200);
        expect(await row(id)).toMatchObject({ approved: null, response_date: null, key: null });
      }
    }
    expect(pushes.sent).toEqual([]);
    expect(await eventsOf(EventType.OrganizationUser_ApprovedAuthRequest, org.orgId)).toEqual([]);
    expect(await eventsOf(EventType.OrganizationUser_RejectedAuthRequest, org.orgId)).toEqual([]);

    // Those who may answer do.
    const adminKey = await wrapForRequest(org, admin, admins.member.memberId, admins.device.keys.publicKeyB64);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/${admins.id}`, { token: admin.accessToken, json: { requestApproved: true, encryptedUserKey: adminKey } })).status).toBe(200);
    expect((await server.request('POST', `${orgRequests(org.orgId)}/deny`, { token: org.owner.accessToken, json: { ids: [owners.id] } })).status).toBe(200);
    expect((await row(owners.id)).approved).toBeFalsy();
    expect((await row(owners.id)).response_date).not.toBeNull();
  });

  it('asking: the wrong type, another email, no device type, no enrolled organization, none at all: 400 and nothing made', async () => {
    const org = await recoveryOrg();
    const member = await memberOf(server, org.orgId);
    const device = await newDevice(member);
    const count = async () => (await db().selectFrom('auth_requests').select('id').where('user_id', '=', member.userId).execute()).length;
    const loner = await memberOf(server, org.orgId);
    await db().deleteFrom('organization_users').where('id', '=', loner.memberId).execute();
    const lonerDevice = await newDevice(loner);
    const cases: [Promise<{ status: number; body: { message?: string; validationErrors?: Record<string, unknown> } }>, string | null][] = [
      [ask(member, device, { type: 0 }), ADMIN_REQUEST_TEXTS.wrongType],
      [ask(member, device, { email: org.owner.account.email }), AUTH_REQUEST_TEXTS.unknownUser],
      [ask(member, device, { deviceIdentifier: randomUUID() }), AUTH_REQUEST_TEXTS.unknownUser],
      [ask(member, device, {}, {}), AUTH_REQUEST_TEXTS.noDeviceType],
      [ask(member, device), ADMIN_REQUEST_TEXTS.notEnrolled],
      [ask(loner, lonerDevice), ADMIN_REQUEST_TEXTS.noOrganizations],
      [ask(member, device, { publicKey: undefined }), null],
      [ask(member, device, { accessCode: 'x'.repeat(26) }), null],
    ];
    for (const [pending, message] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      if (message) expect(res.body.message).toBe(message);
      else expect(Object.keys(res.body.validationErrors ?? {})).not.toEqual([]);
    }
    expect(await count()).toBe(0);
    expect((await server.request('POST', '/api/auth-requests/admin-request', { json: {} })).status).toBe(401);
    // A revoked membership asks no one either.
    await enroll(org, member);
    await db().updateTable('organization_users').set({ status: Status.Revoked }).where('id', '=', member.memberId).execute();
    expect((await ask(member, device)).body.message).toBe(ADMIN_REQUEST_TEXTS.notEnrolled);
    expect(await count()).toBe(0);
  });

  it('answering: a missing or malformed field is named, and nothing is written', async () => {
    const org = await recoveryOrg();
    const { id } = await asked(org);
    const post = (path: string, json: unknown) => server.request('POST', `${orgRequests(org.orgId)}${path}`, { token: org.owner.accessToken, json });
    const cases: [Promise<{ status: number; body: { validationErrors?: Record<string, unknown> } }>, string][] = [
      [post(`/${id}`, { encryptedUserKey: null }), 'requestApproved'],
      [post(`/${id}`, { requestApproved: 'yes' }), 'requestApproved'],
      [post(`/${id}`, { requestApproved: true }), 'encryptedUserKey'],
      [post(`/${id}`, { requestApproved: true, encryptedUserKey: 'not an encrypted string' }), 'encryptedUserKey'],
      [post('/deny', { ids: ['not-a-guid'] }), 'ids[0]'],
      [post('/deny', {}), 'ids'],
      [post('', [{ id, approved: true, key: 'nope' }]), '[0].key'],
      [post('', [{ id: 'nope', approved: false }]), '[0].id'],
      [post('', { id, approved: false }), ''],
    ];
    for (const [pending, field] of cases) {
      const res = await pending;
      expect(res.status, field).toBe(400);
      const fields = Object.keys(res.body.validationErrors ?? {});
      if (field) expect(fields.some((f) => f.toLowerCase().includes(field.toLowerCase())), `${field} in ${fields.join(', ')}`).toBe(true);
    }
    expect((await post(`/${randomUUID()}`, { requestApproved: false })).status).toBe(404);
    expect((await row(id)).response_date).toBeNull();
    expect(await eventsOf(EventType.OrganizationUser_RejectedAuthRequest, org.orgId)).toEqual([]);
  });
});

describe('approval from a trusted device, for a member signed in without a key', () => {
  it('the signed-in device asks as the clients do (type 0, anonymous), a trusted device approves, the asking device reads it with its token', async () => {
    const org = await recoveryOrg();
    const member = await memberOf(server, org.orgId);
    const device = await newDevice(member);
    // The 2025-2026 clients post it without a token (AuthRequestApiService: not authed), naming the device by header.
    const res = await server.request('POST', '/api/auth-requests', {
      headers: { ...WEB, 'device-identifier': device.deviceIdentifier },
      json: { email: member.account.email, publicKey: device.keys.publicKeyB64, deviceIdentifier: device.deviceIdentifier, accessCode: 'y'.repeat(25), type: 0 },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.body.id as string;
    // The trusted device (the member's first, TEST_DEVICE) sees it pending and approves it with the user key wrapped for the request.
    const pending = await server.request('GET', '/api/auth-requests/pending', { token: member.accessToken });
    expect(dataOf(pending.body).map((r) => r.id)).toEqual([id]);
    const key = rsaEncryptToEncString(member.account.userKey.raw, pending.body.data[0].publicKey);
    const approved = await server.request('PUT', `/api/auth-requests/${id}`, { token: member.accessToken, json: { key, deviceIdentifier: TEST_DEVICE.deviceIdentifier, requestApproved: true } });
    expect(approved.status, approved.text).toBe(200);
    const read = await server.request('GET', `/api/auth-requests/${id}`, { token: device.token });
    expect(read.body).toMatchObject({ requestApproved: true, masterPasswordHash: null });
    expect(rsaDecryptEncString(read.body.key, device.keys.privateKeyDer).equals(member.account.userKey.raw)).toBe(true);
  });
});
