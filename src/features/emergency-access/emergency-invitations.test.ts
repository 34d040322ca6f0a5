import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, seedAccount, testAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/** With open registration off, an emergency contact's invitation link still lets them register, and nothing else does. */
let server: TestServer;
let sink: SmtpSink;
let grantor: LoggedInUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ env: { ...sink.env, REGISTRATION_ENABLED: 'false' } });
  grantor = await seedAccount(server, { email: 'ea-closed-grantor@example.com' });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const register = (email: string, extra: Record<string, unknown> = {}) =>
  server.request('POST', '/identity/accounts/register/finish', { json: registerFinishBody(testAccount(email), extra) });

describe('registering from an emergency access invitation', () => {
  it('opens closed registration to the invited address with its token and grant id only', async () => {
    const email = 'ea-newcomer@example.com';
    expect((await server.request('POST', '/api/emergency-access/invite', { token: grantor.accessToken, json: { email, type: 0, waitTimeDays: 2 } })).status).toBe(200);
    const mail = await sink.waitFor(email);
    const query = new URLSearchParams(/#\/accept-emergency\?(\S+)/.exec(mail.text)![1]);
    const id = query.get('id')!;
    const token = query.get('token')!;

    expect((await register(email)).body.message).toBe('Open registration has been disabled by the system administrator.');
    expect((await register(email, { acceptEmergencyAccessInviteToken: token, acceptEmergencyAccessId: randomUUID() })).status).toBe(400);
    expect((await register('ea-someone-else@example.com', { acceptEmergencyAccessInviteToken: token, acceptEmergencyAccessId: id })).status).toBe(400);

    const registered = await register(email, { acceptEmergencyAccessInviteToken: token, acceptEmergencyAccessId: id });
    expect(registered.status, registered.text).toBe(200);
    const grantee = await loginAccount(server, testAccount(email));
    expect((await server.request('POST', `/api/emergency-access/${id}/accept`, { token: grantee.accessToken, json: { token } })).status).toBe(200);
    // Accepted, the invitation no longer opens registration for that address.
    expect((await register('ea-newcomer-2@example.com', { acceptEmergencyAccessInviteToken: token, acceptEmergencyAccessId: id })).status).toBe(400);
  });
});
