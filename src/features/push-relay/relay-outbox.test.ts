import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { startRelayDouble, type RelayDouble } from '../../../test/support/relay-double.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { PushType } from '../../platform/push/pushes.js';

/*
 * The relay through the server's own outbox, as an operator runs it: a save answers at once and
 * the relay hears of it after; a hung relay holds its own requests open while saves go on.
 */

const METRICS_TOKEN = 'metrics-token-for-relay-tests';
let server: TestServer;
let relay: RelayDouble;
let user: LoggedInUser;

beforeAll(async () => {
  relay = await startRelayDouble();
  server = await startTestServer({
    env: {
      INSTALLATION_ID: relay.installationId,
      INSTALLATION_KEY: relay.installationKey,
      PUSH_RELAY_URI: relay.url,
      PUSH_IDENTITY_URI: relay.url,
      HEALTH_ENABLED: 'true',
      METRICS_ENABLED: 'true',
      METRICS_TOKEN,
    },
  });
  user = await seedAccount(server);
});
afterAll(async () => {
  relay.mode = 'ok';
  await server?.close();
  await relay?.close();
});
beforeEach(() => relay.reset());

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting for the relay');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const save = () => server.request('POST', '/api/ciphers', { token: user.accessToken, json: cipherBody('login', user.account.userKey) });
const sends = () => relay.calls.filter((call) => call.path === '/push/send');

describe('the mobile push relay behind the outbox', () => {
  it('registers a device token and relays each change after the save answered, skipping the acting device', async () => {
    const put = await server.request('PUT', `/api/devices/identifier/${TEST_DEVICE.deviceIdentifier}/token`, { token: user.accessToken, json: { pushToken: 'apns-token-1' } });
    expect(put.status, put.text).toBe(200);
    await until(() => relay.calls.some((call) => call.path === '/push/register'));

    const res = await save();
    expect(res.status, res.text).toBe(200);
    await until(() => sends().length === 1);
    expect(sends()[0]!.body).toMatchObject({
      userId: user.userId,
      organizationId: null,
      identifier: TEST_DEVICE.deviceIdentifier,
      type: PushType.SyncCipherCreate,
      payload: { id: res.body.id, userId: user.userId, organizationId: null, revisionDate: res.body.revisionDate },
    });
    // Each change once, never item contents.
    await new Promise((r) => setTimeout(r, 200));
    expect(sends()).toHaveLength(1);
    expect(JSON.stringify(sends()[0]!.body)).not.toContain(res.body.name);
  });

  it("sends nothing for a user without a phone: the relay could reach no device of theirs", async () => {
    const desk = await seedAccount(server);
    const res = await server.request('POST', '/api/ciphers', { token: desk.accessToken, json: cipherBody('login', desk.account.userKey) });
    expect(res.status).toBe(200);
    // The phone user's change, made after, is relayed: by then the other one would have been too.
    expect((await save()).status).toBe(200);
    await until(() => sends().length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(sends().map((call) => (call.body as { userId: string }).userId)).toEqual([user.userId]);
    expect(await server.database.db.selectFrom('push_outbox').select('id').execute()).toEqual([]);
  });

  it('answers saves while a hung relay holds its requests open, and keeps the pushes to send later', async () => {
    relay.mode = 'hang';
    try {
      const first = await save();
      expect(first.status).toBe(200);
      await until(() => relay.held.some((call) => call.path === '/push/send'));
      // The relay holds the first push and has not answered: later saves must not wait for it.
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const res = await save();
        expect(res.status, res.text).toBe(200);
        // The relay's calls time out after 10 s: a save that waited on one would take that long.
        expect(Date.now() - started).toBeLessThan(2000);
      }
      expect(sends()).toHaveLength(0);
      const health = await server.request('GET', '/api/healthz/extended');
      expect(health.body.results.push).toMatchObject({ status: 'Healthy', data: { channels: ['relay', 'web-push'] } });
      expect(health.body.results.push.data.waiting.relay).toBeGreaterThanOrEqual(1);
      const metrics = await server.request('GET', '/metrics', { token: METRICS_TOKEN });
      expect(metrics.text).toMatch(/^strongroom_push_outbox_pending\{channel="relay"\} [1-9]/m);
    } finally {
      relay.mode = 'ok';
    }
  });
});
