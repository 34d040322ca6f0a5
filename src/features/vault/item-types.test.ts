import { PureCrypto } from '@bitwarden/sdk-internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, seedCollection, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, schemaErrors } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { BANK_ACCOUNT_FIELDS, CipherMiniResponse, CipherResponse, DRIVERS_LICENSE_FIELDS, PASSPORT_FIELDS } from './ciphers.schemas.js';

/**
 * The item types of 2026 (6 bank account, 7 driver's license, 8 passport) through every write
 * path, with their fields encrypted and decrypted by the official clients' SDK
 * (@bitwarden/sdk-internal's PureCrypto), and types the server does not know refused whole.
 */

let server: TestServer;
let org: string;
let owner: Actor;
let member: Actor;
let collection: string;
/** The organization's key (the server never sees it; items in the organization are encrypted with it). */
const orgKey = PureCrypto.make_user_key_aes256_cbc_hmac();
const CLIENT = { 'bitwarden-client-version': '2026.9.0', 'device-type': '25' };

const call = (who: Actor, method: string, path: string, json?: unknown, headers: Record<string, string> = CLIENT) =>
  server.request(method, `/api${path}`, { token: who.token, headers, ...(json === undefined ? {} : { json }) });
const userKey = (who: Actor) => new Uint8Array(who.account.userKey.raw);
const encrypt = (text: string, key: Uint8Array) => PureCrypto.symmetric_encrypt_string(text, key);
const decrypt = (enc: string, key: Uint8Array) => PureCrypto.symmetric_decrypt_string(enc, key);

const KINDS = [
  { type: 6, object: 'bankAccount', fields: BANK_ACCOUNT_FIELDS },
  { type: 7, object: 'driversLicense', fields: DRIVERS_LICENSE_FIELDS },
  { type: 8, object: 'passport', fields: PASSPORT_FIELDS },
] as const;
type Kind = (typeof KINDS)[number];
const TYPE_OBJECTS = ['login', 'secureNote', 'card', 'identity', 'sshKey', 'bankAccount', 'driversLicense', 'passport'];

/** The plain value a test puts in a field (`tag` tells one write from the next). */
const plain = (kind: Kind, field: string, tag: string) => `${kind.object}.${field} ${tag}`;

/** A create/update body as a 2026 client sends it: every type's slot, nulls included, only `kind`'s filled. */
function itemBody(kind: Kind, key: Uint8Array, tag = 'v1', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: kind.type,
    name: encrypt(`${kind.object} ${tag}`, key),
    notes: encrypt('notes', key),
    favorite: false,
    reprompt: 0,
    key: null,
    folderId: null,
    organizationId: null,
    fields: [{ type: 1, name: encrypt('hidden', key), value: encrypt('hidden value', key), linkedId: null }],
    passwordHistory: null,
    lastKnownRevisionDate: null,
    ...Object.fromEntries(TYPE_OBJECTS.map((o) => [o, null])),
    [kind.object]: Object.fromEntries(kind.fields.map((f) => [f, encrypt(plain(kind, f, tag), key)])),
    ...overrides,
  };
}

/** Decrypts the item's sub-object of its type and checks every field against what `tag` wrote. */
function expectFields(item: Record<string, unknown>, kind: Kind, key: Uint8Array, tag: string): void {
  expect(item.type).toBe(kind.type);
  const sub = item[kind.object] as Record<string, string>;
  expect(Object.keys(sub)).toEqual([...kind.fields]);
  for (const field of kind.fields) expect(decrypt(sub[field]!, key), field).toBe(plain(kind, field, tag));
  expect(decrypt(item.name as string, key)).toBe(`${kind.object} ${tag}`);
  for (const other of TYPE_OBJECTS.filter((o) => o !== kind.object)) expect(item[other] ?? null, other).toBeNull();
}

const syncItems = async (who: Actor, headers: Record<string, string> = CLIENT) => {
  const res = await call(who, 'GET', '/sync', undefined, headers);
  expect(res.status, res.text).toBe(200);
  return res.body.ciphers as Record<string, unknown>[];
};
const countCiphers = async () => (await server.database.db.selectFrom('ciphers').select('id').execute()).length;

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  member = await actor(server, org, 'member@example.com');
  collection = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [member.memberId]] });
}, 120_000);
afterAll(async () => server?.close());

describe.each(KINDS)('item type $type ($object)', (kind) => {
  it('is created, synced, updated, shared to an organization and exported with every field', async () => {
    const key = userKey(member);
    const created = await call(member, 'POST', '/ciphers', itemBody(kind, key));
    expect(created.status, created.text).toBe(200);
    expect(schemaErrors(CipherResponse, created.body)).toEqual([]);
    expectFields(created.body, kind, key, 'v1');
    const id = created.body.id as string;

    const synced = (await syncItems(member)).find((c) => c.id === id)!;
    expectFields(synced, kind, key, 'v1');
    expect(synced).toMatchObject({ object: 'cipherDetails', permissions: { delete: true, restore: true } });

    const updated = await call(member, 'PUT', `/ciphers/${id}`, itemBody(kind, key, 'v2'));
    expect(updated.status, updated.text).toBe(200);
    expectFields(updated.body, kind, key, 'v2');
    expectFields((await call(member, 'GET', `/ciphers/${id}`)).body, kind, key, 'v2');

    // Moving it into the organization re-encrypts it with the organization's key.
    const shared = await call(member, 'PUT', `/ciphers/${id}/share`, { cipher: itemBody(kind, orgKey, 'org', { organizationId: org }), collectionIds: [collection] });
    expect(shared.status, shared.text).toBe(200);
    expectFields(shared.body, kind, orgKey, 'org');
    expectFields((await syncItems(owner)).find((c) => c.id === id)!, kind, orgKey, 'org');

    const exported = await call(owner, 'GET', `/organizations/${org}/export`);
    expect(exported.status, exported.text).toBe(200);
    const item = (exported.body.ciphers as Record<string, unknown>[]).find((c) => c.id === id)!;
    expect(item.object).toBe('cipherMiniDetails');
    expectFields(item, kind, orgKey, 'org');
  });

  it('is created in an organization, by the admin route too, and shared in bulk', async () => {
    const created = await call(member, 'POST', '/ciphers/create', { cipher: itemBody(kind, orgKey, 'create', { organizationId: org }), collectionIds: [collection] });
    expect(created.status, created.text).toBe(200);
    expectFields(created.body, kind, orgKey, 'create');

    const asAdmin = await call(owner, 'POST', '/ciphers/admin', { cipher: itemBody(kind, orgKey, 'admin', { organizationId: org }), collectionIds: [collection] });
    expect(asAdmin.status, asAdmin.text).toBe(200);
    expect(schemaErrors(CipherMiniResponse, asAdmin.body)).toEqual([]);
    expectFields(asAdmin.body, kind, orgKey, 'admin');
    const edited = await call(owner, 'PUT', `/ciphers/${asAdmin.body.id}/admin`, itemBody(kind, orgKey, 'admin2', { organizationId: org }));
    expect(edited.status, edited.text).toBe(200);
    expectFields(edited.body, kind, orgKey, 'admin2');

    const personal = await call(member, 'POST', '/ciphers', itemBody(kind, userKey(member)));
    const bulk = await call(member, 'PUT', '/ciphers/share', { ciphers: [{ ...itemBody(kind, orgKey, 'bulk', { organizationId: org }), id: personal.body.id }], collectionIds: [collection] });
    expect(bulk.status, bulk.text).toBe(200);
    expectFields((bulk.body.data as Record<string, unknown>[])[0]!, kind, orgKey, 'bulk');
  });

  it('is imported into a personal vault and into an organization', async () => {
    const key = userKey(member);
    const before = new Set((await syncItems(member)).map((c) => c.id));
    const imported = await call(member, 'POST', '/ciphers/import', { folders: [], ciphers: [itemBody(kind, key, 'imported')], folderRelationships: [] });
    expect(imported.status, imported.text).toBe(200);
    const fresh = (await syncItems(member)).filter((c) => !before.has(c.id));
    expect(fresh).toHaveLength(1);
    expectFields(fresh[0]!, kind, key, 'imported');

    const orgImport = await call(owner, 'POST', `/ciphers/import-organization?organizationId=${org}`, {
      ciphers: [itemBody(kind, orgKey, 'org-import', { organizationId: org })],
      collections: [],
      collectionRelationships: [],
    });
    expect(orgImport.status, orgImport.text).toBe(200);
    const exported = (await call(owner, 'GET', `/organizations/${org}/export`)).body.ciphers as Record<string, unknown>[];
    const found = exported.filter((c) => c.type === kind.type && decrypt(c.name as string, orgKey) === `${kind.object} org-import`);
    expect(found).toHaveLength(1);
    expectFields(found[0]!, kind, orgKey, 'org-import');
  });

  it("is refused without its sub-object, naming it, and its fields must be encrypted strings", async () => {
    const key = userKey(member);
    const missing = await call(member, 'POST', '/ciphers', itemBody(kind, key, 'x', { [kind.object]: null }));
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.validationErrors)).toEqual([kind.object]);
    const field = kind.fields[0];
    const plainText = await call(member, 'POST', '/ciphers', itemBody(kind, key, 'x', { [kind.object]: { [field]: 'not encrypted' } }));
    expect(plainText.status).toBe(400);
    expect(Object.keys(plainText.body.validationErrors)).toEqual([`${kind.object}.${field}`]);
  });
});

describe('sync and the client version', () => {
  it('leaves the 2026 item types out for clients older than 2026.2, as the official server does', async () => {
    const key = userKey(owner);
    const ids: Record<number, string> = {};
    for (const kind of KINDS) ids[kind.type] = (await call(owner, 'POST', '/ciphers', itemBody(kind, key))).body.id as string;
    const login = (await call(owner, 'POST', '/ciphers', cipherBody('login', owner.account.userKey))).body.id as string;
    const ssh = (await call(owner, 'POST', '/ciphers', cipherBody('sshKey', owner.account.userKey))).body.id as string;
    const seen = async (version?: string) => {
      const items = await syncItems(owner, version ? { 'bitwarden-client-version': version } : {});
      return [login, ssh, ...Object.values(ids)].filter((id) => items.some((c) => c.id === id));
    };
    // Each version in turn, twice: the cached answer of one client must not reach another.
    for (let round = 0; round < 2; round++) {
      expect(await seen('2026.2.0')).toEqual([login, ssh, ids[6], ids[7], ids[8]]);
      expect(await seen('2026.1.1')).toEqual([login, ssh]);
      expect(await seen('2024.11.0')).toEqual([login]);
      expect(await seen()).toEqual([login]);
    }
  });
});

describe('unknown item types', () => {
  const UNKNOWN = [9, 42, -1, 0];
  const unknown = (type: number, key: Uint8Array, overrides: Record<string, unknown> = {}) => ({ ...itemBody(KINDS[0], key), type, ...overrides });

  it('are refused naming the type on every write of one item, and nothing is stored', async () => {
    const key = userKey(member);
    const existing = (await call(member, 'POST', '/ciphers', itemBody(KINDS[2], key))).body.id as string;
    const orgItem = (await call(member, 'POST', '/ciphers/create', { cipher: itemBody(KINDS[1], orgKey, 'o', { organizationId: org }), collectionIds: [collection] })).body.id as string;
    const before = await countCiphers();
    for (const type of UNKNOWN) {
      const org1 = unknown(type, orgKey, { organizationId: org });
      const cases: [Actor, string, string, unknown, string][] = [
        [member, 'POST', '/ciphers', unknown(type, key), 'type'],
        [member, 'PUT', `/ciphers/${existing}`, unknown(type, key), 'type'],
        [member, 'POST', '/ciphers/create', { cipher: org1, collectionIds: [collection] }, 'cipher.type'],
        [member, 'PUT', `/ciphers/${existing}/share`, { cipher: org1, collectionIds: [collection] }, 'cipher.type'],
        [member, 'PUT', '/ciphers/share', { ciphers: [{ ...org1, id: existing }], collectionIds: [collection] }, 'ciphers[0].type'],
        [owner, 'POST', '/ciphers/admin', { cipher: org1, collectionIds: [collection] }, 'cipher.type'],
        [owner, 'PUT', `/ciphers/${orgItem}/admin`, org1, 'type'],
      ];
      for (const [who, method, path, body, field] of cases) {
        const res = await call(who, method, path, body);
        expect(res.status, `${type} ${method} ${path}`).toBe(400);
        expect(Object.keys(res.body.validationErrors ?? {}), `${type} ${method} ${path}`).toEqual([field]);
      }
    }
    expect(await countCiphers()).toBe(before);
    // The items written before are as they were.
    expectFields((await call(member, 'GET', `/ciphers/${existing}`)).body, KINDS[2], key, 'v1');
    expect((await call(member, 'GET', `/ciphers/${orgItem}`)).body.type).toBe(7);
  });

  it('refuse a whole import, personal or organization, when one item has one', async () => {
    const key = userKey(member);
    const before = await countCiphers();
    const folders = (await server.database.db.selectFrom('folders').select('id').execute()).length;
    const good = KINDS.map((kind) => itemBody(kind, key));
    for (const type of UNKNOWN) {
      const res = await call(member, 'POST', '/ciphers/import', {
        folders: [{ name: encrypt('folder', key) }],
        ciphers: [...good, unknown(type, key)],
        folderRelationships: [{ key: 0, value: 0 }],
      });
      expect(res.status, String(type)).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {})).toEqual(['ciphers[3].type']);
      const orgRes = await call(owner, 'POST', `/ciphers/import-organization?organizationId=${org}`, {
        ciphers: [itemBody(KINDS[0], orgKey, 'x', { organizationId: org }), unknown(type, orgKey, { organizationId: org })],
        collections: [{ name: encrypt('new collection', orgKey) }],
        collectionRelationships: [{ key: 1, value: 0 }],
      });
      expect(orgRes.status, String(type)).toBe(400);
      expect(Object.keys(orgRes.body.validationErrors ?? {})).toEqual(['ciphers[1].type']);
    }
    expect(await countCiphers()).toBe(before);
    expect((await server.database.db.selectFrom('folders').select('id').execute()).length).toBe(folders);
  });
});
