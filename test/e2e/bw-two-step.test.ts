import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/features/two-factor/totp.js';
import { loginAccount, registerAccount, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';

/**
 * The official `bw` client logging in with two-step login: an authenticator code
 * (`--method 0 --code`) and an emailed code (`--method 1`: the CLI asks the server to mail the
 * code, which is read from a local SMTP sink, then logs in with `--code`).
 */
let server: TestServer;
let sink: SmtpSink;
let bw: BwCli;
let user: LoggedInUser;
const PASSWORD = 'two step master password';
const EMAIL = 'two-step@example.com';

beforeAll(async () => {
  const tls = await createTestTls();
  sink = await startSmtpSink();
  server = await startTestServer({ tls, env: sink.env });
  user = await loginAccount(server, await registerAccount(server, { email: EMAIL, password: PASSWORD, derivation: 'real' }));
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
  await sink?.close();
});

const api = (method: string, path: string, json: unknown) => server.request(method, `/api${path}`, { token: user.accessToken, json });

describe('official bw client: two-step login', { timeout: 300_000 }, () => {
  it('logs in with an authenticator code, and with a code it had mailed', async () => {
    const read = await api('POST', '/two-factor/get-authenticator', { masterPasswordHash: user.account.masterPasswordHash });
    const key = String(read.body.authenticator.key);
    const on = await api('PUT', '/two-factor/authenticator', { key, token: await totpCode(key, new Date()), userVerificationToken: read.body.userVerificationToken });
    expect(on.status).toBe(200);

    // The step that turned the provider on is spent: type the next step's code (one step ahead is accepted).
    const totp = await totpCode(key, new Date(Date.now() + 30_000));
    const withTotp = await bw.run(['login', EMAIL, PASSWORD, '--method', '0', '--code', totp, '--raw']);
    expect(withTotp.code, withTotp.stderr).toBe(0);
    expect(withTotp.stdout.trim()).toMatch(/.{20,}/);
    bw.session = withTotp.stdout.trim();
    expect((await bw.status()).status).toBe('unlocked');
    expect((await bw.logout()).code).toBe(0);

    const email = await api('POST', '/two-factor/get-email', { masterPasswordHash: user.account.masterPasswordHash });
    const uvt = email.body.userVerificationToken as string;
    expect((await api('POST', '/two-factor/send-email', { email: EMAIL, userVerificationToken: uvt })).status).toBe(200);
    const setup = /^(\d{6})\r?$/m.exec((await sink.waitFor(EMAIL)).text)?.[1];
    expect((await api('PUT', '/two-factor/email', { email: EMAIL, token: setup, userVerificationToken: uvt })).status).toBe(200);

    // The CLI posts /two-factor/send-email-login itself before it would prompt for the code.
    // Without a code it cannot prompt here (BW_NOINTERACTION), and stops.
    const asks = await bw.run(['login', EMAIL, PASSWORD, '--method', '1', '--raw']);
    expect(asks.code).toBe(1);
    expect(asks.stderr + asks.stdout).toContain('Code is required.');
    const mailed = /^(\d{6})\r?$/m.exec((await sink.waitFor(EMAIL)).text)?.[1];
    expect(mailed).toMatch(/^\d{6}$/);
    const withEmail = await bw.run(['login', EMAIL, PASSWORD, '--method', '1', '--code', mailed ?? '', '--raw']);
    expect(withEmail.code, withEmail.stderr).toBe(0);
    bw.session = withEmail.stdout.trim();
    expect((await bw.status()).status).toBe('unlocked');
  });
});
