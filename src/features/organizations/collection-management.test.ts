import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, orgWithCallers, type Actor } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

let server: TestServer;
let org: string;
let actors: Record<string, Actor>;

beforeAll(async () => {
  server = await startTestServer();
  ({ org, actors } = await orgWithCallers(server, { admin: { type: OrganizationUserType.Admin }, user: { type: OrganizationUserType.User } }));
});
afterAll(async () => server?.close());

const put = (who: string, json: unknown) => server.request('PUT', `/api/organizations/${org}/collection-management`, { token: actors[who]!.token, json });
const settings = { limitCollectionCreation: true, limitCollectionDeletion: true, limitItemDeletion: true, allowAdminAccessToAllCollectionItems: false };
const revisionOf = async (userId: string) => (await server.database.db.selectFrom('users').select('account_revision_date').where('id', '=', userId).executeTakeFirstOrThrow()).account_revision_date;

describe('PUT /organizations/{id}/collection-management', () => {
  it('sets the four settings for owners, records the event and makes members sync again', async () => {
    const before = await revisionOf(actors.user!.userId);
    await new Promise((r) => setTimeout(r, 5));
    const res = await put('owner', settings);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: org, ...settings });
    expect((await server.request('GET', `/api/organizations/${org}`, { token: actors.owner!.token })).body).toMatchObject(settings);
    expect(await eventsOf(server, EventType.Organization_CollectionManagement_Updated)).toHaveLength(1);
    expect(await revisionOf(actors.user!.userId)).not.toBe(before);

    // Older clients leave limitItemDeletion out: it keeps its value.
    const older = await put('owner', { limitCollectionCreation: false, limitCollectionDeletion: false, allowAdminAccessToAllCollectionItems: true });
    expect(older.body).toMatchObject({ limitCollectionCreation: false, limitCollectionDeletion: false, limitItemDeletion: true, allowAdminAccessToAllCollectionItems: true });
  });

  it('answers 404 to everyone but owners, and changes nothing', async () => {
    for (const who of ['admin', 'user', 'stranger']) expect((await put(who, settings)).status, who).toBe(404);
    expect((await server.request('GET', `/api/organizations/${org}`, { token: actors.owner!.token })).body).toMatchObject({ limitCollectionCreation: false });
  });

  it('refuses a body without a setting, naming it', async () => {
    const res = await put('owner', { limitCollectionCreation: true, limitCollectionDeletion: true });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {})).toContain('allowAdminAccessToAllCollectionItems');
  });
});
