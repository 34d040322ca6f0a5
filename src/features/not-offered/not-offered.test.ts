import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let user: LoggedInUser;
beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server);
});
afterAll(async () => server.close());

/** A license file as the web vault's "Update license" dialog uploads it. */
function licenseUpload(): { body: Buffer; contentType: string } {
  const boundary = '----StrongroomTestBoundary';
  const body = Buffer.from(
    [`--${boundary}`, 'Content-Disposition: form-data; name="license"; filename="bitwarden_premium_license.json"', 'Content-Type: application/json', '', '{"LicenseKey":"x"}', `--${boundary}--`, ''].join('\r\n'),
  );
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

async function postLicense(token?: string) {
  const { body, contentType } = licenseUpload();
  const res = await fetch(`${server.baseUrl}/api/accounts/license`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
  return { status: res.status, body: (await res.json()) as { message: string; validationErrors: Record<string, string[]> | null } };
}

describe('features not offered yet', () => {
  it('say organization connections cannot be set up, as a server without cloud communication does', async () => {
    const res = await server.request('GET', '/api/organizations/connections/enabled', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toBe(false);
  });

  it('refuse a premium license upload with a message naming the license, since every account has premium', async () => {
    const res = await postLicense(user.accessToken);
    expect(res.status).toBe(400);
    expect(res.body.validationErrors?.license?.[0]).toMatch(/Premium is included with every account/);
    const json = await server.request('POST', '/api/accounts/license', { token: user.accessToken, json: {} });
    expect(json.status).toBe(400);
  });

  it('refuse anonymous callers', async () => {
    for (const path of ['/api/organizations/connections/enabled']) expect((await server.request('GET', path)).status, path).toBe(401);
    expect((await postLicense()).status).toBe(401);
  });
});
