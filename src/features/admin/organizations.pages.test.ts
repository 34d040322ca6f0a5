import { fetch, FormData } from 'undici';
import { describe, expect, it } from 'vitest';
import { consoleServers } from '../../../test/support/admin-console.js';
import { seedUser } from '../../../test/support/admin.js';
import { createUser } from '../../../test/support/accounts.js';
import { foundingKeys } from '../../../test/support/org-founding.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import type { TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

const start = consoleServers();

const actions = async (s: TestServer) =>
  (await s.database.db.selectFrom('admin_events').select(['action', 'detail']).where('action', '!=', 'signed-in').orderBy('date').execute()).map((e) => [e.action, e.detail]);

describe('the organizations page', () => {
  it('lists organizations with plan and counts, searches, and shows one with its members and roles', async () => {
    const { server: s, browser } = await start();
    const orgId = await seedOrganization(s, { name: 'Acme Rockets' });
    await seedOrganization(s, { name: 'Other Club' });
    const owner = await seedUser(s, 'wile@example.com');
    await seedMembership(s, { organizationId: orgId, userId: owner, email: 'wile@example.com', type: OrganizationUserType.Owner });
    await s.database.db
      .insertInto('collections')
      .values({ id: crypto.randomUUID(), organization_id: orgId, name: '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', external_id: null, type: 0, creation_date: new Date().toISOString(), revision_date: new Date().toISOString() })
      .execute();

    const list = await browser.get('/admin/organizations');
    expect(list.statusCode).toBe(200);
    const row = /<tr>\s*<td data-label="Name"><a href="\/admin\/organizations\/[^"]+">Acme Rockets<\/a><\/td>[\s\S]*?<\/tr>/.exec(list.body)?.[0] ?? '';
    expect(row).toContain('<td data-label="Plan">EnterpriseAnnually</td>');
    expect(row).toContain('<td data-label="Members">1</td>');
    expect(row).toContain('<td data-label="Collections">1</td>');
    expect(row).toContain('<td data-label="Status">enabled</td>');
    const search = await browser.get('/admin/organizations?q=rocket');
    expect(search.body).toContain('Acme Rockets');
    expect(search.body).not.toContain('Other Club');

    const details = await browser.get(`/admin/organizations/${orgId}`);
    expect(details.statusCode).toBe(200);
    expect(details.body).toMatch(/wile@example.com<\/td><td data-label="Name"><\/td><td data-label="Role">Owner<\/td><td data-label="Status">confirmed/);
    expect((await browser.get('/admin/organizations/6f1c0a52-6f5d-4c43-9d1e-2b1f2a6e4c11')).statusCode).toBe(404);
    expect((await browser.get('/admin/organizations/nope')).statusCode).toBe(400);
  });

  it('disables an organization so that its members reach nothing in it, and enables it again', async () => {
    const { server: s, browser } = await start();
    const orgId = await seedOrganization(s, { name: 'Shut Down Co' });
    const member = await createUser(s, { email: 'member@example.com' });
    await seedMembership(s, { organizationId: orgId, userId: member.userId, email: 'member@example.com', type: OrganizationUserType.Owner });
    expect((await s.request('GET', `/api/organizations/${orgId}/collections`, { token: member.accessToken })).status).toBe(200);

    const off = await browser.post(`/admin/organizations/${orgId}/disable`);
    expect(off.statusCode).toBe(303);
    expect(off.headers.location).toBe(`/admin/organizations/${orgId}?notice=disabled`);
    expect((await s.request('GET', `/api/organizations/${orgId}/collections`, { token: member.accessToken })).status).toBe(404);
    expect((await browser.get(`/admin/organizations/${orgId}`)).body).toContain('<dt>Status</dt><dd>disabled</dd>');

    await browser.post(`/admin/organizations/${orgId}/enable`);
    expect((await s.request('GET', `/api/organizations/${orgId}/collections`, { token: member.accessToken })).status).toBe(200);
    expect(await actions(s)).toEqual([
      ['organization-disabled', 'Shut Down Co'],
      ['organization-enabled', 'Shut Down Co'],
    ]);
  });

  it('deletes an organization only when its name is typed to confirm', async () => {
    const { server: s, browser } = await start();
    const orgId = await seedOrganization(s, { name: 'Gone Ltd' });
    expect((await browser.get(`/admin/organizations/${orgId}/delete`)).body).toContain('Type <strong>Gone Ltd</strong> to confirm');
    const wrong = await browser.post(`/admin/organizations/${orgId}/delete`, { confirm: 'gone ltd' });
    expect(wrong.statusCode).toBe(400);
    expect(await s.database.db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst()).toBeDefined();
    const done = await browser.post(`/admin/organizations/${orgId}/delete`, { confirm: 'Gone Ltd' });
    expect(done.headers.location).toBe('/admin/organizations?notice=deleted');
    expect(await s.database.db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst()).toBeUndefined();
    expect(await actions(s)).toEqual([['organization-deleted', 'Gone Ltd']]);
  });

  it('issues a license file that the web vault\'s self-hosted upload turns into an organization', async () => {
    const { server: s, browser } = await start();
    const res = await browser.post('/admin/organizations/license', { name: 'Licensed Family', planType: '22', billingEmail: 'pay@example.com', days: '30', seats: '' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="bitwarden_organization_license_[0-9a-f-]+\.json"$/);
    const license = JSON.parse(res.body) as { id: string; name: string; planType: number; signature?: string };
    expect(license).toMatchObject({ name: 'Licensed Family', planType: 22 });

    const owner = await createUser(s, { email: 'parent@example.com' });
    const { fields } = foundingKeys(owner);
    const form = new FormData();
    form.append('license', new Blob([res.body], { type: 'application/json' }), 'license.json');
    form.append('key', fields.key);
    form.append('collectionName', fields.collectionName);
    const upload = await fetch(new URL('/api/organizations/license', s.baseUrl), { method: 'POST', body: form, headers: { authorization: `Bearer ${owner.accessToken}` } });
    expect(upload.status).toBe(200);
    expect(await s.database.db.selectFrom('organizations').select('name').where('id', '=', license.id).executeTakeFirst()).toEqual({ name: 'Licensed Family' });
    expect(await actions(s)).toEqual([['license-issued', 'Licensed Family']]);

    const bad = await browser.post('/admin/organizations/license', { name: 'X', planType: '999', billingEmail: 'pay@example.com', days: '30' });
    expect(bad.statusCode).toBe(400);
    const noDays = await browser.post('/admin/organizations/license', { name: 'X', planType: '20', billingEmail: 'pay@example.com', days: '0' });
    expect(noDays.statusCode).toBe(400);
    expect(noDays.body).toContain('days');
  });

  it('offers no license form in the cloud variant', async () => {
    const { browser } = await start({ DEPLOYMENT: 'cloud' });
    expect((await browser.get('/admin/organizations')).body).not.toContain('License for a new organization');
    expect((await browser.post('/admin/organizations/license', { name: 'X', planType: '20', billingEmail: 'pay@example.com', days: '30' })).statusCode).toBe(404);
  });
});
