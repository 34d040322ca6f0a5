import type { LoggedInUser } from './accounts.js';
import { encryptText, encryptToEncString, generateSymmetricKey, rsaEncryptToEncString, type SymmetricKey } from './bw-crypto.js';
import { pooledRsaKeyPair } from './key-pool.js';
import type { TestServer } from './test-server.js';

export interface FoundingKeys {
  orgKey: SymmetricKey;
  /** The fields a client sends to found an organization: key for the founder, key pair, first collection. */
  fields: { key: string; keys: { publicKey: string; encryptedPrivateKey: string }; collectionName: string };
}

/** Keys as the web vault makes them: a fresh org key wrapped to the founder, an org key pair, a collection name. */
export function foundingKeys(founder: LoggedInUser): FoundingKeys {
  const orgKey = generateSymmetricKey();
  const pair = pooledRsaKeyPair();
  return {
    orgKey,
    fields: {
      key: rsaEncryptToEncString(orgKey.raw, founder.account.publicKeyB64),
      keys: { publicKey: pair.publicKeyB64, encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, orgKey) },
      collectionName: encryptText('Default collection', orgKey),
    },
  };
}

/** POST /api/organizations on a cloud server; returns the new organization's id. */
export async function createOrganization(
  server: TestServer,
  founder: LoggedInUser,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; orgKey: SymmetricKey }> {
  const { orgKey, fields } = foundingKeys(founder);
  const res = await server.request('POST', '/api/organizations', {
    token: founder.accessToken,
    json: { name: 'Acme', billingEmail: 'billing@acme.test', planType: 20, ...fields, ...overrides },
  });
  if (res.status !== 200) throw new Error(`organization creation failed: ${res.status} ${res.text}`);
  return { id: res.body.id as string, orgKey };
}
