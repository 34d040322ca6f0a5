import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let sink: SmtpSink;
const clock = testClock(new Date('2026-11-30T08:00:00Z'));

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ clock, env: { ...sink.env, SERVER_NAME: 'Strongroom Test' } });
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const post = (path: string, who: LoggedInUser | null, json?: unknown) =>
  server.request('POST', `/api${path}`, { ...(who ? { token: who.accessToken } : {}), ...(json !== undefined ? { json } : {}) });
const codeOf = (text: string) => /^(\d{6})\r?$/m.exec(text)?.[1] ?? '';

/** An account as SSO with trusted devices leaves it: no master password (cleared in the database), its session kept. */
async function withoutMasterPassword(): Promise<LoggedInUser> {
  const user = await seedAccount(server);
  await server.database.db.updateTable('users').set({ master_password_hash: null, key: null }).where('id', '=', user.userId).execute();
  return user;
}

async function mailedCode(who: LoggedInUser): Promise<string> {
  expect((await post('/accounts/request-otp', who)).status).toBe(200);
  const mail = await sink.waitFor(who.account.email);
  expect(mail.text).toContain('Subject: Your Strongroom Test verification code');
  const code = codeOf(mail.text);
  expect(code).toMatch(/^\d{6}$/);
  return code;
}

describe('POST /accounts/request-otp and /accounts/verify-otp', () => {
  it('mail a code that verify-otp checks without spending, and that verifies the user once where a secret is asked', async () => {
    const who = await withoutMasterPassword();
    const code = await mailedCode(who);
    const wrong = await post('/accounts/verify-otp', who, { otp: code === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ otp: ['Invalid token.'] });
    expect((await post('/accounts/verify-otp', who, { otp: code })).status).toBe(200);
    expect((await post('/accounts/verify-otp', who, { otp: ` ${code} ` })).status).toBe(200);

    // The client then sends the code with the request it verifies: the API key, here.
    const key = await post('/accounts/api-key', who, { otp: code });
    expect(key.status).toBe(200);
    const { api_key } = await server.database.db.selectFrom('users').select('api_key').where('id', '=', who.userId).executeTakeFirstOrThrow();
    expect(key.body.apiKey).toBe(api_key);
    // Used once: gone for the next request and for verify-otp.
    expect((await post('/accounts/rotate-api-key', who, { otp: code })).status).toBe(400);
    expect((await post('/accounts/verify-otp', who, { otp: code })).status).toBe(400);
  });

  it('let an account without a master password delete itself with a code, and never with an empty secret', async () => {
    const who = await withoutMasterPassword();
    expect((await server.request('DELETE', '/api/accounts', { token: who.accessToken, json: {} })).status).toBe(400);
    expect((await server.request('DELETE', '/api/accounts', { token: who.accessToken, json: { masterPasswordHash: '' } })).status).toBe(400);
    const code = await mailedCode(who);
    expect((await server.request('DELETE', '/api/accounts', { token: who.accessToken, json: { otp: code } })).status).toBe(200);
    expect(await server.database.db.selectFrom('users').select('id').where('id', '=', who.userId).execute()).toEqual([]);
  });

  it('accept a code beside a master password too, as officially, but not where only the master password will do', async () => {
    const who = await seedAccount(server);
    const code = await mailedCode(who);
    // Checking the master password itself (the export dialog) takes no code.
    expect((await post('/accounts/verify-password', who, { masterPasswordHash: code })).status).toBe(400);
    expect((await post('/accounts/security-stamp', who, { otp: code })).status).toBe(200);
  });

  it('verify the user of update-trust, once', async () => {
    const who = await withoutMasterPassword();
    const code = await mailedCode(who);
    const keys = { encryptedUserKey: '4.cmVzZXQ=', encryptedPublicKey: '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' };
    expect((await post('/devices/update-trust', who, { otp: code, currentDevice: keys, otherDevices: [] })).status).toBe(200);
    expect((await post('/devices/update-trust', who, { otp: code, currentDevice: keys, otherDevices: [] })).status).toBe(400);
  });

  it('stay unspent when update-trust refuses the device before checking the code', async () => {
    const who = await withoutMasterPassword();
    const code = await mailedCode(who);
    // The session's own device, removed: update-trust cannot re-wrap for it.
    const device = await server.database.db.selectFrom('devices').select('id').where('user_id', '=', who.userId).executeTakeFirstOrThrow();
    expect((await post(`/devices/${device.id}/deactivate`, who)).status).toBe(200);
    const keys = { encryptedUserKey: '4.cmVzZXQ=', encryptedPublicKey: '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' };
    expect((await post('/devices/update-trust', who, { otp: code, currentDevice: keys, otherDevices: [] })).status).toBe(404);
    expect((await post('/accounts/verify-otp', who, { otp: code })).status).toBe(200);
  });

  it('expire a code after ten minutes', async () => {
    const who = await withoutMasterPassword();
    const code = await mailedCode(who);
    clock.advance(10 * 60_000 + 1000);
    expect((await post('/accounts/verify-otp', who, { otp: code })).status).toBe(400);
    expect((await post('/accounts/api-key', who, { otp: code })).status).toBe(400);
  });

  it('forget a code after five wrong tries', async () => {
    const who = await withoutMasterPassword();
    const code = await mailedCode(who);
    const wrong = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) expect((await post('/accounts/verify-otp', who, { otp: wrong })).status).toBe(400);
    expect((await post('/accounts/verify-otp', who, { otp: code })).status).toBe(400);
  });

  it('need a signed-in user and an otp', async () => {
    expect((await post('/accounts/request-otp', null)).status).toBe(401);
    expect((await post('/accounts/verify-otp', null, { otp: '123456' })).status).toBe(401);
    const who = await withoutMasterPassword();
    const missing = await post('/accounts/verify-otp', who, {});
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.validationErrors)).toEqual(['otp']);
  });
});
