import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { seedCollection } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

let server: TestServer;
let owner: LoggedInUser;
let org: string;
beforeAll(async () => {
  server = await startTestServer();
  owner = await createUser(server);
  org = await seedOrganization(server);
  await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner, status: OrganizationUserStatusType.Confirmed });
});
afterAll(async () => server.close());

const ask = async (token?: string) => server.request('GET', '/api/ciphers/has-unassigned-ciphers', token ? { token } : {});

describe('GET /api/ciphers/has-unassigned-ciphers', () => {
  it('is false while every item is in a collection, true once one is in none, false again when it is trashed', async () => {
    await seedOrgItem(server, org, [await seedCollection(server, org)]);
    expect((await ask(owner.accessToken)).text).toBe('false');
    const loose = await seedOrgItem(server, org);
    const res = await ask(owner.accessToken);
    expect(res.status).toBe(200);
    expect(res.text).toBe('true');
    await server.database.db.updateTable('ciphers').set({ deleted_date: new Date().toISOString() }).where('id', '=', loose).execute();
    expect((await ask(owner.accessToken)).text).toBe('false');
  });

  it('needs a signed-in user', async () => {
    expect((await ask()).status).toBe(401);
  });
});
