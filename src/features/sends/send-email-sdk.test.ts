import { createRequire } from 'node:module';
import type * as SdkInternal from '@bitwarden/sdk-internal';
import type { SendAccessTokenRequest } from '@bitwarden/sdk-internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { textSendBody } from '../../../test/support/sends.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/**
 * The email-verified Send flow as the official clients run it: their SDK's SendAccessClient
 * (`@bitwarden/sdk-internal`, the WASM inside web, browser and desktop) asks Strongroom's identity
 * service for a token and parses each answer into the error kinds the apps switch on.
 */

let sdk: typeof SdkInternal;
let server: TestServer;
let sink: SmtpSink;
let alice: LoggedInUser;

beforeAll(async () => {
  sdk = createRequire(import.meta.url)('@bitwarden/sdk-internal') as typeof SdkInternal;
  sink = await startSmtpSink();
  server = await startTestServer({ env: sink.env });
  alice = await createUser(server, { email: 'sdk-send-owner@example.com' });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

describe('the official SDK on an email-verified Send', () => {
  it('is asked for an address, then a code, and gets a token for the mailed code', async () => {
    const deletionDate = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString();
    const created = await server.request('POST', '/api/sends', { token: alice.accessToken, json: textSendBody(deletionDate, { authType: 0, emails: 'sdk-reader@example.com' }) });
    expect(created.status, created.text).toBe(200);
    const sendId = created.body.accessId as string;

    const client = new sdk.PasswordManagerClient({ get_access_token: () => Promise.resolve(undefined) }, { identityUrl: `${server.baseUrl}/identity`, apiUrl: `${server.baseUrl}/api` }, new sdk.ManagedSettingsClient());
    try {
      const access = client.auth().send_access();
      const attempt = async (request: SendAccessTokenRequest) => {
        try {
          return { token: await access.request_send_access_token(request) };
        } catch (error) {
          return { error };
        }
      };
      const expected = (type: string) => ({ error: { kind: 'expected', data: expect.objectContaining({ error: 'invalid_request', send_access_error_type: type }) } });

      expect(await attempt({ sendId })).toEqual(expected('email_required'));
      expect(await attempt({ sendId, sendAccessCredentials: { email: 'sdk-reader@example.com' } })).toEqual(expected('email_and_otp_required'));
      const code = /verification code is (\d{6})/.exec((await sink.waitFor('sdk-reader@example.com')).text)?.[1] as string;
      const wrong = code === '000000' ? '111111' : '000000';
      expect(await attempt({ sendId, sendAccessCredentials: { email: 'sdk-reader@example.com', otp: wrong } })).toEqual(expected('email_and_otp_required'));

      const granted = await attempt({ sendId, sendAccessCredentials: { email: 'sdk-reader@example.com', otp: code } });
      expect(granted.token?.token, JSON.stringify(granted)).toEqual(expect.any(String));
      const opened = await server.request('POST', '/api/sends/access', { token: granted.token?.token as string });
      expect(opened.status, opened.text).toBe(200);
      expect(opened.body).toMatchObject({ id: sendId, authType: 0 });
    } finally {
      client.free();
    }
  });
});
