import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ENC } from './admin.js';
import type { TestServer } from './test-server.js';

/**
 * Gives the organization an API key (inserted directly, as `POST /organizations/{id}/api-key`
 * would store it) and logs in with it as an integrator does; answers the bearer token and the key.
 */
export async function orgApiToken(server: TestServer, organizationId: string): Promise<{ token: string; apiKey: string }> {
  const apiKey = randomBytes(15).toString('hex');
  const existing = await server.database.db.selectFrom('organization_api_keys').select('id').where('organization_id', '=', organizationId).where('type', '=', 0).executeTakeFirst();
  if (existing) {
    await server.database.db.updateTable('organization_api_keys').set({ api_key: apiKey }).where('id', '=', existing.id).execute();
  } else {
    await server.database.db
      .insertInto('organization_api_keys')
      .values({ id: randomUUID(), organization_id: organizationId, type: 0, api_key: apiKey, revision_date: new Date().toISOString() })
      .execute();
  }
  const res = await server.request('POST', '/identity/connect/token', {
    form: { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${organizationId}`, client_secret: apiKey },
  });
  if (res.status !== 200) throw new Error(`organization API key login failed: ${res.status} ${res.text}`);
  return { token: String(res.body.access_token), apiKey };
}

/**
 * A machine account of the organization with an access token (rows inserted directly, the secret
 * stored as its SHA-256 as the server keeps it), logged in as the SDK does; answers the bearer token.
 */
export async function machineAccountToken(server: TestServer, organizationId: string): Promise<string> {
  const db = server.database.db;
  const now = new Date().toISOString();
  await db.updateTable('organizations').set({ use_secrets_manager: true }).where('id', '=', organizationId).execute();
  const serviceAccountId = randomUUID();
  await db.insertInto('service_accounts').values({ id: serviceAccountId, organization_id: organizationId, name: ENC, creation_date: now, revision_date: now }).execute();
  const id = randomUUID();
  const secret = randomBytes(16).toString('hex');
  await db
    .insertInto('access_tokens')
    .values({
      id,
      service_account_id: serviceAccountId,
      name: ENC,
      client_secret_hash: createHash('sha256').update(secret, 'utf8').digest('base64'),
      scope: JSON.stringify(['api.secrets']),
      encrypted_payload: ENC,
      key: ENC,
      expire_at: null,
      creation_date: now,
      revision_date: now,
    })
    .execute();
  const res = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'client_credentials', scope: 'api.secrets', client_id: id, client_secret: secret } });
  if (res.status !== 200) throw new Error(`machine login failed: ${res.status} ${res.text}`);
  return String(res.body.access_token);
}
