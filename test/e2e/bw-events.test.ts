/**
 * The official `bw` CLI against a running server over HTTPS: client events, end to end. An
 * owner founds an organization, creates an item in it with `bw`, and shows it with
 * `bw get item`; the CLI posts Cipher_ClientViewed to /events/collect, and the event is in the
 * organization's log and the item's. One `bw` session: each CLI command costs seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { createOrganization } from '../support/org-founding.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';
import { EventType } from '../../src/platform/audit/event-type.js';

const SLOW = 300_000;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

let tls: TestTls;
let server: TestServer;
let owner: LoggedInUser;
let bw: BwCli;
let orgId: string;

beforeAll(async () => {
  tls = await createTestTls();
  server = await startTestServer({ tls, env: { DEPLOYMENT: 'cloud' } });
  owner = await createUser(server, { email: 'e2e-events@example.com', name: 'Owner', derivation: 'real' });
  orgId = (await createOrganization(server, owner, { name: 'Events Org' })).id;
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
  const login = await bw.login(owner.account.email, owner.account.password);
  expect(login.code, login.stderr).toBe(0);
}, SLOW);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

describe('bw and the events service', () => {
  it('logs Cipher_ClientViewed when bw shows an organization item', async () => {
    const collection = await server.database.db.selectFrom('collections').select('id').where('organization_id', '=', orgId).executeTakeFirstOrThrow();
    const created = await bw.json<{ id: string; organizationId: string }>([
      'create',
      'item',
      encode({ type: 1, name: 'Viewed login', organizationId: orgId, collectionIds: [collection.id], login: { username: 'ops', password: 'pw', uris: [] }, fields: [], reprompt: 0, favorite: false }),
    ]);
    expect(created.organizationId).toBe(orgId);

    const shown = await bw.json<{ id: string; name: string }>(['get', 'item', created.id]);
    expect(shown).toMatchObject({ id: created.id, name: 'Viewed login' });

    const log = await server.request('GET', `/api/organizations/${orgId}/events`, { token: owner.accessToken });
    expect(log.status, log.text).toBe(200);
    const viewed = (log.body.data as { type: number; cipherId: string; actingUserId: string; deviceType: number | null }[]).filter(
      (e) => e.type === Number(EventType.Cipher_ClientViewed),
    );
    expect(viewed).toHaveLength(1);
    expect(viewed[0]).toMatchObject({ cipherId: created.id, actingUserId: owner.userId });
    // The CLI says which client it is (device type 23 or 24/25 by platform).
    expect(viewed[0]?.deviceType).not.toBeNull();

    const itemLog = await server.request('GET', `/api/ciphers/${created.id}/events`, { token: owner.accessToken });
    expect((itemLog.body.data as { type: number }[]).map((e) => e.type)).toContain(EventType.Cipher_ClientViewed);
  }, SLOW);
});
