import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, orgWithOwner, seedCollection, type Actor } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrgItem, seedPersonalItem } from '../../../test/support/org-items.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { PushType, type Push } from '../../platform/push/pushes.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { createSecurityTasks, SecurityTaskStatus } from './security-tasks.service.js';
import { organizationActor } from '../../platform/access/org-access.js';
import { EventSystemUser } from '../../platform/audit/event-type.js';
import { NO_CLIENT } from '../../http/request-context.js';

const clock = testClock(new Date('2026-11-22T12:00:00.000Z'));
let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
let reporter: Actor;
let editor: Actor;
let reader: Actor;
let stranger: Actor;
/** In a collection the editor may edit and the reader only read; in none of theirs; another organization's. */
let atRisk: string;
let elsewhere: string;
let foreign: string;

interface TaskJson {
  id: string;
  object: string;
  cipherId: string;
  status: number;
  type: number;
  organizationId: string;
}

const create = (token: string, cipherIds: string[], orgId = org) =>
  server.request('POST', `/api/tasks/${orgId}/bulk-create`, { token, json: { tasks: cipherIds.map((cipherId) => ({ type: 0, cipherId })) } });

beforeAll(async () => {
  server = await startTestServer({ clock });
  ({ org, owner, otherOrg, stranger } = await orgWithOwner(server));
  reporter = await actor(server, org, 'reporter@example.com', custom('accessReports'));
  editor = await actor(server, org, 'editor@example.com', { type: OrganizationUserType.User });
  reader = await actor(server, org, 'reader@example.com', { type: OrganizationUserType.User });
  const collection = await seedCollection(server, org, { users: [[editor.memberId], [reader.memberId, { readOnly: true }]] });
  atRisk = await seedOrgItem(server, org, [collection]);
  elsewhere = await seedOrgItem(server, org, [await seedCollection(server, org)]);
  foreign = await seedOrgItem(server, otherOrg);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('security tasks', () => {
  it('admins create tasks for items of the organization; a second request for a pending item answers the task already there', async () => {
    const res = await create(reporter.token, [atRisk, elsewhere]);
    expect(res.status, res.text).toBe(200);
    const tasks = res.body.data as TaskJson[];
    expect(tasks.map((t) => t.cipherId).sort()).toEqual([atRisk, elsewhere].sort());
    expect(tasks[0]).toMatchObject({ object: 'securityTask', organizationId: org, type: 0, status: SecurityTaskStatus.Pending });
    const again = await create(owner.token, [atRisk]);
    expect((again.body.data as TaskJson[]).map((t) => t.id)).toEqual([tasks.find((t) => t.cipherId === atRisk)?.id]);
    const count = await server.database.db.selectFrom('security_tasks').select('id').where('organization_id', '=', org).execute();
    expect(count).toHaveLength(2);
  });

  it('refuses items of another organization, personal items, bad bodies and non-admins, creating nothing', async () => {
    const before = (await server.database.db.selectFrom('security_tasks').select('id').execute()).length;
    const personal = await seedPersonalItem(server, owner.userId);
    for (const ids of [[foreign], [atRisk, personal], [randomUUID()]]) {
      const res = await create(owner.token, ids);
      expect(res.status, res.text).toBe(400);
      expect(res.text).toContain('Not items of this organization');
    }
    expect((await server.request('POST', `/api/tasks/${org}/bulk-create`, { token: owner.token, json: { tasks: [] } })).status).toBe(400);
    expect((await server.request('POST', `/api/tasks/${org}/bulk-create`, { token: owner.token, json: { tasks: [{ type: 7, cipherId: atRisk }] } })).status).toBe(400);
    expect((await create(editor.token, [atRisk])).status).toBe(403);
    expect((await create(stranger.token, [atRisk])).status).toBe(404);
    expect((await server.database.db.selectFrom('security_tasks').select('id').execute()).length).toBe(before);
  });

  it('members see the tasks of items they may edit, complete them, and the metrics count them', async () => {
    const mine = await server.request('GET', '/api/tasks', { token: editor.token });
    expect(mine.status, mine.text).toBe(200);
    const [task, ...more] = mine.body.data as TaskJson[];
    expect(more).toEqual([]);
    expect(task?.cipherId).toBe(atRisk);
    // Read-only access is no task of theirs; another organization's member sees none.
    const none = async (token: string) => {
      const res = await server.request('GET', '/api/tasks', { token });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual([]);
    };
    await none(reader.token);
    await none(stranger.token);

    const metrics = () => server.request('GET', `/api/organizations/${org}/security-tasks/metrics`, { token: reporter.token });
    expect((await metrics()).body).toEqual({ completedTasks: 0, totalTasks: 2 });

    expect((await server.request('PATCH', `/api/tasks/${task?.id}/complete`, { token: reader.token })).status).toBe(404);
    expect((await server.request('PATCH', `/api/tasks/${task?.id}/complete`, { token: stranger.token })).status).toBe(404);
    expect((await server.request('PATCH', `/api/tasks/${randomUUID()}/complete`, { token: editor.token })).status).toBe(404);
    const done = await server.request('PATCH', `/api/tasks/${task?.id}/complete`, { token: editor.token });
    expect(done.status, done.text).toBe(204);

    expect((await metrics()).body).toEqual({ completedTasks: 1, totalTasks: 2 });
    const official = await server.request('GET', `/api/tasks/${org}/metrics`, { token: owner.token });
    expect(official.body).toEqual({ completedTasks: 1, totalTasks: 2 });
    expect((await server.request('GET', '/api/tasks?status=0', { token: editor.token })).body.data).toEqual([]);
    expect(((await server.request('GET', '/api/tasks?status=1', { token: editor.token })).body.data as TaskJson[]).map((t) => t.id)).toEqual([task?.id]);
  });

  it('lists and counts the organization\'s tasks for admins and accessReports only', async () => {
    const listed = await server.request('GET', `/api/tasks/organization?organizationId=${org}&status=0`, { token: reporter.token });
    expect(listed.status, listed.text).toBe(200);
    expect((listed.body.data as TaskJson[]).map((t) => t.cipherId)).toEqual([elsewhere]);
    expect((await server.request('GET', `/api/tasks/organization?organizationId=${org}`, { token: editor.token })).status).toBe(403);
    expect((await server.request('GET', `/api/tasks/organization?organizationId=${org}`, { token: stranger.token })).status).toBe(404);
    // No organization named: none the caller is a member of (the access rule runs before the query is checked).
    expect((await server.request('GET', `/api/tasks/organization`, { token: owner.token })).status).toBe(404);
    expect((await server.request('GET', `/api/organizations/${org}/security-tasks/metrics`, { token: editor.token })).status).toBe(403);
    expect((await server.request('GET', `/api/organizations/${org}/security-tasks/metrics`, { token: stranger.token })).status).toBe(404);
  });

  it('tells the members who may edit an item to refresh their tasks, after the tasks are stored', async () => {
    const sent: Push[] = [];
    const tasks = createSecurityTasks({ db: server.database.db, clock, pushes: { send: (p) => void sent.push(...[p].flat()) } });
    const item = await seedOrgItem(server, org, [await seedCollection(server, org, { users: [[editor.memberId], [reader.memberId, { readOnly: true }]] })]);
    await tasks.bulkCreate({ membership: organizationActor(org, EventSystemUser.PublicApi, false), client: NO_CLIENT, log: server.app.log }, [{ type: 0, cipherId: item }]);
    const told = sent.map((p) => (p.target as { user: string }).user);
    // The editor may edit it; the read-only member and the owner (not in its collection) are not told.
    expect(told).toEqual([editor.userId]);
    expect(sent.every((p) => p.type === PushType.RefreshSecurityTasks && (p.payload as { UserId: string }).UserId === (p.target as { user: string }).user)).toBe(true);

    sent.length = 0;
    const asEditor = { userId: editor.userId, client: NO_CLIENT, log: server.app.log };
    const [task] = await tasks.forUser(asEditor, SecurityTaskStatus.Pending);
    await tasks.complete(asEditor, task?.id ?? '');
    expect(sent.map((p) => (p.target as { user: string }).user)).toEqual([editor.userId]);
  });
});
