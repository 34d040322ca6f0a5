import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { fileSendBody, textSendBody } from '../../../test/support/sends.js';

/**
 * Send rules an independent probe found loose (issue #36, defect 7): Sends with `emails` created
 * open to anyone (now email-verified), and access tokens that outlived a new password. Download URLs: send-downloads.test.ts.
 */

const HASH = 'c2VuZC1wYXNzd29yZC1oYXNoLWZyb20tdGhlLWNsaWVudA==';
const OTHER_HASH = 'YW5vdGhlci1zZW5kLXBhc3N3b3JkLWhhc2g=';
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;

const clock = testClock();
let server: TestServer;
let alice: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer({ clock, env: { SEND_ACCESS_PER_MINUTE: '10000' } });
  alice = await createUser(server, { email: 'send-rules@example.com' });
});
afterAll(async () => {
  await server?.close();
});

const soon = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
const textSend = (overrides: Record<string, unknown> = {}) => textSendBody(soon(7 * DAY), overrides);
const fileSend = (size: number, overrides: Record<string, unknown> = {}) => fileSendBody(soon(7 * DAY), size, overrides);

const owner = (method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: alice.accessToken, ...(json === undefined ? {} : { json }) });
/** A Send access token from the identity service, as the current clients ask for one. */
const grant = async (accessId: string, password?: string) => {
  const res = await server.request('POST', '/identity/connect/token', {
    form: { grant_type: 'send_access', client_id: 'send', scope: 'api.send.access', send_id: accessId, ...(password ? { password_hash_b64: password } : {}) },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.access_token as string;
};
const open = (token: string) => server.request('POST', '/api/sends/access', { token });

async function createText(overrides: Record<string, unknown> = {}) {
  const res = await owner('POST', '/sends', textSend(overrides));
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; accessId: string };
}

describe('Sends with emails', () => {
  it('are never open to anyone: addresses without authType make them email-verified (send-email-access.test.ts)', async () => {
    for (const overrides of [{ authType: null }, { authType: undefined }, { authType: 0 }]) {
      const res = await owner('POST', '/sends', textSend({ emails: 'friend@example.com', ...overrides }));
      expect(res.status, `${JSON.stringify(overrides)}: ${res.text}`).toBe(200);
      expect(res.body).toMatchObject({ authType: 0, emails: 'friend@example.com' });
      const refused = await server.request('POST', '/identity/connect/token', {
        form: { grant_type: 'send_access', client_id: 'send', scope: 'api.send.access', send_id: res.body.accessId as string },
      });
      expect(refused.body).toMatchObject({ error: 'invalid_request', send_access_error_type: 'email_required' });
      expect((await server.request('POST', `/api/sends/access/${res.body.accessId as string}`, { json: {} })).status).toBe(400);
    }
    const file = await owner('POST', '/sends/file/v2', fileSend(10, { emails: 'friend@example.com', authType: null }));
    expect(file.body.sendResponse).toMatchObject({ authType: 0, emails: 'friend@example.com' });
  });

  it('are taken when emails holds no address, as the official server reads it', async () => {
    for (const emails of ['', ' , ', null]) {
      const res = await owner('POST', '/sends', textSend({ emails, authType: null }));
      expect(res.status, `${JSON.stringify(emails)}: ${res.text}`).toBe(200);
      expect(res.body.authType).toBe(2);
    }
  });
});

describe('Send access tokens', () => {
  it('stop working as soon as the owner adds, changes or removes the password', async () => {
    const send = await createText();
    const before = await grant(send.accessId);
    expect((await open(before)).status).toBe(200);

    expect((await owner('PUT', `/sends/${send.id}`, textSend({ authType: 1, password: HASH }))).status).toBe(200);
    expect((await open(before)).status).toBe(401);

    const withPassword = await grant(send.accessId, HASH);
    expect((await open(withPassword)).status).toBe(200);
    expect((await owner('PUT', `/sends/${send.id}`, textSend({ authType: 1, password: OTHER_HASH }))).status).toBe(200);
    expect((await open(withPassword)).status).toBe(401);

    const withNewPassword = await grant(send.accessId, OTHER_HASH);
    expect((await owner('PUT', `/sends/${send.id}/remove-password`)).status).toBe(200);
    expect((await open(withNewPassword)).status).toBe(401);
    expect((await open(await grant(send.accessId))).status).toBe(200);
  });

  it('keep working through edits that leave the password as it was', async () => {
    const send = await createText({ authType: 1, password: HASH });
    const token = await grant(send.accessId, HASH);
    // An edit without a password keeps the one the Send has (the clients send none).
    expect((await owner('PUT', `/sends/${send.id}`, textSend({ authType: 1, password: null, maxAccessCount: 10 }))).status).toBe(200);
    expect((await open(token)).status).toBe(200);
    expect((await open(token)).status).toBe(200);
  });

  it('stop working at once when the Send is disabled, deleted, out of accesses or expired', async () => {
    const disabled = await createText();
    const disabledToken = await grant(disabled.accessId);
    expect((await owner('PUT', `/sends/${disabled.id}`, textSend({ disabled: true }))).status).toBe(200);
    expect((await open(disabledToken)).status).toBe(404);

    const deleted = await createText();
    const deletedToken = await grant(deleted.accessId);
    expect((await owner('DELETE', `/sends/${deleted.id}`)).status).toBe(200);
    expect((await open(deletedToken)).status).toBe(400);

    const once = await createText({ maxAccessCount: 1 });
    const onceToken = await grant(once.accessId);
    expect((await open(onceToken)).status).toBe(200);
    expect((await open(onceToken)).status).toBe(404);

    const expiring = await createText({ expirationDate: soon(2 * MINUTE) });
    const expiringToken = await grant(expiring.accessId);
    clock.advance(2 * MINUTE + 1000);
    expect((await open(expiringToken)).status).toBe(404);
  });
});

describe('The file store', () => {
  it('knows a file Send by the same type number the Sends feature gives it', async () => {
    const { FILE_SEND_TYPE } = await import('../../platform/storage/orphans.js');
    const { SendType } = await import('./sends.schemas.js');
    expect(FILE_SEND_TYPE).toBe(SendType.File);
  });
});
