import { randomBytes, randomUUID } from 'node:crypto';
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
