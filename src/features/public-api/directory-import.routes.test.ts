import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { memberOf, orgWithOwner } from '../../../test/support/members.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const db = () => server.database.db;
const importAs = (token: string, orgId: string, json: unknown) => server.request('POST', `/api/organizations/${orgId}/import`, { token, json });
const imported = (orgId: string) => db().selectFrom('organization_users').select(['id', 'email', 'external_id', 'status']).where('organization_id', '=', orgId).where('external_id', 'is not', null).orderBy('email').execute();
const groupsOf = (orgId: string) => db().selectFrom('groups').select(['id', 'name', 'external_id']).where('organization_id', '=', orgId).execute();

describe('POST /organizations/{orgId}/import (the older private directory sync)', () => {
  it('imports users and groups with the older field names, the caller as the acting user', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const res = await importAs(owner.accessToken, orgId, {
      overwriteExisting: false,
      largeImport: false,
      users: [
        { email: 'Ann@Example.com', externalId: 'u-ann', deleted: false },
        { email: 'ben@example.com', externalId: 'u-ben' },
      ],
      groups: [{ name: 'Sales', externalId: 'g-sales', users: ['u-ann', 'u-ben'] }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    const members = await imported(orgId);
    expect(members.map((m) => [m.email, m.external_id, m.status])).toEqual([
      ['ann@example.com', 'u-ann', Status.Invited],
      ['ben@example.com', 'u-ben', Status.Invited],
    ]);
    const [group] = await groupsOf(orgId);
    expect(group).toMatchObject({ name: 'Sales', external_id: 'g-sales' });
    const inGroup = await db().selectFrom('group_users').select('organization_user_id').where('group_id', '=', group?.id ?? '').execute();
    expect(inGroup.map((r) => r.organization_user_id).sort()).toEqual(members.map((m) => m.id).sort());

    const events = await db().selectFrom('events').select(['type', 'acting_user_id', 'system_user']).where('organization_id', '=', orgId).execute();
    expect(events.map((e) => e.type).sort()).toEqual(
      [EventType.OrganizationUser_Invited, EventType.OrganizationUser_Invited, EventType.Group_Created, EventType.OrganizationUser_UpdatedGroups, EventType.OrganizationUser_UpdatedGroups].sort(),
    );
    expect(events.every((e) => e.acting_user_id === owner.userId && e.system_user === null)).toBe(true);

    // A user marked deleted is removed.
    const removed = await importAs(owner.accessToken, orgId, { overwriteExisting: false, users: [{ externalId: 'u-ben', deleted: true }], groups: [] });
    expect(removed.status, removed.text).toBe(200);
    expect((await imported(orgId)).map((m) => m.external_id)).toEqual(['u-ann']);
  });

  it('names the older field in a refusal and writes nothing', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const res = await importAs(owner.accessToken, orgId, { users: [{ externalId: 'u-1' }, { email: 'two@example.com', externalId: 'u-2' }], groups: [] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ 'users[0].email': ['Email is required for enabled users.'] });
    expect(await imported(orgId)).toEqual([]);

    const malformed = await importAs(owner.accessToken, orgId, { users: [{ email: 'x@example.com' }] });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toContain('externalId');
    expect(await imported(orgId)).toEqual([]);
  });

  it('admits owners and admins only; everyone else gets 404', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const manager = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true, manageGroups: true } });
    const user = await memberOf(server, orgId);
    const stranger = (await orgWithOwner(server)).owner;
    const body = (n: string) => ({ overwriteExisting: false, users: [{ email: `${n}@example.com`, externalId: n }], groups: [] });

    for (const caller of [manager, user, stranger]) expect((await importAs(caller.accessToken, orgId, body(`refused-${caller.userId}`))).status).toBe(404);
    expect(await imported(orgId)).toEqual([]);
    expect((await importAs(admin.accessToken, orgId, body('by-admin'))).status).toBe(200);
    expect((await importAs(owner.accessToken, orgId, body('by-owner'))).status).toBe(200);
    expect((await imported(orgId)).map((m) => m.external_id).sort()).toEqual(['by-admin', 'by-owner']);
  });
});
