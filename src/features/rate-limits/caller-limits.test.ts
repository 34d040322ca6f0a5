import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { memberOf, orgWithOwner } from '../../../test/support/members.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';

let server: TestServer;
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      RATE_LIMIT_COLLECT: '3/1m',
      RATE_LIMIT_COLLECT_EVENTS: '6/1h',
      RATE_LIMIT_IMPORT: '2/1h',
      RATE_LIMIT_EXPORT: '2/1h',
      RATE_LIMIT_BULK: '2/1m',
      RATE_LIMIT_ORGANIZATION_FACTOR: '1',
    },
  });
  alice = await createUser(server, { email: 'alice@example.com' });
  bob = await createUser(server, { email: 'bob@example.com' });
});
afterAll(async () => server?.close());

const exported = (n = 1) => Array.from({ length: n }, () => ({ type: EventType.User_ClientExportedVault }));
const collect = (user: LoggedInUser, events: unknown[]) => server.request('POST', '/events/collect', { token: user.accessToken, json: events });
const countEvents = async (userId: string) =>
  (await server.database.db.selectFrom('events').select('id').where('acting_user_id', '=', userId).where('type', '=', EventType.User_ClientExportedVault).execute()).length;

function expectRefused(res: { status: number; body: { message: string }; headers: { get(name: string): string | null } }, what: string): void {
  expect(res.status).toBe(429);
  expect(res.body.message).toMatch(new RegExp(`^Too many ${what}\\. Try again in \\d+ seconds?\\.$`));
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('per-caller limits of the expensive routes', () => {
  it('limits each user’s event uploads by requests and by events, writing nothing when refused', async () => {
    expect((await collect(alice, exported(4))).status).toBe(200);
    // Two events left in alice's bucket: three are refused whole.
    expectRefused(await collect(alice, exported(3)), 'events');
    expect(await countEvents(alice.userId)).toBe(4);
    expect((await collect(alice, exported(2))).status).toBe(200);
    // The fourth request of the minute is over the request limit, whatever it carries.
    expectRefused(await collect(alice, exported(1)), 'event uploads');
    expect(await countEvents(alice.userId)).toBe(6);
    // Another user has buckets of their own.
    expect((await collect(bob, exported(1))).status).toBe(200);
  });

  it('limits imports per user, refusing before the body is read', async () => {
    const body = { folders: [], ciphers: [cipherBody('login', alice.account.userKey)], folderRelationships: [] };
    for (let i = 0; i < 2; i++) expect((await server.request('POST', '/api/ciphers/import', { token: alice.accessToken, json: body })).status).toBe(200);
    const refused = await server.request('POST', '/api/ciphers/import', { token: alice.accessToken, body: '{not even json', headers: { 'content-type': 'application/json' } });
    expectRefused(refused, 'imports');
    const count = await server.database.db.selectFrom('ciphers').select('id').where('user_id', '=', alice.userId).execute();
    expect(count).toHaveLength(2);
  });

  it('limits bulk changes per user', async () => {
    const created = await server.request('POST', '/api/ciphers', { token: bob.accessToken, json: cipherBody('login', bob.account.userKey) });
    const move = () => server.request('PUT', '/api/ciphers/move', { token: bob.accessToken, json: { ids: [created.body.id], folderId: null } });
    expect((await move()).status).toBe(200);
    expect((await move()).status).toBe(200);
    expectRefused(await move(), 'bulk changes');
    // Single-item routes are not bulk changes.
    expect((await server.request('PUT', `/api/ciphers/${created.body.id}/delete`, { token: bob.accessToken })).status).toBe(200);
  });

  it('limits an organization’s members together on its routes', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const admin = await memberOf(server, orgId, { type: OrganizationUserType.Admin });
    const exportLog = (user: LoggedInUser) => server.request('GET', `/api/organizations/${orgId}/events/export`, { token: user.accessToken });
    expect((await exportLog(owner)).status).toBe(200);
    expect((await exportLog(admin)).status).toBe(200);
    // Each has an export left of their own, but the organization's bucket (factor 1) is empty.
    expectRefused(await exportLog(owner), 'exports');
  });
});
