import { randomUUID } from 'node:crypto';
import { serializeCipherData, toCipherData } from '../../src/features/vault/cipher-data.js';
import type { CipherRequest } from '../../src/features/vault/ciphers.schemas.js';
import type { TestServer } from './test-server.js';

const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
/** A login item's stored content document (placeholder EncStrings; the server never decrypts). */
const DATA = serializeCipherData(toCipherData({ type: 1, name: ENC, login: { username: ENC } } as unknown as CipherRequest));

/** Inserts an organization item directly, placed in the given collections; returns its id. */
export async function seedOrgItem(server: TestServer, organizationId: string, collectionIds: string[] = []): Promise<string> {
  const id = await insertItem(server, { user_id: null, organization_id: organizationId });
  for (const collectionId of collectionIds) await server.database.db.insertInto('collection_ciphers').values({ collection_id: collectionId, cipher_id: id }).execute();
  return id;
}

/** Inserts a personal item of the user directly; returns its id. */
export function seedPersonalItem(server: TestServer, userId: string): Promise<string> {
  return insertItem(server, { user_id: userId, organization_id: null });
}

async function insertItem(server: TestServer, owner: { user_id: string | null; organization_id: string | null }): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await server.database.db
    .insertInto('ciphers')
    .values({ id, ...owner, type: 1, data: DATA, key: null, reprompt: 0, attachments: null, creation_date: now, revision_date: now, deleted_date: null })
    .execute();
  return id;
}
