import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { memberOf, memberRow, orgWithOwner } from '../../../test/support/members.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const enable = (token: string, orgId: string, ids: string[]) => server.request('PUT', `/api/organizations/${orgId}/users/enable-secrets-manager`, { token, json: { ids } });
const hasAccess = async (id: string) => Boolean((await memberRow(server, id))?.access_secrets_manager);
const setOrg = (id: string, changes: { sm_seats?: number | null; use_secrets_manager?: boolean }) => server.database.db.updateTable('organizations').set(changes).where('id', '=', id).execute();

describe('PUT /organizations/{orgId}/users/enable-secrets-manager', () => {
  it('gives the listed members access whatever their status, skips those who have it and ids of other organizations', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const confirmed = await memberOf(server, orgId);
    const invited = await seedMembership(server, { organizationId: orgId, email: 'sm-invited@example.com', status: Status.Invited });
    const elsewhere = await seedMembership(server, { organizationId: await seedOrganization(server), email: 'sm-elsewhere@example.com' });
    const before = (await server.database.db.selectFrom('users').select('account_revision_date').where('id', '=', confirmed.userId).executeTakeFirstOrThrow()).account_revision_date;

    const res = await enable(owner.accessToken, orgId, [confirmed.memberId.toUpperCase(), invited, elsewhere]);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(await hasAccess(confirmed.memberId)).toBe(true);
    expect(await hasAccess(invited)).toBe(true);
    expect(await hasAccess(elsewhere)).toBe(false);
    // The member's clients learn of it at their next sync.
    const after = (await server.database.db.selectFrom('users').select('account_revision_date').where('id', '=', confirmed.userId).executeTakeFirstOrThrow()).account_revision_date;
    expect(after).not.toBe(before);

    // Everyone listed has access already: nothing is left to change.
    const again = await enable(owner.accessToken, orgId, [confirmed.memberId, elsewhere]);
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('Users invalid.');
  });

  it('stays within the Secrets Manager seats, all or nothing, with the self-hosted wording', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    await setOrg(orgId, { sm_seats: 2 });
    const [a, b, c] = [await memberOf(server, orgId), await memberOf(server, orgId), await memberOf(server, orgId)];
    // The owner holds no seat yet; a revoked member with access holds none either.
    const revoked = await memberOf(server, orgId, { status: Status.Revoked });
    await server.database.db.updateTable('organization_users').set({ access_secrets_manager: true }).where('id', '=', revoked.memberId).execute();

    const over = await enable(owner.accessToken, orgId, [a.memberId, b.memberId, c.memberId]);
    expect(over.status).toBe(400);
    expect(over.body.message).toBe('Cannot autoscale on a self-hosted instance.');
    for (const m of [a, b, c]) expect(await hasAccess(m.memberId)).toBe(false);

    expect((await enable(owner.accessToken, orgId, [a.memberId, b.memberId])).status).toBe(200);
    expect((await enable(owner.accessToken, orgId, [c.memberId])).body.message).toBe('Cannot autoscale on a self-hosted instance.');
  });

  it('refuses an organization without Secrets Manager', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    await setOrg(orgId, { use_secrets_manager: false });
    const member = await memberOf(server, orgId);
    const res = await enable(owner.accessToken, orgId, [member.memberId]);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Organization does not use Secrets Manager');
    expect(await hasAccess(member.memberId)).toBe(false);
  });

  it('admits member managers only, and names a bad id', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const user = await memberOf(server, orgId, { type: Role.User });
    const manager = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    const target = await memberOf(server, orgId);
    expect((await enable(user.accessToken, orgId, [target.memberId])).status).toBe(403);
    expect(await hasAccess(target.memberId)).toBe(false);
    expect((await enable(manager.accessToken, orgId, [target.memberId])).status).toBe(200);

    const bad = await enable(owner.accessToken, orgId, ['not-a-guid']);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('ids');
    expect((await enable(owner.accessToken, orgId, [])).status).toBe(400);
  });
});

describe('the Secrets Manager seats when inviting, editing and restoring members', () => {
  it('refuses to invite, edit or restore past them, writing nothing, and admits what fits', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    await setOrg(orgId, { sm_seats: 1 });
    const holder = await memberOf(server, orgId);
    const other = await memberOf(server, orgId);
    const invite = (emails: string[], accessSecretsManager: boolean) =>
      server.request('POST', `/api/organizations/${orgId}/users/invite`, { token: owner.accessToken, json: { emails, type: Role.User, accessSecretsManager, collections: [], groups: [] } });
    const edit = (memberId: string, accessSecretsManager: boolean) =>
      server.request('PUT', `/api/organizations/${orgId}/users/${memberId}`, { token: owner.accessToken, json: { type: Role.User, accessSecretsManager, collections: [], groups: [] } });

    // Two invitations with access do not fit one seat; without access they do.
    const two = await invite(['sm-seat-a@example.com', 'sm-seat-b@example.com'], true);
    expect(two.status).toBe(400);
    expect(two.body.message).toBe('Cannot autoscale on a self-hosted instance.');
    const invited = await server.database.db.selectFrom('organization_users').select('id').where('organization_id', '=', orgId).where('email', 'in', ['sm-seat-a@example.com', 'sm-seat-b@example.com']).execute();
    expect(invited).toEqual([]);
    expect((await invite(['sm-seat-c@example.com'], false)).status).toBe(200);

    // The one seat goes to the first member given access; the second edit is refused.
    expect((await edit(holder.memberId, true)).status).toBe(200);
    const refused = await edit(other.memberId, true);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Cannot autoscale on a self-hosted instance.');
    expect(await hasAccess(other.memberId)).toBe(false);
    // Editing the holder again keeps its own seat.
    expect((await edit(holder.memberId, true)).status).toBe(200);

    // Revoked, the holder frees the seat, which `other` then takes; the holder cannot come back.
    expect((await server.request('PUT', `/api/organizations/${orgId}/users/${holder.memberId}/revoke`, { token: owner.accessToken })).status).toBe(200);
    expect((await edit(other.memberId, true)).status).toBe(200);
    const restore = await server.request('PUT', `/api/organizations/${orgId}/users/${holder.memberId}/restore`, { token: owner.accessToken });
    expect(restore.status).toBe(400);
    expect(restore.body.message).toBe('Cannot autoscale on a self-hosted instance.');
    expect((await memberRow(server, holder.memberId))?.status).toBe(Status.Revoked);
    // A revoked member holds no seat, so giving one access while the seats are full is allowed.
    expect((await edit(holder.memberId, true)).status).toBe(200);
  });

  it('restores several members with access only as far as the free seats go', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    await setOrg(orgId, { sm_seats: 1 });
    const [a, b] = [await memberOf(server, orgId, { status: Status.Revoked }), await memberOf(server, orgId, { status: Status.Revoked })];
    await server.database.db.updateTable('organization_users').set({ access_secrets_manager: true }).where('id', 'in', [a.memberId, b.memberId]).execute();
    const res = await server.request('PUT', `/api/organizations/${orgId}/users/restore`, { token: owner.accessToken, json: { ids: [a.memberId, b.memberId] } });
    expect(res.status, res.text).toBe(200);
    const errors = Object.fromEntries((res.body.data as { id: string; error: string }[]).map((r) => [r.id, r.error]));
    expect(errors).toEqual({ [a.memberId]: '', [b.memberId]: 'Cannot autoscale on a self-hosted instance.' });
    expect([(await memberRow(server, a.memberId))?.status, (await memberRow(server, b.memberId))?.status]).toEqual([Status.Confirmed, Status.Revoked]);
  });
});
