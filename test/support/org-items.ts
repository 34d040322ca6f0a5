import { randomUUID } from 'node:crypto';
import { serializeCipherData, toCipherData } from '../../src/features/vault/cipher-data.js';
import type { CipherRequest } from '../../src/features/vault/ciphers.schemas.js';
import type { TestServer } from './test-server.js';

const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
/** A login item's stored content document (placeholder EncStrings; the server never decrypts). */
const DATA = serializeCipherData(toCipherData({ type: 1, name: ENC, login: { username: ENC } } as unknown as CipherRequest));

/** Inserts an organization item directly, placed in the given collections; returns its id. */
export async function seedOrgItem(server: TestServer, organizationId: string, collectionIds: string[] = []): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const db = server.database.db;
  await db
    .insertInto('ciphers')
    .values({ id, user_id: null, organization_id: organizationId, type: 1, data: DATA, key: null, reprompt: 0, attachments: null, creation_date: now, revision_date: now, deleted_date: null })
    .execute();
  for (const collectionId of collectionIds) await db.insertInto('collection_ciphers').values({ collection_id: collectionId, cipher_id: id }).execute();
  return id;
}
