import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, seedAccount, testAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/**
 * Registering from an emergency access invitation link: it never opens closed registration (as
 * on the official server); with registration open, the link's token must hold, and it verifies
 * the address.
 */
let open: TestServer;
let closed: TestServer;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await startSmtpSink();
  [open, closed] = await Promise.all([startTestServer({ env: { ...sink.env } }), startTestServer({ env: { ...sink.env, REGISTRATION_ENABLED: 'false' } })]);
});
afterAll(async () => {
  await Promise.all([open?.close(), closed?.close()]);
  await sink?.close();
});

const INVALID = 'Invalid accept emergency access invite token.';

const register = (server: TestServer, email: string, extra: Record<string, unknown> = {}) =>
  server.request('POST', '/identity/accounts/register/finish', { json: registerFinishBody(testAccount(email), extra) });

/** Invites `email` as `grantor` and answers the grant id and token of the mailed link. */
async function invite(server: TestServer, grantor: LoggedInUser, email: string): Promise<{ id: string; token: string }> {
  expect((await server.request('POST', '/api/emergency-access/invite', { token: grantor.accessToken, json: { email, type: 0, waitTimeDays: 2 } })).status).toBe(200);
  const mail = await sink.waitFor(email);
  const query = new URLSearchParams(/#\/accept-emergency\?(\S+)/.exec(mail.text)![1]);
  return { id: query.get('id')!, token: query.get('token')! };
}

describe('registering from an emergency access invitation', () => {
  it('does not open closed registration, even with a good token', async () => {
    const grantor = await seedAccount(closed, { email: 'ea-closed-grantor@example.com' });
    const email = 'ea-closed-newcomer@example.com';
    const link = await invite(closed, grantor, email);
    const refused = await register(closed, email, { acceptEmergencyAccessInviteToken: link.token, acceptEmergencyAccessId: link.id });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Open registration has been disabled by the system administrator.');
  });

  it('with open registration, takes only a token that holds, and verifies the address', async () => {
    const grantor = await seedAccount(open, { email: 'ea-open-grantor@example.com' });
    const email = 'ea-newcomer@example.com';
    const link = await invite(open, grantor, email);

    for (const [who, extra] of [
      [email, { acceptEmergencyAccessInviteToken: link.token, acceptEmergencyAccessId: randomUUID() }],
      [email, { acceptEmergencyAccessInviteToken: `${link.token}x`, acceptEmergencyAccessId: link.id }],
      ['ea-someone-else@example.com', { acceptEmergencyAccessInviteToken: link.token, acceptEmergencyAccessId: link.id }],
    ] as const) {
      const refused = await register(open, who, extra);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe(INVALID);
    }

    const registered = await register(open, email, { acceptEmergencyAccessInviteToken: link.token, acceptEmergencyAccessId: link.id });
    expect(registered.status, registered.text).toBe(200);
    const grantee = await loginAccount(open, testAccount(email));
    const profile = await open.request('GET', '/api/accounts/profile', { token: grantee.accessToken });
    expect(profile.body.emailVerified).toBe(true);
  });

  it('refuses the token of a grant the grantor removed', async () => {
    const grantor = await seedAccount(open, { email: 'ea-removed-grantor@example.com' });
    const email = 'ea-removed-newcomer@example.com';
    const link = await invite(open, grantor, email);
    expect((await open.request('DELETE', `/api/emergency-access/${link.id}`, { token: grantor.accessToken })).status).toBe(200);
    const refused = await register(open, email, { acceptEmergencyAccessInviteToken: link.token, acceptEmergencyAccessId: link.id });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(INVALID);
  });

  it('registers without the link as any open registration does, unverified', async () => {
    const email = 'ea-plain-newcomer@example.com';
    expect((await register(open, email)).status).toBe(200);
    const user = await loginAccount(open, testAccount(email));
    expect((await open.request('GET', '/api/accounts/profile', { token: user.accessToken })).body.emailVerified).toBe(false);
  });
});
