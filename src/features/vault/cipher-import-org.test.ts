import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, seedCollection, type Actor } from '../../../test/support/admin.js';
import { encryptText, generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

let server: TestServer;
let org: string;
let owner: Actor;
let importer: Actor;
let member: Actor;
let manager: Actor;
let existing: string;
const key = generateSymmetricKey();
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const call = (who: Actor, path: string, json: unknown) => server.request('POST', `/api${path}`, { token: who.token, headers: CLIENT, json });
const db = () => server.database.db;
const counts = async () => ({
  ciphers: (await db().selectFrom('ciphers').select('id').where('organization_id', '=', org).execute()).length,
  collections: (await db().selectFrom('collections').select('id').where('organization_id', '=', org).execute()).length,
});
const name = () => encryptText('Imported', key);
const body = (ciphers = 2, collections: { name: string; id?: string }[] = [{ name: name() }]) => ({
  ciphers: Array.from({ length: ciphers }, () => cipherBody('login', key, { organizationId: org })),
  collections,
  collectionRelationships: Array.from({ length: ciphers }, (_, i) => ({ key: i, value: i % collections.length })),
});
const path = () => `/ciphers/import-organization?organizationId=${org}`;

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  importer = await actor(server, org, 'importer@example.com', custom('accessImportExport'));
  member = await actor(server, org, 'member@example.com');
  manager = await actor(server, org, 'manager@example.com');
  existing = await seedCollection(server, org, { users: [[manager.memberId, { manage: true }], [member.memberId]] });
});
afterAll(async () => server?.close());

describe('POST /ciphers/import-organization', () => {
  it('imports items, new and existing collections and their relationships, with events', async () => {
    const before = await counts();
    const res = await call(owner, path(), body(3, [{ name: name() }, { name: name(), id: existing }]));
    expect(res.status, res.text).toBe(200);
    const after = await counts();
    expect(after).toEqual({ ciphers: before.ciphers + 3, collections: before.collections + 1 });
    // The importer manages the collection the import made.
    const managedByOwner = await db().selectFrom('collection_users').select('collection_id').where('organization_user_id', '=', owner.memberId).where('manage', '=', true).execute();
    expect(managedByOwner).toHaveLength(1);
    const inExisting = await db().selectFrom('collection_ciphers').select('cipher_id').where('collection_id', '=', existing).execute();
    expect(inExisting).toHaveLength(1);
    const events = await db().selectFrom('events').select('type').where('organization_id', '=', org).where('acting_user_id', '=', owner.userId).execute();
    expect(events.filter((e) => e.type === 1100)).toHaveLength(3);
    expect(events.filter((e) => e.type === 1300)).toHaveLength(1);
  });

  it('lets custom importers in, and managers into the collections they manage; 404 to everyone else', async () => {
    expect((await call(importer, path(), body())).status).toBe(200);
    expect((await call(manager, path(), body(1, [{ name: name(), id: existing }]))).status).toBe(200);
    const before = await counts();
    expect((await call(member, path(), body(1, [{ name: name(), id: existing }]))).status).toBe(404);
    // Without the import right an import must name a collection.
    expect((await call(manager, path(), body(0, []))).status).toBe(404);
    const stranger = await actor(server, await seedOrganization(server, { name: 'Elsewhere' }), 'stranger@example.com', { type: OrganizationUserType.Owner });
    expect((await call(stranger, path(), body())).status).toBe(404);
    expect(await counts()).toEqual(before);
  });

  it('writes nothing when one item is invalid, naming it', async () => {
    const before = await counts();
    const request = body(3);
    (request.ciphers[2] as Record<string, unknown>).name = 'not encrypted';
    const res = await call(owner, path(), request);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.validationErrors)).toContain('ciphers[2]');
    expect(await counts()).toEqual(before);
  });

  it('refuses relationships to no item or collection, the official limits, and a missing organization id', async () => {
    const before = await counts();
    const bad = body(1);
    bad.collectionRelationships = [{ key: 0, value: 5 }];
    const res = await call(owner, path(), bad);
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toHaveProperty(['collectionRelationships[0].value']);
    const tooMany = { ...body(0), collections: Array.from({ length: 2001 }, () => ({ name: name() })) };
    const big = await call(owner, path(), tooMany);
    expect(big.status).toBe(400);
    expect(big.body.message).toBe('You cannot import this much data at once.');
    expect((await call(owner, '/ciphers/import-organization', body())).status).toBe(400);
    expect(await counts()).toEqual(before);
  });
});
