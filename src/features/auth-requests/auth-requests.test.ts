import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUser, loginAccount, passwordGrantForm, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { PushType } from '../../platform/push/pushes.js';
import { AUTH_REQUEST_TEXTS } from './auth-requests.service.js';

/** Log in with a device, end to end over HTTP: ask, approve, read the answer, log in once. */
const clock = testClock();
const recorder = recordingPushes();
let server: TestServer;
let user: LoggedInUser;
let stranger: LoggedInUser;
/** A second device of the user's, known because it logged in before (the official default accepts only known devices). */
const NEW_DEVICE = { deviceType: '9', deviceIdentifier: randomUUID(), deviceName: 'chrome' };
const PUBLIC_KEY = Buffer.from('a public key').toString('base64');
const APPROVAL_KEY = '4.aGVsbG8gd29ybGQ=';

/** Asks as the new device, a second after the previous request (the newest one per device is the one to approve). */
const ask = (overrides: Record<string, unknown> = {}, headers: Record<string, string> = { 'device-type': NEW_DEVICE.deviceType, 'device-identifier': NEW_DEVICE.deviceIdentifier }) => {
  clock.advance(1000);
  return server.request('POST', '/api/auth-requests', {
    headers,
    json: { email: user.account.email, publicKey: PUBLIC_KEY, deviceIdentifier: NEW_DEVICE.deviceIdentifier, accessCode: `code-${randomUUID().slice(0, 8)}`, type: 0, ...overrides },
  });
};

const answer = (token: string, id: string, body: Record<string, unknown>) =>
  server.request('PUT', `/api/auth-requests/${id}`, { token, json: { deviceIdentifier: TEST_DEVICE.deviceIdentifier, ...body } });

const approve = (id: string) => answer(user.accessToken, id, { requestApproved: true, key: APPROVAL_KEY });

const logIn = (id: string, accessCode: string) =>
  server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account, NEW_DEVICE), password: accessCode, authRequest: id } });

beforeAll(async () => {
  server = await startTestServer({ clock, pushes: recorder });
  user = await createUser(server);
  stranger = await createUser(server);
  await loginAccount(server, user.account, NEW_DEVICE);
});
afterAll(async () => server?.close());
beforeEach(() => recorder.clear());

describe('the whole flow', () => {
  it('asks anonymously, is approved by a logged-in device, reads the key by access code and logs in once', async () => {
    const accessCode = 'the-access-code';
    const asked = await ask({ accessCode });
    expect(asked.status, asked.text).toBe(200);
    const id = asked.body.id as string;
    expect(asked.body).toMatchObject({
      object: 'auth-request',
      publicKey: PUBLIC_KEY,
      requestDeviceIdentifier: NEW_DEVICE.deviceIdentifier,
      requestDeviceTypeValue: 9,
      requestDeviceType: 'Chrome',
      requestApproved: false,
      key: null,
      responseDate: null,
      origin: new URL(server.config.publicUrl).host,
    });
    // The user's devices are told; the asking device skips it by its ContextId.
    expect(recorder.sent).toEqual([{ type: PushType.AuthRequest, payload: { Id: id, UserId: user.userId }, contextId: NEW_DEVICE.deviceIdentifier, target: { user: user.userId } }]);

    // Not approved yet: the answer says so, and the access code does not log in.
    expect((await server.request('GET', `/api/auth-requests/${id}/response?code=${accessCode}`)).body).toMatchObject({ id, requestApproved: false, key: null });
    expect((await logIn(id, accessCode)).body).toMatchObject({ error: 'invalid_grant' });

    // The user sees it, pending, with the asking device's id.
    const all = await server.request('GET', '/api/auth-requests', { token: user.accessToken });
    expect((all.body.data as { id: string }[]).map((r) => r.id)).toContain(id);
    const pending = await server.request('GET', '/api/auth-requests/pending', { token: user.accessToken });
    const device = await server.database.db.selectFrom('devices').select('id').where('identifier', '=', NEW_DEVICE.deviceIdentifier).executeTakeFirstOrThrow();
    expect(pending.body.data).toEqual([expect.objectContaining({ id, requestDeviceId: device.id })]);
    expect((await server.request('GET', `/api/auth-requests/${id}`, { token: user.accessToken })).body).toMatchObject({ id, requestApproved: false });
    // The clients read the asking device's id from every answer, not only the pending list.
    expect(asked.body.requestDeviceId).toBe(device.id);
    expect((all.body.data as { id: string; requestDeviceId: string | null }[]).find((r) => r.id === id)?.requestDeviceId).toBe(device.id);
    expect((await server.request('GET', `/api/auth-requests/${id}`, { token: user.accessToken })).body.requestDeviceId).toBe(device.id);
    expect((await server.request('GET', `/api/auth-requests/${id}/response?code=${accessCode}`)).body.requestDeviceId).toBe(device.id);

    recorder.clear();
    const approved = await approve(id);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ id, requestApproved: true, key: APPROVAL_KEY });
    expect(approved.body.responseDate).toEqual(expect.any(String));
    expect(recorder.sent).toEqual([{ type: PushType.AuthRequestResponse, payload: { Id: id, UserId: user.userId }, contextId: TEST_DEVICE.deviceIdentifier, target: { authRequest: id } }]);
    expect((await server.request('GET', '/api/auth-requests/pending', { token: user.accessToken })).body.data).toEqual([]);

    const response = await server.request('GET', `/api/auth-requests/${id}/response?code=${accessCode}`);
    expect(response.body).toMatchObject({ id, requestApproved: true, key: APPROVAL_KEY });

    const token = await logIn(id, accessCode);
    expect(token.status, token.text).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', Key: user.account.encryptedUserKey });
    const again = await logIn(id, accessCode);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('refusals', () => {
  it('a wrong access code reads nothing and logs nobody in', async () => {
    const asked = await ask({ accessCode: 'right-code' });
    const id = asked.body.id as string;
    expect((await approve(id)).status).toBe(200);
    expect((await server.request('GET', `/api/auth-requests/${id}/response?code=wrong-code`)).status).toBe(404);
    expect((await server.request('GET', `/api/auth-requests/${randomUUID()}/response?code=right-code`)).status).toBe(404);
    expect((await server.request('GET', `/api/auth-requests/${id}/response`)).status).toBe(400);
    expect((await logIn(id, 'wrong-code')).body).toMatchObject({ error: 'invalid_grant' });
    expect((await logIn('not-a-guid', 'right-code')).body).toMatchObject({ error: 'invalid_grant' });
    // The right code still works afterwards: a failed attempt does not spend the request.
    expect((await logIn(id, 'right-code')).status).toBe(200);
  });

  it("another user's request answers 404, exactly like a missing one", async () => {
    const id = (await ask()).body.id as string;
    expect((await server.request('GET', `/api/auth-requests/${id}`, { token: stranger.accessToken })).status).toBe(404);
    expect((await answer(stranger.accessToken, id, { requestApproved: true, key: APPROVAL_KEY })).status).toBe(404);
    expect((await answer(stranger.accessToken, id, { requestApproved: false })).status).toBe(404);
    expect((await server.request('GET', '/api/auth-requests', { token: stranger.accessToken })).body.data).toEqual([]);
    expect((await server.request('GET', `/api/auth-requests/${randomUUID()}`, { token: user.accessToken })).status).toBe(404);
  });

  it('expires 15 minutes after it was made: no approval, no answer, no login', async () => {
    const accessCode = 'expiring';
    const late = (await ask({ accessCode })).body.id as string;
    const approvedInTime = (await ask({ accessCode, deviceIdentifier: NEW_DEVICE.deviceIdentifier })).body.id as string;
    expect((await approve(approvedInTime)).status).toBe(200);
    // Just inside the 15 minutes it is still readable; just after, it is gone for every purpose.
    clock.advance(15 * 60 * 1000 - 1000);
    expect((await server.request('GET', `/api/auth-requests/${approvedInTime}/response?code=${accessCode}`)).status).toBe(200);
    clock.advance(2000);
    // Approving checks first that it is the device's newest pending request (as officially), and an expired one is not pending.
    expect((await approve(late)).body.message).toBe(AUTH_REQUEST_TEXTS.notNewest);
    expect((await answer(user.accessToken, late, { requestApproved: false })).status).toBe(404);
    expect((await server.request('GET', `/api/auth-requests/${approvedInTime}/response?code=${accessCode}`)).status).toBe(404);
    expect((await logIn(approvedInTime, accessCode)).body).toMatchObject({ error: 'invalid_grant' });
    expect((await server.request('GET', '/api/auth-requests/pending', { token: user.accessToken })).body.data).toEqual([]);
  });

  it('one answer per request; only the newest request of a device can be approved', async () => {
    const older = (await ask()).body.id as string;
    const newer = (await ask()).body.id as string;
    expect((await approve(older)).body.message).toBe(AUTH_REQUEST_TEXTS.notNewest);
    expect((await approve(newer)).status).toBe(200);
    expect((await answer(user.accessToken, newer, { requestApproved: false })).body.message).toBe(AUTH_REQUEST_TEXTS.answered);
  });

  it('a denial is stored, not pushed to the asking device, and does not log in', async () => {
    const accessCode = 'denied-code';
    const id = (await ask({ accessCode })).body.id as string;
    recorder.clear();
    const denied = await answer(user.accessToken, id, { requestApproved: false, key: APPROVAL_KEY });
    expect(denied.status, denied.text).toBe(200);
    expect(denied.body).toMatchObject({ requestApproved: false, key: null });
    expect(recorder.sent).toEqual([]);
    expect((await server.request('GET', `/api/auth-requests/${id}/response?code=${accessCode}`)).body).toMatchObject({ requestApproved: false, key: null });
    expect((await logIn(id, accessCode)).body).toMatchObject({ error: 'invalid_grant' });
  });

  it('an unlock-only request (type 1) does not log in', async () => {
    const accessCode = 'unlock-code';
    const id = (await ask({ accessCode, type: 1 })).body.id as string;
    expect((await approve(id)).status).toBe(200);
    expect((await logIn(id, accessCode)).body).toMatchObject({ error: 'invalid_grant' });
  });

  it('bad input gets a clear 400 and writes nothing', async () => {
    const before = (await server.database.db.selectFrom('auth_requests').select('id').execute()).length;
    const cases: [Promise<{ status: number; body: { message?: string; validationErrors?: Record<string, unknown> } }>, string | null][] = [
      [ask({}, { 'device-identifier': NEW_DEVICE.deviceIdentifier }), AUTH_REQUEST_TEXTS.noDeviceType],
      [ask({ type: 2 }), AUTH_REQUEST_TEXTS.adminApproval],
      [ask({ email: 'nobody@example.com' }), AUTH_REQUEST_TEXTS.unknownUser],
      // A device the account never logged in from, under the official known-devices-only default.
      [ask({ deviceIdentifier: randomUUID() }), AUTH_REQUEST_TEXTS.unknownUser],
      [ask({ accessCode: 'x'.repeat(26) }), null],
      [ask({ publicKey: undefined }), null],
      [ask({ type: 7 }), null],
    ];
    for (const [pending, message] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      if (message) expect(res.body.message).toBe(message);
      else expect(Object.keys(res.body.validationErrors ?? {})).not.toEqual([]);
    }
    expect((await server.database.db.selectFrom('auth_requests').select('id').execute()).length).toBe(before);
    expect(recorder.sent).toEqual([]);

    const id = (await ask()).body.id as string;
    expect((await answer(user.accessToken, id, { requestApproved: true, deviceIdentifier: 'not-my-device', key: APPROVAL_KEY })).body.message).toBe(AUTH_REQUEST_TEXTS.invalidDevice);
    expect((await answer(user.accessToken, id, { requestApproved: true })).body.validationErrors).toHaveProperty('key');
    expect((await answer(user.accessToken, id, { requestApproved: true, key: 'not an encrypted string' })).body.validationErrors).toHaveProperty('key');
    expect((await answer(user.accessToken, id, { key: APPROVAL_KEY })).status).toBe(400);
    expect((await server.request('GET', `/api/auth-requests/${id}`, { token: user.accessToken })).body).toMatchObject({ requestApproved: false, responseDate: null });
  });

  it('needs a signed-in user to list, read and answer', async () => {
    const id = (await ask()).body.id as string;
    for (const [method, path] of [
      ['GET', '/api/auth-requests'],
      ['GET', '/api/auth-requests/pending'],
      ['GET', `/api/auth-requests/${id}`],
      ['PUT', `/api/auth-requests/${id}`],
    ] as const) {
      expect((await server.request(method, path, method === 'PUT' ? { json: { deviceIdentifier: 'x', requestApproved: true } } : {})).status, `${method} ${path}`).toBe(401);
    }
  });
});

describe('with AUTH_REQUESTS_KNOWN_DEVICES_ONLY=false', () => {
  it('a device the account never used may ask', async () => {
    const open = await startTestServer({ env: { AUTH_REQUESTS_KNOWN_DEVICES_ONLY: 'false' } });
    try {
      const someone = await createUser(open);
      const res = await open.request('POST', '/api/auth-requests', {
        headers: { 'device-type': '9' },
        json: { email: someone.account.email, publicKey: PUBLIC_KEY, deviceIdentifier: randomUUID(), accessCode: 'code', type: 0 },
      });
      expect(res.status, res.text).toBe(200);
    } finally {
      await open.close();
    }
  });
});
