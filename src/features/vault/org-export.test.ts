import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { custom, orgWithCallers, seedCollection, type Actor } from '../../../test/support/admin.js';
import { seedOrgItem, seedPersonalItem } from '../../../test/support/org-items.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

let server: TestServer;
let org: string;
let actors: Record<string, Actor>;
let managed: string;
let readOnly: string;
let unassigned: string;
const items: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer();
  ({ org, actors } = await orgWithCallers(server, {
    exporter: custom('accessImportExport'),
    editor: custom('editAnyCollection'),
    manager: { type: OrganizationUserType.User },
    reader: { type: OrganizationUserType.User },
  }));
  managed = await seedCollection(server, org, { users: [[actors.manager!.memberId, { manage: true }], [actors.reader!.memberId, { readOnly: true }]] });
  readOnly = await seedCollection(server, org, { users: [[actors.manager!.memberId, { readOnly: true }]] });
  items.managed = await seedOrgItem(server, org, [managed]);
  items.both = await seedOrgItem(server, org, [managed, readOnly]);
  items.readOnly = await seedOrgItem(server, org, [readOnly]);
  unassigned = await seedOrgItem(server, org);
  await seedPersonalItem(server, actors.owner!.userId);
}, 120_000);
afterAll(async () => server?.close());

const exportAs = (who: string) => server.request('GET', `/api/organizations/${org}/export`, { token: actors[who]!.token });
const ids = (list: { id: string }[]) => list.map((x) => x.id).sort();

describe('GET /organizations/{id}/export', () => {
  it('answers the whole vault, with each item in the admin form and its collections, to owners and custom members who may export', async () => {
    for (const who of ['owner', 'exporter']) {
      const res = await exportAs(who);
      expect(res.status, who).toBe(200);
      expect(res.body.object).toBe('organizationExport');
      expect(ids(res.body.collections)).toEqual([managed, readOnly].sort());
      const body = res.body as { collections: { object: string; organizationId: string }[]; ciphers: { id: string; collectionIds: string[] }[] };
      expect(body.collections.every((c) => c.object === 'collection' && c.organizationId === org)).toBe(true);
      expect(ids(body.ciphers)).toEqual([items.managed, items.both, items.readOnly, unassigned].sort());
      const both = body.ciphers.find((c) => c.id === items.both)!;
      expect(both).toMatchObject({ object: 'cipherMiniDetails', organizationId: org });
      expect([...both.collectionIds].sort()).toEqual([managed, readOnly].sort());
    }
  });

  it('answers a member the collections they manage and the items in them, nothing else', async () => {
    const res = await exportAs('manager');
    expect(res.status).toBe(200);
    expect(ids(res.body.collections)).toEqual([managed]);
    expect(ids(res.body.ciphers)).toEqual([items.managed, items.both].sort());
  });

  it('answers 404 to members who manage nothing and may not export, and to strangers', async () => {
    for (const who of ['reader', 'editor', 'stranger']) expect((await exportAs(who)).status, who).toBe(404);
  });
});
