import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, ENC, freshEmail, freshOrgWithOwner, seedCollection, seedGroup, seedTarget, seedUser, type Actor } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { NO_CLIENT } from '../../http/request-context.js';
import { confirmedMembership } from '../../platform/access/org-access.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PlanType } from '../organizations/plans.js';
import { createMemberAccessReport } from './member-access.service.js';

let server: TestServer;

interface Row {
  userGuid: string;
  userName: string | null;
  email: string | null;
  twoFactorEnabled: boolean;
  accountRecoveryEnabled: boolean;
  usesKeyConnector: boolean;
  collectionId: string | null;
  groupId: string | null;
  groupName: string | null;
  collectionName: string | null;
  readOnly: boolean | null;
  hidePasswords: boolean | null;
  manage: boolean | null;
  cipherIds: string[];
}

const db = () => server.database.db;
const report = (token: string, org: string) => server.request('GET', `/api/reports/member-access/${org}`, { token });
/** The report's rows of one member. */
const rowsOf = (rows: Row[], memberId: string) => rows.filter((r) => r.userGuid === memberId);
/** What a row says about access, without the member's fields. */
const access = (r: Row) => ({ collectionId: r.collectionId, groupId: r.groupId, readOnly: r.readOnly, hidePasswords: r.hidePasswords, manage: r.manage, cipherIds: [...r.cipherIds].sort() });
const sorted = (ids: string[]) => [...ids].sort();
const NO_ACCESS = { collectionId: null, groupId: null, groupName: null, collectionName: null, readOnly: null, hidePasswords: null, manage: null, cipherIds: [] };

async function groupNamed(org: string, name: string, members: string[], accessAll = false): Promise<string> {
  const id = await seedGroup(server, org, members, accessAll);
  await db().updateTable('groups').set({ name }).where('id', '=', id).execute();
  return id;
}

beforeAll(async () => {
  server = await startTestServer();
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('the member access report', () => {
  let org: string;
  let owner: Actor;
  let rows: Row[];
  const m = {} as Record<'direct' | 'viaGroup' | 'both' | 'none' | 'invited' | 'revoked' | 'manager' | 'allAccess' | 'empty', string>;
  const c = {} as Record<'first' | 'second' | 'empty' | 'theirs', string>;
  const items = {} as Record<'first' | 'second' | 'trashed' | 'theirs' | 'unplaced', string[]>;
  let group: string;
  let allGroup: string;

  beforeAll(async () => {
    let otherOrg: string;
    ({ org, owner, otherOrg } = await freshOrgWithOwner(server));
    for (const name of ['direct', 'viaGroup', 'both', 'none', 'manager', 'allAccess', 'empty'] as const) {
      m[name] = await seedTarget(server, org, { type: name === 'manager' ? Role.Manager : Role.User });
    }
    m.invited = await seedTarget(server, org, { status: Status.Invited });
    m.revoked = await seedTarget(server, org, { status: Status.Revoked });
    group = await groupNamed(org, 'Engineering', [m.viaGroup, m.both]);
    allGroup = await groupNamed(org, 'Everything', [m.allAccess], true);

    c.first = await seedCollection(server, org, {
      users: [
        [m.direct, { readOnly: true, hidePasswords: true }],
        [m.both, { readOnly: true }],
        [m.invited, {}],
        [m.revoked, { manage: true }],
        [m.manager, { readOnly: true }],
      ],
    });
    c.second = await seedCollection(server, org, { groups: [[group, { manage: true }]] });
    await db().updateTable('collections').set({ name: ENC.replace('2.A', '2.S') }).where('id', '=', c.second).execute();
    c.empty = await seedCollection(server, org, { users: [[m.empty, { hidePasswords: true }]] });
    items.first = [await seedOrgItem(server, org, [c.first]), await seedOrgItem(server, org, [c.first, c.second])];
    items.second = [items.first[1] as string, await seedOrgItem(server, org, [c.second])];
    items.trashed = [await seedOrgItem(server, org, [c.first])];
    await db().updateTable('ciphers').set({ deleted_date: new Date().toISOString() }).where('id', 'in', items.trashed).execute();
    items.unplaced = [await seedOrgItem(server, org)];
    // Another organization's collection and items, one of them wrongly placed in ours.
    c.theirs = await seedCollection(server, otherOrg, { users: [[m.direct, { manage: true }]] });
    items.theirs = [await seedOrgItem(server, otherOrg, [c.theirs]), await seedOrgItem(server, otherOrg, [c.theirs, c.first])];

    const res = await report(owner.token, org);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    rows = res.body as Row[];
  }, 120_000);

  it("lists a member's direct access with its flags and the collection's items not in the trash", () => {
    expect(rowsOf(rows, m.direct).map(access)).toEqual([
      { collectionId: c.first, groupId: null, readOnly: true, hidePasswords: true, manage: false, cipherIds: sorted(items.first) },
    ]);
    expect(rowsOf(rows, m.direct)[0]).toMatchObject({ groupName: null, collectionName: ENC, usesKeyConnector: false });
  });

  it('lists access through a group with the group, its flags and the items', () => {
    expect(rowsOf(rows, m.viaGroup).map(access)).toEqual([{ collectionId: c.second, groupId: group, readOnly: false, hidePasswords: false, manage: true, cipherIds: sorted(items.second) }]);
    expect(rowsOf(rows, m.viaGroup)[0]).toMatchObject({ groupName: 'Engineering', collectionName: ENC.replace('2.A', '2.S') });
  });

  it('lists each way a member reaches collections apart, direct first, without merging them', () => {
    expect(rowsOf(rows, m.both).map(access)).toEqual([
      { collectionId: c.first, groupId: null, readOnly: true, hidePasswords: false, manage: false, cipherIds: sorted(items.first) },
      { collectionId: c.second, groupId: group, readOnly: false, hidePasswords: false, manage: true, cipherIds: sorted(items.second) },
    ]);
  });

  it('gives a member who reaches no collection one row without one, owners included', () => {
    expect(rowsOf(rows, m.none)).toHaveLength(1);
    expect(rowsOf(rows, m.none)[0]).toMatchObject(NO_ACCESS);
    expect(rowsOf(rows, owner.memberId)).toHaveLength(1);
    expect(rowsOf(rows, owner.memberId)[0]).toMatchObject(NO_ACCESS);
  });

  it('lists a collection with no items, invited members, and not revoked ones', () => {
    expect(rowsOf(rows, m.empty).map(access)).toEqual([{ collectionId: c.empty, groupId: null, readOnly: false, hidePasswords: true, manage: false, cipherIds: [] }]);
    expect(rowsOf(rows, m.invited).map(access)).toEqual([{ collectionId: c.first, groupId: null, readOnly: false, hidePasswords: false, manage: false, cipherIds: sorted(items.first) }]);
    expect(rowsOf(rows, m.invited)[0]?.userName).toBeNull();
    expect(rowsOf(rows, m.invited)[0]?.email).toMatch(/@example\.com$/);
    expect(rowsOf(rows, m.revoked)).toEqual([]);
  });

  it('follows the access chain: the Manager role manages its collections, access to all reaches every one', () => {
    expect(rowsOf(rows, m.manager).map(access)).toEqual([{ collectionId: c.first, groupId: null, readOnly: false, hidePasswords: false, manage: true, cipherIds: sorted(items.first) }]);
    const everything = rowsOf(rows, m.allAccess);
    expect(sorted(everything.map((r) => r.collectionId as string))).toEqual(sorted([c.first, c.second, c.empty]));
    for (const r of everything) expect(r).toMatchObject({ groupId: allGroup, groupName: 'Everything', readOnly: false, hidePasswords: false, manage: true });
  });

  it("never shows another organization's collections or items, nor items in no collection", () => {
    const listed = new Set(rows.flatMap((r) => r.cipherIds));
    for (const id of [...items.theirs, ...items.trashed, ...items.unplaced]) expect(listed.has(id), id).toBe(false);
    expect(rows.some((r) => r.collectionId === c.theirs)).toBe(false);
    const members = new Set(rows.map((r) => r.userGuid));
    expect(members).toEqual(new Set([owner.memberId, ...Object.entries(m).filter(([name]) => name !== 'revoked').map(([, id]) => id)]));
  });
});

describe("the member access report's member fields", () => {
  it('names the account, and says whether two-step login and account recovery are on', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const email = freshEmail('recovering');
    const userId = await seedUser(server, email);
    await db().updateTable('users').set({ name: 'Ada' }).where('id', '=', userId).execute();
    const member = await seedMembership(server, { organizationId: org, userId, key: '4.aGVsbG8=' });
    await db().updateTable('organization_users').set({ reset_password_key: '4.cmVzZXQ=' }).where('id', '=', member).execute();
    const now = new Date().toISOString();
    await db().insertInto('two_factor_providers').values({ user_id: userId, type: 0, enabled: true, metadata: '{}', last_used_step: null, creation_date: now, revision_date: now }).execute();

    const first = rowsOf((await report(owner.token, org)).body as Row[], member)[0];
    expect(first).toMatchObject({ userName: 'Ada', email, twoFactorEnabled: true, accountRecoveryEnabled: true });
    expect(rowsOf((await report(owner.token, org)).body as Row[], owner.memberId)[0]).toMatchObject({ twoFactorEnabled: false, accountRecoveryEnabled: false });

    // Enrolment counts only while the organization uses account recovery.
    await db().updateTable('organizations').set({ use_reset_password: false }).where('id', '=', org).execute();
    expect(rowsOf((await report(owner.token, org)).body as Row[], member)[0]).toMatchObject({ accountRecoveryEnabled: false });
  });
});

describe('who may read the member access report', () => {
  it('is for owners, admins and accessReports members of an Enterprise organization', async () => {
    const { org, owner, stranger } = await freshOrgWithOwner(server);
    const admin = await actor(server, org, freshEmail('admin'), { type: Role.Admin });
    const reporter = await actor(server, org, freshEmail('reporter'), custom('accessReports'));
    const user = await actor(server, org, freshEmail('user'), { type: Role.User });
    const auditor = await actor(server, org, freshEmail('auditor'), custom('accessEventLogs'));
    for (const who of [owner, admin, reporter]) expect((await report(who.token, org)).status).toBe(200);
    for (const who of [user, auditor]) expect((await report(who.token, org)).status).toBe(403);
    expect((await report(stranger.token, org)).status).toBe(404);
    expect((await server.request('GET', `/api/reports/member-access/${org}`)).status).toBe(401);

    const teams = await seedOrganization(server, { planType: PlanType.TeamsAnnually, name: 'Teams' });
    const teamsOwner = await actor(server, teams, freshEmail('teams-owner'), { type: Role.Owner });
    const refused = await report(teamsOwner.token, teams);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe("Your organization's plan does not support this feature.");
  });

  it('refuses an organization whose report would pass its bounds, before building it', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const member = await seedTarget(server, org);
    const collection = await seedCollection(server, org, { users: [[member, {}], [owner.memberId, {}]] });
    for (let i = 0; i < 3; i++) await seedOrgItem(server, org, [collection]);
    const membership = await confirmedMembership(db(), org, owner.userId);
    if (!membership) throw new Error('no membership');
    const caller = { membership, client: NO_CLIENT, log: server.app.log };

    // Two rows of three item ids each: exactly at both bounds is fine, one past either is refused.
    expect(await createMemberAccessReport({ db: db(), limits: { rows: 2, itemIds: 6 } }).report(caller)).toHaveLength(2);
    await expect(createMemberAccessReport({ db: db(), limits: { rows: 1, itemIds: 6 } }).report(caller)).rejects.toThrow(/too large for the member access report/);
    await expect(createMemberAccessReport({ db: db(), limits: { rows: 2, itemIds: 5 } }).report(caller)).rejects.toThrow(/more than 2 accesses or 5 item ids/);
  });
});
