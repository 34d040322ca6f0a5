import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consoleServers } from '../../../test/support/admin-console.js';
import { seedUser } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import type { TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';

const start = consoleServers();

async function namedUser(s: TestServer, email: string, name: string | null) {
  const id = await seedUser(s, email);
  await s.database.db.updateTable('users').set({ name }).where('id', '=', id).execute();
  return id;
}

async function grant(
  s: TestServer,
  g: { grantorId: string; granteeId?: string | null; email?: string | null; type: number; status: number; waitDays?: number; recoveryInitiated?: string | null; created?: string },
) {
  const created = g.created ?? '2026-01-02T03:04:05.000Z';
  await s.database.db
    .insertInto('emergency_access')
    .values({
      id: randomUUID(),
      grantor_id: g.grantorId,
      grantee_id: g.granteeId ?? null,
      email: g.email ?? null,
      key_encrypted: null,
      type: g.type,
      status: g.status,
      wait_time_days: g.waitDays ?? 7,
      recovery_initiated_date: g.recoveryInitiated ?? null,
      last_notification_date: null,
      creation_date: created,
      revision_date: created,
    })
    .execute();
}

async function policy(s: TestServer, organizationId: string, type: PolicyType, enabled: boolean) {
  const now = new Date().toISOString();
  await s.database.db.insertInto('policies').values({ id: randomUUID(), organization_id: organizationId, type, enabled, data: null, creation_date: now, revision_date: now }).execute();
}

/** The cells of each body row of the table in the region labelled `label`, as raw HTML. */
function tableRows(html: string, label: string): string[][] {
  const region = new RegExp(`<div class="table-wrap" role="region" aria-label="${label}"[\\s\\S]*?</table>`).exec(html)?.[0];
  if (!region) throw new Error(`no region ${label}`);
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(region)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...(row[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1] ?? ''));
}

describe("a user's page in the admin console", () => {
  it('shows every emergency access type and status both ways, with the recovery waits, names escaped', async () => {
    const { server: s, browser } = await start();
    const alice = await namedUser(s, 'alice@example.com', 'Alice <b>Liddell</b>');
    const bob = await namedUser(s, 'bob@example.com', '<script>alert("bob")</script>');
    const carol = await namedUser(s, 'carol@example.com', null);

    // Alice names her contacts: one per status, both types.
    await grant(s, { grantorId: alice, email: 'invited@example.com', type: 0, status: 0, created: '2026-01-01T00:00:00.000Z' });
    await grant(s, { grantorId: alice, granteeId: bob, type: 1, status: 1, created: '2026-01-02T00:00:00.000Z' });
    await grant(s, { grantorId: alice, granteeId: carol, type: 0, status: 2, waitDays: 1, created: '2026-01-03T00:00:00.000Z' });
    await grant(s, { grantorId: alice, granteeId: bob, type: 1, status: 3, waitDays: 14, recoveryInitiated: '2026-03-01T10:20:00.000Z', created: '2026-01-04T00:00:00.000Z' });
    await grant(s, { grantorId: alice, granteeId: carol, type: 0, status: 4, waitDays: 2, recoveryInitiated: '2026-02-01T08:00:00.000Z', created: '2026-01-05T00:00:00.000Z' });
    // Alice is the contact of Bob (accepted) and invited by Carol's address match (not yet accepted).
    await grant(s, { grantorId: bob, granteeId: alice, type: 1, status: 2, waitDays: 30, created: '2026-01-06T00:00:00.000Z' });
    // The invitation stores the address lower-cased, as the emergency access service writes it.
    await grant(s, { grantorId: carol, email: 'alice@example.com', type: 0, status: 0, created: '2026-01-07T00:00:00.000Z' });
    // Someone else's grant is not Alice's.
    await grant(s, { grantorId: carol, granteeId: bob, type: 0, status: 2 });

    const page = await browser.get(`/admin/users/${alice}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>alice@example.com</h1>');
    expect(page.body).toContain('<dd>Alice &lt;b&gt;Liddell&lt;/b&gt;</dd>');
    expect(page.body).not.toContain('<script>alert');

    expect(tableRows(page.body, 'Trusted emergency contacts')).toEqual([
      ['invited@example.com', '', 'view', 'invited', '7', 'none', '2026-01-01 00:00'],
      ['bob@example.com', '&lt;script&gt;alert(&quot;bob&quot;)&lt;/script&gt;', 'takeover', 'accepted', '7', 'none', '2026-01-02 00:00'],
      ['carol@example.com', '', 'view', 'confirmed', '1', 'none', '2026-01-03 00:00'],
      ['bob@example.com', '&lt;script&gt;alert(&quot;bob&quot;)&lt;/script&gt;', 'takeover', 'recovery initiated', '14', 'waiting since 2026-03-01 10:20 UTC; the wait ends 2026-03-15 10:20 UTC', '2026-01-04 00:00'],
      ['carol@example.com', '', 'view', 'recovery approved', '2', 'asked 2026-02-01 08:00 UTC, approved', '2026-01-05 00:00'],
    ]);
    expect(tableRows(page.body, 'Emergency access granted to this user')).toEqual([
      ['bob@example.com', '&lt;script&gt;alert(&quot;bob&quot;)&lt;/script&gt;', 'takeover', 'confirmed', '30', 'none', '2026-01-06 00:00'],
      ['carol@example.com', '', 'view', 'invited', '7', 'none', '2026-01-07 00:00'],
    ]);

    // Carol's page sees the same grants from her side.
    const carolPage = await browser.get(`/admin/users/${carol}`);
    expect(tableRows(carolPage.body, 'Trusted emergency contacts').map((r) => [r[0], r[3]])).toEqual([
      ['bob@example.com', 'confirmed'],
      // An invitation shows the address it was sent to.
      ['alice@example.com', 'invited'],
    ]);
    expect(tableRows(carolPage.body, 'Emergency access granted to this user').map((r) => [r[0], r[3]])).toEqual([
      ['alice@example.com', 'confirmed'],
      ['alice@example.com', 'recovery approved'],
    ]);
    expect(carolPage.body).toContain('<dt>Name</dt><dd></dd>');
  });

  it('shows account recovery enrollment per membership, the policy, and a forced password change', async () => {
    const { server: s, browser } = await start();
    const user = await namedUser(s, 'member@example.com', 'Member');
    const enrolledOrg = await seedOrganization(s, { name: 'Acme <Enrolled>' });
    const policyOffOrg = await seedOrganization(s, { name: 'Beta Policy Off' });
    const noPolicyOrg = await seedOrganization(s, { name: 'Gamma No Policy' });
    const familiesOrg = await seedOrganization(s, { name: 'Delta Families', overrides: { use_reset_password: false } });
    const enrolled = [
      await seedMembership(s, { organizationId: enrolledOrg, userId: user, type: OrganizationUserType.Admin }),
      await seedMembership(s, { organizationId: policyOffOrg, userId: user, status: OrganizationUserStatusType.Accepted }),
    ];
    await s.database.db.updateTable('organization_users').set({ reset_password_key: '4.cmVzZXQ=' }).where('id', 'in', enrolled).execute();
    await seedMembership(s, { organizationId: noPolicyOrg, userId: user, status: OrganizationUserStatusType.Revoked });
    await seedMembership(s, { organizationId: familiesOrg, userId: user });
    await policy(s, enrolledOrg, PolicyType.ResetPassword, true);
    await policy(s, policyOffOrg, PolicyType.ResetPassword, false);
    // Another policy on does not read as account recovery.
    await policy(s, noPolicyOrg, PolicyType.SingleOrg, true);

    const before = await browser.get(`/admin/users/${user}`);
    expect(before.body).toContain('<dt>Must set a new password at next login</dt><dd>no</dd>');
    expect(tableRows(before.body, 'Account recovery')).toEqual([
      [`<a href="/admin/organizations/${enrolledOrg}">Acme &lt;Enrolled&gt;</a>`, 'Admin', 'confirmed', 'yes', 'on'],
      [`<a href="/admin/organizations/${policyOffOrg}">Beta Policy Off</a>`, 'User', 'accepted', 'yes', 'off'],
      [`<a href="/admin/organizations/${familiesOrg}">Delta Families</a>`, 'User', 'confirmed', 'no', 'not in the plan'],
      [`<a href="/admin/organizations/${noPolicyOrg}">Gamma No Policy</a>`, 'User', 'revoked', 'no', 'off'],
    ]);
    expect(tableRows(before.body, 'Trusted emergency contacts')).toEqual([['No trusted emergency contacts.']]);

    await s.database.db.updateTable('users').set({ force_password_reset: true }).where('id', '=', user).execute();
    const after = await browser.get(`/admin/users/${user}`);
    expect(after.body).toContain('<dt>Must set a new password at next login</dt><dd>yes</dd>');
    // The list says it too, and links the account's page.
    const list = await browser.get('/admin/users?q=member%40example.com');
    const row = /<tr>\s*<td data-label="Email">[\s\S]*?<\/tr>/.exec(list.body)?.[0] ?? '';
    expect(row).toContain(`<a href="/admin/users/${user}">member@example.com</a>`);
    expect(row).toContain('<td data-label="Status">enabled, must set a new password</td>');
  });

  it('shows at most 100 rows a list and says how many there are', async () => {
    const { server: s, browser } = await start();
    const grantor = await seedUser(s, 'many@example.com');
    const grantee = await seedUser(s, 'contact@example.com');
    await s.database.db
      .insertInto('emergency_access')
      .values(
        Array.from({ length: 103 }, (_, i) => ({
          id: randomUUID(),
          grantor_id: grantor,
          grantee_id: grantee,
          email: null,
          key_encrypted: null,
          type: 0,
          status: 2,
          wait_time_days: 7,
          recovery_initiated_date: null,
          last_notification_date: null,
          creation_date: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`,
          revision_date: '2026-01-01T00:00:00.000Z',
        })),
      )
      .execute();
    const page = await browser.get(`/admin/users/${grantor}`);
    expect(tableRows(page.body, 'Trusted emergency contacts')).toHaveLength(100);
    expect(page.body).toContain('The first 100 of 103.');
    const other = await browser.get(`/admin/users/${grantee}`);
    expect(tableRows(other.body, 'Emergency access granted to this user')).toHaveLength(100);
    expect(other.body).toContain('The first 100 of 103.');
  });

  it('answers an unknown account with 404 and a malformed id with 400', async () => {
    const { browser } = await start();
    expect((await browser.get(`/admin/users/${randomUUID()}`)).statusCode).toBe(404);
    const bad = await browser.get('/admin/users/not-a-guid');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id');
  });
});
