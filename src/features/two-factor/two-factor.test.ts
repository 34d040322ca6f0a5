import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, passwordGrantForm, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { eventsOf } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { createMemoryStore } from '../rate-limits/limit-store.js';
import { CODE_TRIES, CodePurpose, createMailedCodes } from './mailed-codes.js';
import { totpCode } from './totp.js';

let server: TestServer;
let sink: SmtpSink;
const clock = testClock(new Date('2026-11-24T10:00:10Z'));
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ clock, env: { ...sink.env, PUBLIC_URL: 'https://vault.example.com', SERVER_NAME: 'Family Vault' } });
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const OTHER_DEVICE = { deviceType: '25', deviceIdentifier: 'b7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a', deviceName: 'linux' };

const api = (method: string, path: string, token: string | undefined, json?: unknown) =>
  server.request(method, `/api${path}`, { ...(token ? { token } : {}), ...(json !== undefined ? { json } : {}) });

const login = (user: LoggedInUser, extra: Record<string, string> = {}, device: Record<string, string> = TEST_DEVICE) =>
  server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account, device), ...extra } });

/** The 6-digit code on a line of its own in a mail's text part. */
async function mailedCode(to: string): Promise<{ code: string; text: string; raw: string }> {
  const mail = await sink.waitFor(to);
  const match = /^(\d{6})\r?$/m.exec(mail.text);
  if (!match?.[1]) throw new Error(`no code in mail:\n${mail.text}`);
  return { code: match[1], text: mail.text, raw: mail.raw };
}

/** Turns the authenticator on through the official routes; answers the key. */
async function enableAuthenticator(user: LoggedInUser): Promise<string> {
  const read = await api('POST', '/two-factor/get-authenticator', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
  expect(read.status).toBe(200);
  const key = String(read.body.authenticator.key);
  const put = await api('PUT', '/two-factor/authenticator', user.accessToken, { key, token: await totpCode(key, clock.now()), userVerificationToken: read.body.userVerificationToken });
  expect(put.status).toBe(200);
  // The code that turned the provider on cannot log in: move to the next time step.
  clock.advance(30_000);
  return key;
}

describe('authenticator app', () => {
  it('lists no provider, then reads a new key with a verification token after the master password', async () => {
    const user = await createUser(server);
    expect((await api('GET', '/two-factor', user.accessToken)).body).toEqual({ object: 'list', data: [], continuationToken: null });
    const wrong = await api('POST', '/two-factor/get-authenticator', user.accessToken, { masterPasswordHash: 'd3Jvbmc=' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ masterPasswordHash: ['User verification failed.'] });
    const read = await api('POST', '/two-factor/get-authenticator', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ object: 'twoFactorAuthenticator', enabled: false, authenticator: { enabled: false } });
    expect(read.body.authenticator.key).toMatch(/^[A-Z2-7]{32}$/);
    expect(typeof read.body.userVerificationToken).toBe('string');
    expect((await api('POST', '/two-factor/get-authenticator', undefined, {})).status).toBe(401);
  });

  it('turns on only with a current code for the key and a verification token of this key or the password', async () => {
    const user = await createUser(server);
    const read = await api('POST', '/two-factor/get-authenticator', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    const key = String(read.body.authenticator.key);
    const uvt = String(read.body.userVerificationToken);

    const badCode = await api('PUT', '/two-factor/authenticator', user.accessToken, { key, token: '000000', userVerificationToken: uvt });
    expect(badCode.status).toBe(400);
    expect(badCode.body.validationErrors).toEqual({ token: ['Invalid token.'] });
    // A token bound to another key does not verify.
    const otherKey = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const wrongKey = await api('PUT', '/two-factor/authenticator', user.accessToken, { key: otherKey, token: await totpCode(otherKey, clock.now()), userVerificationToken: uvt });
    expect(wrongKey.body.validationErrors).toEqual({ userVerificationToken: ['User verification failed.'] });
    const noProof = await api('PUT', '/two-factor/authenticator', user.accessToken, { key, token: await totpCode(key, clock.now()) });
    expect(noProof.body.validationErrors).toEqual({ masterPasswordHash: ['User verification failed.'] });
    const missing = await api('PUT', '/two-factor/authenticator', user.accessToken, { key });
    expect(missing.status).toBe(400);

    // Older clients: POST with the master password hash.
    const put = await api('POST', '/two-factor/authenticator', user.accessToken, { key, token: await totpCode(key, clock.now()), masterPasswordHash: user.account.masterPasswordHash });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ object: 'twoFactorAuthenticatorUpdate', authenticator: { enabled: true, key }, enabled: true, key });
    expect((await api('GET', '/two-factor', user.accessToken)).body.data).toEqual([{ object: 'twoFactorProvider', enabled: true, type: 0 }]);
    expect((await api('GET', '/accounts/profile', user.accessToken)).body.twoFactorEnabled).toBe(true);
    expect((await eventsOf(server, EventType.User_Updated2fa)).some((e) => e.user_id === user.userId)).toBe(true);
  });

  it('answers the official challenge, refuses wrong and replayed codes, and logs in once per code', async () => {
    const user = await createUser(server);
    const key = await enableAuthenticator(user);

    const challenge = await login(user);
    expect(challenge.status).toBe(400);
    expect(challenge.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'Two factor required.',
      TwoFactorProviders: ['0'],
      TwoFactorProviders2: { '0': null },
      MasterPasswordPolicy: { Object: 'masterPasswordPolicy' },
      ErrorModel: { Message: 'Two factor required.', Object: 'error' },
    });
    expect(challenge.body.access_token).toBeUndefined();

    const wrong = await login(user, { twoFactorToken: '123456', twoFactorProvider: '0' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.ErrorModel.Message).toBe('Two-step token is invalid. Try again.');
    expect((await eventsOf(server, EventType.User_FailedLogIn2fa)).filter((e) => e.user_id === user.userId)).toHaveLength(1);
    // A provider the user does not have is as wrong as a wrong code.
    expect((await login(user, { twoFactorToken: '123456', twoFactorProvider: '1' })).status).toBe(400);

    const code = await totpCode(key, clock.now());
    const ok = await login(user, { twoFactorToken: code, twoFactorProvider: '0' });
    expect(ok.status).toBe(200);
    expect(typeof ok.body.access_token).toBe('string');
    expect(ok.body.TwoFactorToken).toBeUndefined();
    const replay = await login(user, { twoFactorToken: code, twoFactorProvider: '0' });
    expect(replay.status).toBe(400);
    expect(replay.body.ErrorModel.Message).toBe('Two-step token is invalid. Try again.');

    // One step either side is accepted; two steps back is not.
    clock.advance(30_000);
    expect((await login(user, { twoFactorToken: await totpCode(key, new Date(clock.now().getTime() + 30_000)), twoFactorProvider: '0' })).status).toBe(200);
    clock.advance(90_000);
    expect((await login(user, { twoFactorToken: await totpCode(key, new Date(clock.now().getTime() - 60_000)), twoFactorProvider: '0' })).status).toBe(400);
  });

  it('counts wrong codes toward the login throttle', async () => {
    const throttled = await startTestServer({ clock, env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '3' } });
    try {
      const user = await createUser(throttled);
      const read = await throttled.request('POST', '/api/two-factor/get-authenticator', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
      const key = String(read.body.authenticator.key);
      const put = await throttled.request('PUT', '/api/two-factor/authenticator', {
        token: user.accessToken,
        json: { key, token: await totpCode(key, clock.now()), userVerificationToken: read.body.userVerificationToken },
      });
      expect(put.status).toBe(200);
      const form = passwordGrantForm(user.account);
      // Challenges do not count.
      for (let i = 0; i < 4; i++) expect((await throttled.request('POST', '/identity/connect/token', { form })).body.error_description).toBe('Two factor required.');
      for (let i = 0; i < 3; i++) expect((await throttled.request('POST', '/identity/connect/token', { form: { ...form, twoFactorToken: '000000', twoFactorProvider: '0' } })).status).toBe(400);
      const blocked = await throttled.request('POST', '/identity/connect/token', { form: { ...form, twoFactorToken: '000000', twoFactorProvider: '0' } });
      expect(blocked.status).toBe(429);
    } finally {
      await throttled.close();
    }
  });

  it('turns off with the verification token (DELETE) or the master password (PUT /two-factor/disable)', async () => {
    const user = await createUser(server);
    const key = await enableAuthenticator(user);
    const wrong = await api('DELETE', '/two-factor/authenticator', user.accessToken, { key, userVerificationToken: 'not-a-token' });
    expect(wrong.body.validationErrors).toEqual({ userVerificationToken: ['User verification failed.'] });
    const read = await api('POST', '/two-factor/get-authenticator', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(read.body.authenticator).toEqual({ enabled: true, key });
    const off = await api('DELETE', '/two-factor/authenticator', user.accessToken, { key, userVerificationToken: read.body.userVerificationToken });
    expect(off.status).toBe(204);
    expect((await api('GET', '/two-factor', user.accessToken)).body.data).toEqual([]);
    expect((await login(user)).status).toBe(200);
    expect((await eventsOf(server, EventType.User_Disabled2fa)).some((e) => e.user_id === user.userId)).toBe(true);

    await enableAuthenticator(user);
    const badType = await api('PUT', '/two-factor/disable', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash, type: 42 });
    expect(badType.status).toBe(400);
    const disabled = await api('PUT', '/two-factor/disable', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash, type: 0 });
    expect(disabled.body).toEqual({ object: 'twoFactorProvider', enabled: false, type: 0 });
    expect((await login(user)).status).toBe(200);
    // Turning off a provider the user does not have records nothing.
    const recorded = (await eventsOf(server, EventType.User_Disabled2fa)).filter((e) => e.user_id === user.userId).length;
    const again = await api('PUT', '/two-factor/disable', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash, type: 0 });
    expect(again.body).toEqual({ object: 'twoFactorProvider', enabled: false, type: 0 });
    expect((await eventsOf(server, EventType.User_Disabled2fa)).filter((e) => e.user_id === user.userId)).toHaveLength(recorded);
  });

  it('answers Duo and YubiKey as not offered', async () => {
    const user = await createUser(server);
    const res = await api('POST', '/two-factor/get-duo', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ type: ['Duo two-step login is not offered by this server.'] });
    expect((await api('PUT', '/two-factor/yubikey', user.accessToken, { key1: 'cccccccccccc' })).status).toBe(400);
  });
});

describe('remember this device', () => {
  it('answers a token bound to the device, ended by expiry and by a security-stamp change', async () => {
    const user = await createUser(server);
    const key = await enableAuthenticator(user);
    const first = await login(user, { twoFactorToken: await totpCode(key, clock.now()), twoFactorProvider: '0', twoFactorRemember: '1' });
    expect(first.status).toBe(200);
    const remember = String(first.body.TwoFactorToken);
    expect(remember.length).toBeGreaterThan(20);

    const again = await login(user, { twoFactorToken: remember, twoFactorProvider: '5' });
    expect(again.status).toBe(200);
    expect(again.body.TwoFactorToken).toBeUndefined();
    // Another device, or a made-up token: the challenge again, not a failure.
    const elsewhere = await login(user, { twoFactorToken: remember, twoFactorProvider: '5' }, OTHER_DEVICE);
    expect(elsewhere.body.error_description).toBe('Two factor required.');
    expect((await login(user, { twoFactorToken: 'made-up', twoFactorProvider: '5' })).body.error_description).toBe('Two factor required.');

    clock.advance(31 * 86_400_000);
    expect((await login(user, { twoFactorToken: remember, twoFactorProvider: '5' })).body.error_description).toBe('Two factor required.');

    const fresh = await login(user, { twoFactorToken: await totpCode(key, clock.now()), twoFactorProvider: '0', twoFactorRemember: '1' });
    const token = fresh.body.TwoFactorToken as string;
    expect((await login(user, { twoFactorToken: token, twoFactorProvider: '5' })).status).toBe(200);
    const stamp = await api('POST', '/accounts/security-stamp', fresh.body.access_token as string, { masterPasswordHash: user.account.masterPasswordHash });
    expect(stamp.status).toBe(200);
    expect((await login(user, { twoFactorToken: token, twoFactorProvider: '5' })).body.error_description).toBe('Two factor required.');
  });
});

describe('recovery code', () => {
  it('is shown once, turns two-step login off at login (provider 8) once, and is audited', async () => {
    const user = await createUser(server);
    await enableAuthenticator(user);
    const first = await api('POST', '/two-factor/get-recover', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(first.status).toBe(200);
    expect(first.body.object).toBe('twoFactorRecover');
    expect(first.body.code).toMatch(/^[A-Z0-9]{32}$/);
    // A second read makes a new code; the first stops working.
    const second = await api('POST', '/two-factor/get-recover', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(second.body.code).not.toBe(first.body.code);
    expect((await login(user, { twoFactorToken: first.body.code as string, twoFactorProvider: '8' })).status).toBe(400);

    const recovered = await login(user, { twoFactorToken: (second.body.code as string).toLowerCase(), twoFactorProvider: '8' });
    expect(recovered.status).toBe(200);
    expect((await api('GET', '/two-factor', user.accessToken)).body.data).toEqual([]);
    expect((await eventsOf(server, EventType.User_Recovered2fa)).filter((e) => e.user_id === user.userId)).toHaveLength(1);
    const notice = await sink.waitFor(user.account.email);
    expect(notice.text).toContain('two-step login is now off');

    await enableAuthenticator(user);
    expect((await login(user, { twoFactorToken: second.body.code as string, twoFactorProvider: '8' })).status).toBe(400);
  });

  it('POST /two-factor/recover takes email, password and code, and answers one refusal for anything wrong', async () => {
    const user = await createUser(server);
    await enableAuthenticator(user);
    const { code } = (await api('POST', '/two-factor/get-recover', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash })).body as { code: string };
    const recover = (body: object) => api('POST', '/two-factor/recover', undefined, body);
    for (const body of [
      { email: user.account.email, masterPasswordHash: user.account.masterPasswordHash, recoveryCode: 'WRONGWRONGWRONGWRONGWRONGWRONG12' },
      { email: user.account.email, masterPasswordHash: 'd3Jvbmc=', recoveryCode: code },
      { email: 'nobody@example.com', masterPasswordHash: user.account.masterPasswordHash, recoveryCode: code },
    ]) {
      const res = await recover(body);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Invalid information. Try again.');
    }
    expect((await recover({ email: user.account.email })).status).toBe(400);
    const ok = await recover({ email: user.account.email, masterPasswordHash: user.account.masterPasswordHash, recoveryCode: code });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
    expect((await login(user)).status).toBe(200);
    await sink.waitFor(user.account.email);
  });
});

describe('email codes', () => {
  it('sets up the provider with a code sent to the new address, then logs in with an emailed code once', async () => {
    const user = await createUser(server);
    const read = await api('POST', '/two-factor/get-email', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ object: 'twoFactorEmail', email: { enabled: false, email: null } });
    const uvt = String(read.body.userVerificationToken);
    const target = `codes.${user.userId.slice(0, 8)}@example.com`;

    expect((await api('POST', '/two-factor/send-email', user.accessToken, { email: 'not an email', userVerificationToken: uvt })).status).toBe(400);
    const sent = await api('POST', '/two-factor/send-email', user.accessToken, { email: target, userVerificationToken: uvt });
    expect(sent.status).toBe(200);
    const setup = await mailedCode(target);
    expect(setup.text).toContain('Family Vault');
    expect(setup.raw).toContain('text/html');

    // The code was sent to `target`: it does not set up another address.
    const other = await api('PUT', '/two-factor/email', user.accessToken, { email: 'else@example.com', token: setup.code, userVerificationToken: uvt });
    expect(other.body.validationErrors).toEqual({ token: ['Invalid token.'] });
    const put = await api('PUT', '/two-factor/email', user.accessToken, { email: target, token: setup.code, userVerificationToken: uvt });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ object: 'twoFactorEmailUpdate', email: { enabled: true, email: target } });

    const challenge = await login(user);
    expect(challenge.body.TwoFactorProviders).toEqual(['1']);
    expect(challenge.body.TwoFactorProviders2['1'].Email).toMatch(/^co\*+@example\.com$/);
    expect(challenge.body.Email).toBe(user.account.email);

    const sendLogin = (body: object) => api('POST', '/two-factor/send-email-login', undefined, body);
    for (const body of [
      { email: user.account.email, masterPasswordHash: 'd3Jvbmc=' },
      { email: 'nobody@example.com', masterPasswordHash: user.account.masterPasswordHash },
    ]) {
      const refused = await sendLogin(body);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe('Cannot send two-factor email.');
    }
    expect((await sendLogin({ email: user.account.email, masterPasswordHash: user.account.masterPasswordHash })).status).toBe(200);
    const { code } = await mailedCode(target);

    expect((await login(user, { twoFactorToken: '000000', twoFactorProvider: '1' })).status).toBe(400);
    expect((await login(user, { twoFactorToken: code, twoFactorProvider: '1' })).status).toBe(200);
    expect((await login(user, { twoFactorToken: code, twoFactorProvider: '1' })).status).toBe(400);

    // Codes expire after ten minutes.
    await sendLogin({ email: user.account.email, masterPasswordHash: user.account.masterPasswordHash });
    const late = await mailedCode(target);
    clock.advance(11 * 60_000);
    expect((await login(user, { twoFactorToken: late.code, twoFactorProvider: '1' })).status).toBe(400);

    // A user without the email provider gets the same refusal.
    const plain = await createUser(server);
    expect((await sendLogin({ email: plain.account.email, masterPasswordHash: plain.account.masterPasswordHash })).body.message).toBe('Cannot send two-factor email.');

    const off = await api('DELETE', '/two-factor/email', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    expect(off.status).toBe(204);
    expect((await login(user)).status).toBe(200);
  });

  it('ends a code after five wrong tries and sends at most five codes per account in ten minutes', async () => {
    const user = await createUser(server);
    const read = await api('POST', '/two-factor/get-email', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    const uvt = String(read.body.userVerificationToken);
    const target = `tries.${user.userId.slice(0, 8)}@example.com`;
    await api('POST', '/two-factor/send-email', user.accessToken, { email: target, userVerificationToken: uvt });
    const { code } = await mailedCode(target);
    for (let i = 0; i < 5; i++) await api('PUT', '/two-factor/email', user.accessToken, { email: target, token: '000000', userVerificationToken: uvt });
    expect((await api('PUT', '/two-factor/email', user.accessToken, { email: target, token: code, userVerificationToken: uvt })).status).toBe(400);

    for (let i = 0; i < 4; i++) expect((await api('POST', '/two-factor/send-email', user.accessToken, { email: target, userVerificationToken: uvt })).status).toBe(200);
    const limited = await api('POST', '/two-factor/send-email', user.accessToken, { email: target, userVerificationToken: uvt });
    expect(limited.status).toBe(400);
    expect(limited.body.message).toMatch(/Too many codes/);
    for (let i = 0; i < 4; i++) await sink.waitFor(target);
  });

  it('checks at most five of many wrong codes sent at once', async () => {
    const user = await createUser(server);
    const read = await api('POST', '/two-factor/get-email', user.accessToken, { masterPasswordHash: user.account.masterPasswordHash });
    const uvt = String(read.body.userVerificationToken);
    const target = `race.${user.userId.slice(0, 8)}@example.com`;
    await api('POST', '/two-factor/send-email', user.accessToken, { email: target, userVerificationToken: uvt });
    const { code } = await mailedCode(target);
    const wrong = code === '000000' ? '111111' : '000000';
    // Straight to the service: HTTP requests of one test client rarely overlap enough to race.
    const unusedMailer = { enabled: false, send: async () => undefined, check: async () => undefined };
    const codes = createMailedCodes({ db: server.database.db, clock, mailer: unusedMailer, brand: { serverName: 'x', publicUrl: 'https://x' }, limits: createMemoryStore({ maxKeys: 10 }) });
    const answers = await Promise.all(Array.from({ length: 3 * CODE_TRIES }, () => codes.use(user.userId, CodePurpose.TwoFactorSetup, wrong, target)));
    expect(answers).toEqual(answers.map(() => false));
    // Each check spends a try first, so the count stops at the limit (or the spent code is gone).
    const row = await server.database.db.selectFrom('one_time_codes').select('attempts').where('user_id', '=', user.userId).executeTakeFirst();
    expect([undefined, CODE_TRIES]).toContain(row?.attempts);
    expect((await api('PUT', '/two-factor/email', user.accessToken, { email: target, token: code, userVerificationToken: uvt })).status).toBe(400);
  });
});
