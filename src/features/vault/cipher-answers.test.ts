import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TSchema } from 'typebox';
import { actor, ENC, seedCollection, type Actor } from '../../../test/support/admin.js';
import { generateSymmetricKey, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody as fieldsBody, schemaErrors, type CipherKind } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { CipherDetailsResponse, CipherMiniResponse, CipherResponse } from './ciphers.schemas.js';

/**
 * Every route that answers an item, checked for what the 2026 clients parse: `data` only for an
 * item sealed whole, and then as a string (an object emptied whole vaults in clients 2026.7),
 * and `permissions: {delete, restore}` on every `cipher` and `cipherDetails`.
 */

let server: TestServer;
const key = generateSymmetricKey();
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const call = async (who: Actor, method: string, path: string, json?: unknown) => {
  const res = await server.request(method, `/api${path}`, { token: who.token, headers: CLIENT, ...(json === undefined ? {} : { json }) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(200);
  return res.body as Record<string, unknown>;
};

type Item = Record<string, unknown>;
const SCHEMAS: Record<string, TSchema> = { cipher: CipherResponse, cipherDetails: CipherDetailsResponse, cipherMini: CipherMiniResponse };

/** The text of an item sealed whole; the server keeps it unread but for its format_version. */
const SEALED = JSON.stringify({ format_version: 1, wrapped_cek: ENC, envelope: 'AAAA' });

beforeAll(async () => {
  server = await startTestServer();
}, 120_000);
afterAll(async () => server?.close());

/**
 * Every route that answers an item, walked with items sent field by field or, with `sealed`,
 * sealed whole; in an organization of its own, so that each walk sees its own items only.
 */
async function walk(sealed: boolean): Promise<[string, Item][]> {
  const org = await seedOrganization(server, { name: sealed ? 'Sealed' : 'Acme' });
  const tag = sealed ? 'sealed-' : '';
  const owner = await actor(server, org, `${tag}owner@example.com`, { type: OrganizationUserType.Owner });
  const member = await actor(server, org, `${tag}member@example.com`);
  const collection = await seedCollection(server, org, { users: [[member.memberId]] });
  const cipherBody = (kind: CipherKind, k: SymmetricKey, overrides: Record<string, unknown> = {}) =>
    fieldsBody(kind, k, sealed ? { ...overrides, data: SEALED } : overrides);
  const answers: [string, Item][] = [];
  const seen = (route: string, ...items: unknown[]) => {
    for (const item of items) answers.push([route, item as Item]);
  };
  // A personal item through its life.
  const created = await call(member, 'POST', '/ciphers', cipherBody('login', key));
  const id = created.id as string;
  seen('POST /ciphers', created);
  seen('GET /ciphers/{id}', await call(member, 'GET', `/ciphers/${id}`));
  seen('GET /ciphers/{id}/details', await call(member, 'GET', `/ciphers/${id}/details`));
  seen('GET /ciphers/{id}/full-details', await call(member, 'GET', `/ciphers/${id}/full-details`));
  seen('GET /ciphers', ...(await call(member, 'GET', '/ciphers')).data as Item[]);
  seen('PUT /ciphers/{id}', await call(member, 'PUT', `/ciphers/${id}`, cipherBody('login', key)));
  seen('PUT /ciphers/{id}/partial', await call(member, 'PUT', `/ciphers/${id}/partial`, { folderId: null, favorite: true }));
  seen('PUT /ciphers/{id}/archive', await call(member, 'PUT', `/ciphers/${id}/archive`));
  seen('PUT /ciphers/{id}/unarchive', await call(member, 'PUT', `/ciphers/${id}/unarchive`));
  await call(member, 'PUT', `/ciphers/${id}/delete`);
  seen('PUT /ciphers/{id}/restore', await call(member, 'PUT', `/ciphers/${id}/restore`));
  await call(member, 'PUT', '/ciphers/delete', { ids: [id] });
  seen('PUT /ciphers/restore', ...(await call(member, 'PUT', '/ciphers/restore', { ids: [id] })).data as Item[]);
  const upload = await call(member, 'POST', `/ciphers/${id}/attachment/v2`, { key: ENC, fileName: ENC, fileSize: 10, adminRequest: false });
  seen('POST /ciphers/{id}/attachment/v2', upload.cipherResponse);
  seen('DELETE /ciphers/{id}/attachment/{attachmentId}', (await call(member, 'DELETE', `/ciphers/${id}/attachment/${upload.attachmentId as string}`)).cipher);

  // Organization items, for a member and for the admin console.
  const orgItem = await call(member, 'POST', '/ciphers/create', { cipher: cipherBody('card', key, { organizationId: org }), collectionIds: [collection] });
  seen('POST /ciphers/create', orgItem);
  const personal = await call(member, 'POST', '/ciphers', cipherBody('identity', key));
  seen('PUT /ciphers/{id}/share', await call(member, 'PUT', `/ciphers/${personal.id as string}/share`, { cipher: cipherBody('identity', key, { organizationId: org }), collectionIds: [collection] }));
  const more = await call(member, 'POST', '/ciphers', cipherBody('secureNote', key));
  seen('PUT /ciphers/share', ...(await call(member, 'PUT', '/ciphers/share', { ciphers: [{ ...cipherBody('secureNote', key, { organizationId: org }), id: more.id }], collectionIds: [collection] })).data as Item[]);
  seen('PUT /ciphers/{id}/collections', await call(member, 'PUT', `/ciphers/${orgItem.id as string}/collections`, { collectionIds: [collection] }));
  seen('PUT /ciphers/{id}/collections_v2', (await call(member, 'PUT', `/ciphers/${orgItem.id as string}/collections_v2`, { collectionIds: [collection] })).cipher);
  const adminItem = await call(owner, 'POST', '/ciphers/admin', { cipher: cipherBody('sshKey', key, { organizationId: org }), collectionIds: [collection] });
  seen('POST /ciphers/admin', adminItem);
  seen('PUT /ciphers/{id}/admin', await call(owner, 'PUT', `/ciphers/${adminItem.id as string}/admin`, cipherBody('sshKey', key, { organizationId: org })));
  seen('GET /ciphers/{id}/admin', await call(owner, 'GET', `/ciphers/${adminItem.id as string}/admin`));
  seen('GET /ciphers/organization-details', ...(await call(owner, 'GET', `/ciphers/organization-details?organizationId=${org}`)).data as Item[]);
  await call(owner, 'PUT', `/ciphers/${adminItem.id as string}/delete-admin`);
  seen('PUT /ciphers/{id}/restore-admin', await call(owner, 'PUT', `/ciphers/${adminItem.id as string}/restore-admin`));
  seen('GET /organizations/{id}/export', ...(await call(owner, 'GET', `/organizations/${org}/export`)).ciphers as Item[]);
  seen('GET /sync', ...(await call(member, 'GET', '/sync')).ciphers as Item[]);
  return answers;
}

describe('item answers', () => {
  it.each([
    ['sent field by field', false],
    ['sealed whole', true],
  ])('of items %s carry data only when sealed and, for the per-user forms, the rights on the item, on every route', async (_, sealed) => {
    const answers = await walk(sealed);
    const routes = new Set(answers.map(([route]) => route));
    expect(routes.size).toBe(25);
    for (const [route, item] of answers) {
      expect(item, route).toBeTypeOf('object');
      if (sealed) expect(item, route).toMatchObject({ data: SEALED, name: null, notes: null, fields: null });
      else expect(item, route).not.toHaveProperty('data');
      const object = item.object as string;
      if (object === 'cipher' || object === 'cipherDetails') {
        expect(item.permissions, route).toEqual({ delete: expect.any(Boolean), restore: expect.any(Boolean) });
      } else {
        expect(['cipherMini', 'cipherMiniDetails'], route).toContain(object);
      }
      const schema = SCHEMAS[object];
      if (schema) expect(schemaErrors(schema, item), `${route} ${object}`).toEqual([]);
    }
  });
});
