import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { fetch, FormData } from 'undici';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { eventsOf } from '../../../test/support/admin.js';
import { generateRsaKeyPair, encryptToEncString } from '../../../test/support/bw-crypto.js';
import { foundingKeys } from '../../../test/support/org-founding.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { systemClock } from '../../shared/clock.js';
import { EventType } from '../../platform/audit/event-type.js';
import { createLicenseIssuer, licenseTerms } from './licenses.js';
import { PlanType } from './plans.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer({ env });
  servers.push(s);
  return s;
}

async function issueLicense(s: TestServer, name = 'Uploaded'): Promise<{ id: string; text: string }> {
  const id = randomUUID();
  const license = await createLicenseIssuer({ db: s.database.db, clock: systemClock }).issue(
    licenseTerms({
      id,
      licenseKey: randomUUID(),
      name,
      billingEmail: 'billing@example.com',
      planType: PlanType.EnterpriseAnnually,
      expires: new Date(Date.now() + 86_400_000).toISOString(),
    }),
  );
  return { id, text: JSON.stringify(license) };
}

/** What the web vault sends: the file, the organization key and the first collection's name. */
function webVaultForm(user: LoggedInUser, file: Blob | string | null, extra: (form: FormData) => void = () => undefined) {
  const { fields } = foundingKeys(user);
  const form = new FormData();
  if (file !== null) form.append('license', typeof file === 'string' ? new Blob([file], { type: 'application/json' }) : file, 'bitwarden_organization_license.json');
  form.append('key', fields.key);
  form.append('collectionName', fields.collectionName);
  extra(form);
  return { form, fields };
}

async function upload(s: TestServer, token: string | null, form: FormData) {
  const res = await fetch(new URL('/api/organizations/license', s.baseUrl), {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const organizationCount = async (s: TestServer) => (await s.database.db.selectFrom('organizations').select('id').execute()).length;

describe('the web vault license upload (multipart)', () => {
  // A server start, an account, a signed license and a key pair: over 30 s on a loaded CI machine.
  it('creates the organization, and the key pair posted next completes it', async () => {
    const s = await start();
    const owner = await createUser(s);
    const license = await issueLicense(s);
    const { form, fields } = webVaultForm(owner, license.text);
    const res = await upload(s, owner.accessToken, form);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'organization', id: license.id, name: 'Uploaded', selfHost: true, hasPublicAndPrivateKeys: false });
    const collections = await s.database.db.selectFrom('collections').select('name').where('organization_id', '=', license.id).execute();
    expect(collections).toEqual([{ name: fields.collectionName }]);

    const noKey = await s.request('GET', `/api/organizations/${license.id}/public-key`, { token: owner.accessToken });
    expect(noKey.body).toEqual({ object: 'organizationPublicKey', publicKey: null });
    const seats = await s.request('GET', `/api/organizations/${license.id}/billing/vnext/self-host/metadata`, { token: owner.accessToken });
    expect(seats.status).toBe(200);
    expect(seats.body).toEqual({ isOnSecretsManagerStandalone: false, organizationOccupiedSeats: 1, hasPaymentMethod: true });

    const pair = generateRsaKeyPair();
    const keys = { publicKey: pair.publicKeyB64, encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, foundingKeys(owner).orgKey) };
    const notAKey = await s.request('POST', `/api/organizations/${license.id}/keys`, { token: owner.accessToken, json: { ...keys, publicKey: '<script>' } });
    expect(notAKey.status).toBe(400);
    expect(notAKey.body.validationErrors).toHaveProperty('publicKey');
    const set = await s.request('POST', `/api/organizations/${license.id}/keys`, { token: owner.accessToken, json: keys });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ object: 'organizationKeys', publicKey: keys.publicKey, privateKey: keys.encryptedPrivateKey });
    const read = await s.request('GET', `/api/organizations/${license.id}/keys`, { token: owner.accessToken });
    expect(read.body).toEqual(set.body);
    expect((await s.request('GET', `/api/organizations/${license.id}/public-key`, { token: owner.accessToken })).body.publicKey).toBe(keys.publicKey);
    const profile = await s.request('GET', '/api/accounts/profile', { token: owner.accessToken });
    expect(profile.body.organizations).toMatchObject([{ id: license.id, hasPublicAndPrivateKeys: true, key: fields.key }]);

    const again = await s.request('POST', `/api/organizations/${license.id}/keys`, { token: owner.accessToken, json: keys });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('Organization Keys already exist');
    const events = await eventsOf(s, EventType.Organization_Updated);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ organization_id: license.id, acting_user_id: owner.userId });
    const badKey = await s.request('POST', `/api/organizations/${license.id}/keys`, { token: owner.accessToken, json: { ...keys, encryptedPrivateKey: 'plain' } });
    expect(badKey.status).toBe(400);
  }, 90_000);

  it('sets the key pair only while the organization has neither key, through POST keys or the update alike', async () => {
    const s = await start();
    const owner = await createUser(s);
    const license = await issueLicense(s);
    expect((await upload(s, owner.accessToken, webVaultForm(owner, license.text).form)).status).toBe(200);
    const pair = generateRsaKeyPair();
    const keys = { publicKey: pair.publicKeyB64, encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, foundingKeys(owner).orgKey) };
    const stored = () => s.database.db.selectFrom('organizations').select(['public_key', 'private_key']).where('id', '=', license.id).executeTakeFirstOrThrow();

    // Half a pair is a pair already set: neither route replaces it.
    await s.database.db.updateTable('organizations').set({ public_key: 'AAAA' }).where('id', '=', license.id).execute();
    const refused = await s.request('POST', `/api/organizations/${license.id}/keys`, { token: owner.accessToken, json: keys });
    expect(refused.status).toBe(400);
    expect(await eventsOf(s, EventType.Organization_Updated)).toEqual([]);
    await s.request('PUT', `/api/organizations/${license.id}`, { token: owner.accessToken, json: { name: 'Renamed', billingEmail: 'billing@example.com', keys } });
    expect(await stored()).toEqual({ public_key: 'AAAA', private_key: null });

    // With neither key, the update stores the pair and members' clients learn of it at their next sync.
    await s.database.db.updateTable('organizations').set({ public_key: null }).where('id', '=', license.id).execute();
    await s.database.db.updateTable('users').set({ account_revision_date: '2000-01-01T00:00:00.000Z' }).where('id', '=', owner.userId).execute();
    const updated = await s.request('PUT', `/api/organizations/${license.id}`, { token: owner.accessToken, json: { name: 'Renamed', billingEmail: 'billing@example.com', keys } });
    expect(updated.status).toBe(200);
    expect(await stored()).toEqual({ public_key: keys.publicKey, private_key: keys.encryptedPrivateKey });
    const user = await s.database.db.selectFrom('users').select('account_revision_date').where('id', '=', owner.userId).executeTakeFirstOrThrow();
    expect(user.account_revision_date).not.toBe('2000-01-01T00:00:00.000Z');
  });

  it('refuses a missing, oversize, non-text or malformed file with a 400 naming license, writing nothing', async () => {
    const s = await start();
    const owner = await createUser(s);
    const cases: [string, FormData][] = [
      ['missing', webVaultForm(owner, null).form],
      ['oversize', webVaultForm(owner, 'x'.repeat(100_001)).form],
      ['not UTF-8', webVaultForm(owner, new Blob([Buffer.from([0xff, 0xfe, 0x00, 0x80])])).form],
      ['not a license', webVaultForm(owner, '{"hello":"world"}').form],
      ['two files', webVaultForm(owner, (await issueLicense(s)).text, (form) => form.append('license', new Blob(['{}']), 'second.json')).form],
    ];
    for (const [what, form] of cases) {
      const res = await upload(s, owner.accessToken, form);
      expect(res.status, what).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), what).toEqual(['license']);
    }
    const badKey = webVaultForm(owner, (await issueLicense(s)).text);
    badKey.form.set('key', 'not encrypted');
    const res = await upload(s, owner.accessToken, badKey.form);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validationErrors)).toEqual(['key']);
    expect(await organizationCount(s)).toBe(0);
  });

  it('needs a signed-in user and a self-hosted server, as the JSON form does', async () => {
    const s = await start();
    const owner = await createUser(s);
    const anonymous = await upload(s, null, webVaultForm(owner, (await issueLicense(s)).text).form);
    expect(anonymous.status).toBe(401);

    const cloud = await start({ DEPLOYMENT: 'cloud' });
    const cloudUser = await createUser(cloud);
    const refused = await upload(cloud, cloudUser.accessToken, webVaultForm(cloudUser, (await issueLicense(cloud)).text).form);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/self.?host/i);
    expect(await organizationCount(s)).toBe(0);
    expect(await organizationCount(cloud)).toBe(0);
  });
});
