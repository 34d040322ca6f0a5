import { afterEach, describe, expect, it } from 'vitest';
import { loginAccount, testAccount } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer | undefined;
let sink: SmtpSink | undefined;
afterEach(async () => {
  await server?.close();
  await sink?.close();
  server = undefined;
  sink = undefined;
});

const PUBLIC_URL = 'https://vault.example.com';
const EXPIRED = 'Expired link. Please restart registration or try logging in. You may already have an account';
const send = (s: TestServer, email: string) => s.request('POST', '/identity/accounts/register/send-verification-email', { json: { email, name: 'Jo', receiveMarketingEmails: false } });
const clicked = (s: TestServer, email: string, emailVerificationToken: string) =>
  s.request('POST', '/identity/accounts/register/verification-email-clicked', { json: { email, emailVerificationToken } });

/** The link of a registration mail, parsed. */
function linkOf(text: string): URL {
  const match = /(https:\/\/vault\.example\.com\/#\/finish-signup\?\S+)/.exec(text);
  if (!match?.[1]) throw new Error(`no finish-signup link in mail:\n${text}`);
  return new URL(match[1]);
}

describe('registration by email verification', () => {
  it('with SMTP mails the finish-signup link and answers 204 with no body', async () => {
    sink = await startSmtpSink();
    server = await startTestServer({ env: { ...sink.env, PUBLIC_URL } });
    const account = testAccount('Jo+Vault@Example.com');
    const start = await send(server, account.email);
    expect(start.status).toBe(204);
    expect(start.text).toBe('');

    const mail = await sink.waitFor('jo+vault@example.com');
    const link = linkOf(mail.text);
    expect(link.origin + link.pathname).toBe(`${PUBLIC_URL}/`);
    const params = new URLSearchParams(link.hash.replace(/^#\/finish-signup\?/, ''));
    expect(params.get('email')).toBe('jo+vault@example.com');
    expect(params.get('fromEmail')).toBe('true');
    const token = params.get('token') ?? '';
    expect(token).not.toBe('');

    expect((await clicked(server, account.email, token)).status).toBe(200);
    const otherEmail = await clicked(server, 'someone@example.com', token);
    expect(otherEmail.status).toBe(400);
    expect(otherEmail.body.message).toBe(EXPIRED);

    // The web vault's finish form sends no name: the one given at the start comes from the token.
    const body: Record<string, unknown> = { ...registerFinishBody(account), emailVerificationToken: token };
    delete body.name;
    const finish = await server.request('POST', '/identity/accounts/register/finish', { json: body });
    expect(finish.status).toBe(200);
    expect((await server.database.db.selectFrom('users').select('name').executeTakeFirstOrThrow()).name).toBe('Jo');
    await loginAccount(server, account);

    // A spent link, and a second start for an address that now has an account: no mail, same answer.
    expect((await clicked(server, account.email, token)).body.message).toBe(EXPIRED);
    const again = await send(server, account.email);
    expect(again.status).toBe(204);
    // The route answers only after the mail server took a message (it answers 502 otherwise), and
    // the sink holds each message before it acknowledges it: a second mail would be here by now.
    expect(sink.messages).toHaveLength(1);
  });

  it('without SMTP answers the token, which the link check accepts', async () => {
    server = await startTestServer({ env: { PUBLIC_URL } });
    const start = await send(server, 'kim@example.com');
    expect(start.status).toBe(200);
    expect(typeof start.body).toBe('string');
    expect((await clicked(server, 'kim@example.com', start.body)).status).toBe(200);
    const bad = await clicked(server, 'kim@example.com', `${start.body}x`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe(EXPIRED);
    const missing = await server.request('POST', '/identity/accounts/register/verification-email-clicked', { json: { email: 'kim@example.com' } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('emailVerificationToken');
  });

  it('answers 502 when the mail server refuses, so the user knows no mail is coming', async () => {
    const closed = await startSmtpSink();
    const env = { ...closed.env, PUBLIC_URL };
    await closed.close();
    server = await startTestServer({ env });
    const start = await send(server, 'lee@example.com');
    expect(start.status).toBe(502);
    expect(start.body.message).toMatch(/mail server did not accept/);
  });
});
