import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, passwordGrantForm, registerAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let strict: TestServer;
let sink: SmtpSink;
const clock = testClock(new Date('2026-11-24T10:00:00Z'));
const PUBLIC_URL = 'https://vault.example.com';
const OTHER_DEVICE = { deviceType: '9', deviceIdentifier: 'c7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a', deviceName: 'chrome' };

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ clock, env: { ...sink.env, PUBLIC_URL } });
  strict = await startTestServer({ clock, env: { ...sink.env, PUBLIC_URL, REQUIRE_VERIFIED_EMAIL: 'true', NEW_DEVICE_VERIFICATION: 'true' } });
});
afterAll(async () => {
  await server.close();
  await strict.close();
  await sink.close();
});

const api = (s: TestServer, path: string, token: string | undefined, json?: unknown) => s.request('POST', `/api${path}`, { ...(token ? { token } : {}), ...(json !== undefined ? { json } : {}) });
const mailsTo = (to: string) => sink.messages.filter((m) => m.to.includes(to));
const codeOf = (text: string) => /^(\d{6})\r?$/m.exec(text)?.[1] ?? '';
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** The verify-email link's query, from the mail's text part. */
function verifyLinkOf(text: string): URLSearchParams {
  const match = /https:\/\/vault\.example\.com\/#\/verify-email\?(\S+)/.exec(text);
  if (!match?.[1]) throw new Error(`no verify-email link in:\n${text}`);
  return new URLSearchParams(match[1]);
}

describe('email verification', () => {
  it('mails a link whose token verifies the address once, shown in the profile', async () => {
    const user = await createUser(server);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).body.emailVerified).toBe(false);
    expect((await api(server, '/accounts/verify-email', undefined)).status).toBe(401);
    expect((await api(server, '/accounts/verify-email', user.accessToken)).status).toBe(200);
    const mail = await sink.waitFor(user.account.email);
    expect(mail.raw).toContain('text/html');
    const link = verifyLinkOf(mail.text);
    expect(link.get('userId')).toBe(user.userId);

    const wrong = await api(server, '/accounts/verify-email-token', undefined, { userId: user.userId, token: 'nope' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ token: ['Invalid token.'] });
    const otherUser = await createUser(server);
    expect((await api(server, '/accounts/verify-email-token', undefined, { userId: otherUser.userId, token: link.get('token') })).status).toBe(400);
    expect((await api(server, '/accounts/verify-email-token', undefined, { userId: user.userId })).status).toBe(400);

    expect((await api(server, '/accounts/verify-email-token', undefined, { userId: user.userId, token: link.get('token') })).status).toBe(200);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).body.emailVerified).toBe(true);
    const again = await api(server, '/accounts/verify-email', user.accessToken);
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('Email is already verified.');
  });

  it('with REQUIRE_VERIFIED_EMAIL refuses password logins until the mailed link is opened', async () => {
    const account = await registerAccount(strict);
    const refused = await strict.request('POST', '/identity/connect/token', { form: passwordGrantForm(account) });
    expect(refused.status).toBe(400);
    expect(refused.body.ErrorModel.Message).toMatch(/email address is not verified/);
    const link = verifyLinkOf((await sink.waitFor(account.email)).text);
    expect((await api(strict, '/accounts/verify-email-token', undefined, { userId: link.get('userId'), token: link.get('token') })).status).toBe(200);
    expect((await strict.request('POST', '/identity/connect/token', { form: passwordGrantForm(account) })).status).toBe(200);
  });
});

describe('password hint', () => {
  it('answers the same for known and unknown addresses and mails only the account, at most three times an hour', async () => {
    const account = await registerAccount(server);
    await server.database.db.updateTable('users').set({ master_password_hint: 'the <blue> door' }).where('email', '=', account.email).execute();
    const known = await api(server, '/accounts/password-hint', undefined, { email: account.email.toUpperCase() });
    const unknown = await api(server, '/accounts/password-hint', undefined, { email: 'nobody-here@example.com' });
    expect([known.status, known.text]).toEqual([200, '']);
    expect([unknown.status, unknown.text]).toEqual([known.status, known.text]);
    const mail = await sink.waitFor(account.email);
    expect(mail.text).toContain('the <blue> door');
    expect(mail.raw).toContain('the &lt;blue&gt; door');

    for (let i = 0; i < 3; i++) expect((await api(server, '/accounts/password-hint', undefined, { email: account.email })).status).toBe(200);
    await settle();
    expect(mailsTo(account.email)).toHaveLength(3);
    expect(mailsTo('nobody-here@example.com')).toHaveLength(0);
    expect((await api(server, '/accounts/password-hint', undefined, { email: 'not an address' })).status).toBe(400);
  });
});

describe('change of email', () => {
  it('sends a code to the new address and changes email, hash and key with it, ending every session', async () => {
    const user = await createUser(server);
    const taken = await createUser(server);
    const newEmail = `moved.${user.userId.slice(0, 8)}@example.com`;
    const wrong = await api(server, '/accounts/email-token', user.accessToken, { newEmail, masterPasswordHash: 'd3Jvbmc=' });
    expect(wrong.body.validationErrors).toEqual({ masterPasswordHash: ['Invalid password.'] });
    // An address with an account: the same answer, and no code.
    expect((await api(server, '/accounts/email-token', user.accessToken, { newEmail: taken.account.email, masterPasswordHash: user.account.masterPasswordHash })).status).toBe(200);
    expect((await api(server, '/accounts/email-token', user.accessToken, { newEmail, masterPasswordHash: user.account.masterPasswordHash })).status).toBe(200);
    const code = codeOf((await sink.waitFor(newEmail)).text);
    expect(mailsTo(taken.account.email)).toHaveLength(0);

    const row = await server.database.db.selectFrom('users').select(['key']).where('id', '=', user.userId).executeTakeFirstOrThrow();
    const body = { newEmail, masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: 'bmV3IGhhc2g=', key: row.key, token: code };
    expect((await api(server, '/accounts/email', user.accessToken, { ...body, token: '000000' })).body.validationErrors).toEqual({ token: ['Invalid token.'] });
    expect((await api(server, '/accounts/email', user.accessToken, { ...body, key: 'not encrypted' })).body.validationErrors).toEqual({ key: ['The key field is not a valid encrypted string.'] });
    expect((await api(server, '/accounts/email', user.accessToken, body)).status).toBe(200);
    expect((await api(server, '/accounts/email', user.accessToken, body)).status).toBe(401);
    expect((await sink.waitFor(user.account.email)).text).toContain(newEmail);

    const login = await server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account), username: newEmail, password: 'bmV3IGhhc2g=' } });
    expect(login.status).toBe(200);
    const profile = await server.request('GET', '/api/accounts/profile', { token: login.body.access_token as string });
    expect(profile.body).toMatchObject({ email: newEmail, emailVerified: true });
  });
});

describe('new devices', () => {
  it('mails a notice on a login from a device the account never used, not in its first ten minutes', async () => {
    const user = await createUser(server);
    await loginAccount(server, user.account, OTHER_DEVICE);
    clock.advance(11 * 60_000);
    await loginAccount(server, user.account, TEST_DEVICE);
    await settle();
    expect(mailsTo(user.account.email)).toHaveLength(0);
    await loginAccount(server, user.account, { ...OTHER_DEVICE, deviceIdentifier: 'd7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a' });
    const mail = await sink.waitFor(user.account.email);
    expect(mail.text).toContain('new device: Chrome (chrome)');
  });

  it('with NEW_DEVICE_VERIFICATION asks accounts without two-step login for a mailed code on a new device', async () => {
    const account = await registerAccount(strict);
    await strict.database.db.updateTable('users').set({ email_verified: true }).where('email', '=', account.email).execute();
    const user: LoggedInUser = await loginAccount(strict, account);
    clock.advance(25 * 3_600_000);
    const form = passwordGrantForm(account, OTHER_DEVICE);
    const asked = await strict.request('POST', '/identity/connect/token', { form });
    expect(asked.status).toBe(400);
    expect(asked.body).toMatchObject({ error: 'device_error', error_description: 'New device verification required', ErrorModel: { Message: 'new device verification required' } });
    const code = codeOf((await sink.waitFor(account.email)).text);
    const wrong = await strict.request('POST', '/identity/connect/token', { form: { ...form, newDeviceOtp: '000000' } });
    expect(wrong.body).toMatchObject({ error: 'device_error', error_description: 'Invalid New Device OTP' });
    expect((await strict.request('POST', '/identity/connect/token', { form: { ...form, newDeviceOtp: code } })).status).toBe(200);
    // The known device is not asked.
    expect((await strict.request('POST', '/identity/connect/token', { form: passwordGrantForm(account) })).status).toBe(200);
    // The verified device is now one of the account's, so it is not asked again.
    const devices = await strict.database.db.selectFrom('devices').select('identifier').where('user_id', '=', user.userId).execute();
    expect(devices.map((d) => d.identifier)).toContain(OTHER_DEVICE.deviceIdentifier);
    expect((await strict.request('POST', '/identity/connect/token', { form })).status).toBe(200);
  });
});
