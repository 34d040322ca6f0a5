/**
 * The official Secrets Manager SDK (`@bitwarden/sdk-napi`) against a running server over HTTPS,
 * trusting the test CA through SSL_CERT_FILE as its rustls does. A machine account logs in with
 * an access token made through the web app's routes, then drives secrets and projects; what it
 * is not granted stays out of reach. One server for the file; the steps build on each other.
 */
import { BitwardenClient, DeviceType } from '@bitwarden/sdk-napi';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decryptText, encryptText, type SymmetricKey } from '../support/bw-crypto.js';
import { createAccessToken, createMachineAccount, smOrg } from '../support/sm.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';

const LOG_WARN = 3;
let tls: TestTls;
let server: TestServer;
let org: string;
let ownerToken: string;
let orgKey: SymmetricKey;
let machineAccount: string;
let token: { id: string; accessToken: string };
/** A project the machine account may read and write, and one it is not granted. */
let granted: string;
let withheld: string;
let withheldSecret: string;

function sdkClient(): BitwardenClient {
  return new BitwardenClient({ apiUrl: `${server.baseUrl}/api`, identityUrl: `${server.baseUrl}/identity`, userAgent: 'strongroom-test', deviceType: DeviceType.SDK }, LOG_WARN);
}

async function ownerCall(method: string, path: string, json?: unknown) {
  const response = await server.request(method, `/api${path}`, { token: ownerToken, ...(json !== undefined ? { json } : {}) });
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  return response.body as Record<string, unknown>;
}

beforeAll(async () => {
  tls = await createTestTls();
  // The SDK's rustls reads the trusted roots from SSL_CERT_FILE when a client is made. Put back
  // afterwards: later test files in this worker start programs with this process's environment.
  vi.stubEnv('SSL_CERT_FILE', tls.caPath);
  server = await startTestServer({ tls });
  const made = await smOrg(server);
  org = made.orgId;
  ownerToken = made.owner.token;
  orgKey = made.orgKey;
  granted = String((await ownerCall('POST', `/organizations/${org}/projects`, { name: encryptText('granted project', orgKey) })).id);
  withheld = String((await ownerCall('POST', `/organizations/${org}/projects`, { name: encryptText('withheld project', orgKey) })).id);
  withheldSecret = String(
    (
      await ownerCall('POST', `/organizations/${org}/secrets`, {
        key: encryptText('WITHHELD_KEY', orgKey),
        value: encryptText('withheld value', orgKey),
        note: encryptText('', orgKey),
        projectIds: [withheld],
      })
    ).id,
  );
  machineAccount = await createMachineAccount(server, ownerToken, org, encryptText('deployer', orgKey));
  await ownerCall('PUT', `/service-accounts/${machineAccount}/granted-policies`, { projectGrantedPolicyRequests: [{ grantedId: granted, read: true, write: true }] });
  token = await createAccessToken(server, ownerToken, machineAccount, orgKey);
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await server?.close();
});

describe('the Secrets Manager SDK as a machine account', () => {
  const client = () => sdk;
  let sdk: BitwardenClient;
  let created: string;

  it('logs in with an access token', async () => {
    sdk = sdkClient();
    await sdk.auth().loginAccessToken(token.accessToken);
  });

  it('lists, reads, creates, renames and deletes projects within its grants', async () => {
    const listed = await client().projects().list(org);
    expect(listed.data.map((p) => [p.id, p.name])).toEqual([[granted, 'granted project']]);
    expect((await client().projects().get(granted)).name).toBe('granted project');
    await expect(client().projects().get(withheld)).rejects.toThrow();

    const made = await client().projects().create(org, 'made by the SDK');
    expect(made.name).toBe('made by the SDK');
    const row = await server.database.db.selectFrom('projects').select('name').where('id', '=', made.id).executeTakeFirstOrThrow();
    expect(decryptText(row.name, orgKey)).toBe('made by the SDK');
    expect((await client().projects().update(org, made.id, 'renamed by the SDK')).name).toBe('renamed by the SDK');
    const deleted = await client().projects().delete([made.id, withheld]);
    expect(Object.fromEntries(deleted.data.map((r) => [r.id, r.error ?? null]))).toEqual({ [made.id]: null, [withheld]: expect.stringMatching(/.+/) });
    expect(await server.database.db.selectFrom('projects').select('id').where('id', '=', withheld).executeTakeFirst()).toBeDefined();
  });

  it('creates a secret that the database holds only as ciphertext under the organization key', async () => {
    const secret = await client().secrets().create(org, 'DB_PASSWORD', 'hunter2-from-the-sdk', 'rotated monthly', [granted]);
    created = secret.id;
    expect(secret).toMatchObject({ key: 'DB_PASSWORD', value: 'hunter2-from-the-sdk', note: 'rotated monthly', projectId: granted, organizationId: org });
    const row = await server.database.db.selectFrom('secrets').selectAll().where('id', '=', created).executeTakeFirstOrThrow();
    for (const field of [row.key, row.value, row.note]) expect(field).toMatch(/^2\.[^|]+\|[^|]+\|[^|]+$/);
    expect(JSON.stringify(row)).not.toContain('hunter2');
    expect(decryptText(row.value, orgKey)).toBe('hunter2-from-the-sdk');
    expect(decryptText(row.key, orgKey)).toBe('DB_PASSWORD');
  });

  it('lists, gets and gets by ids only the secrets it can read', async () => {
    const listed = await client().secrets().list(org);
    expect(listed.data.map((s) => [s.id, s.key])).toEqual([[created, 'DB_PASSWORD']]);
    expect((await client().secrets().get(created)).value).toBe('hunter2-from-the-sdk');
    await expect(client().secrets().get(withheldSecret)).rejects.toThrow();
    const both = await client().secrets().getByIds([created]);
    expect(both.data.map((s) => s.value)).toEqual(['hunter2-from-the-sdk']);
    await expect(client().secrets().getByIds([created, withheldSecret])).rejects.toThrow();
  });

  it('cannot write into a project it was not granted', async () => {
    await expect(client().secrets().create(org, 'SNEAKY', 'value', '', [withheld])).rejects.toThrow();
    await expect(client().secrets().update(org, withheldSecret, 'SNEAKY', 'value', '', [withheld])).rejects.toThrow();
    const row = await server.database.db.selectFrom('secrets').select('key').where('id', '=', withheldSecret).executeTakeFirstOrThrow();
    expect(decryptText(row.key, orgKey)).toBe('WITHHELD_KEY');
  });

  it('syncs: everything first, nothing while unchanged, everything again after an update', async () => {
    const first = await client().secrets().sync(org);
    expect(first.hasChanges).toBe(true);
    expect(first.secrets?.map((s) => s.id)).toEqual([created]);
    const quiet = await client().secrets().sync(org, new Date());
    expect(quiet).toMatchObject({ hasChanges: false });
    expect(quiet.secrets ?? null).toBeNull();

    await new Promise((resolve) => setTimeout(resolve, 5));
    const before = new Date();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const updated = await client().secrets().update(org, created, 'DB_PASSWORD', 'correct-horse', 'rotated', [granted]);
    expect(updated.value).toBe('correct-horse');
    const after = await client().secrets().sync(org, before);
    expect(after.hasChanges).toBe(true);
    expect(after.secrets?.[0]?.value).toBe('correct-horse');
  });

  it('deletes what it may and reports the ids it may not', async () => {
    const result = await client().secrets().delete([created, withheldSecret]);
    expect(Object.fromEntries(result.data.map((r) => [r.id, r.error ?? null]))).toEqual({ [created]: null, [withheldSecret]: expect.stringMatching(/.+/) });
    const rows = await server.database.db.selectFrom('secrets').select(['id', 'deleted_date']).where('id', 'in', [created, withheldSecret]).execute();
    expect(Object.fromEntries(rows.map((r) => [r.id, r.deleted_date !== null]))).toEqual({ [created]: true, [withheldSecret]: false });
  });
});

describe('access tokens that no longer stand', () => {
  it('refuses a revoked token at login', async () => {
    const revoked = await createAccessToken(server, ownerToken, machineAccount, orgKey);
    await ownerCall('POST', `/service-accounts/${machineAccount}/access-tokens/revoke`, { ids: [revoked.id] });
    await expect(sdkClient().auth().loginAccessToken(revoked.accessToken)).rejects.toThrow();
  });

  it('refuses an expired token at login', async () => {
    const expiring = await createAccessToken(server, ownerToken, machineAccount, orgKey, { expireAt: new Date(Date.now() + 60_000).toISOString() });
    await server.database.db.updateTable('access_tokens').set({ expire_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', expiring.id).execute();
    await expect(sdkClient().auth().loginAccessToken(expiring.accessToken)).rejects.toThrow();
  });
});
