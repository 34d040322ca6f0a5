import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedUser } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startAnsweringService, startPushService, type TestPushService } from '../../../test/support/push-service.js';
import { LogCapture, startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { createSecretBox } from '../../platform/auth/secret-box.js';
import { OrganizationUserStatusType as Status } from '../../platform/access/roles.js';
import { PushType, type Push } from '../../platform/push/pushes.js';
import { systemClock } from '../../shared/clock.js';
import type { OutboxMessage } from '../push-delivery/channel.js';
import { createWebPushChannel, type WebPushChannel } from './web-push.channel.js';
import { saveSubscription } from './web-push.repository.js';
import { ensureVapidKeys } from './vapid-keys.js';

const SECRETS_KEY = randomBytes(32);
let server: TestServer;
let service: TestPushService;
let channel: WebPushChannel;
const logs = new LogCapture();
const enqueued: { channel: string; message: OutboxMessage }[] = [];

beforeAll(async () => {
  [server, service] = await Promise.all([startTestServer({ env: { SECRETS_KEY: SECRETS_KEY.toString('base64') } }), startPushService()]);
  channel = createWebPushChannel({
    db: server.database.db,
    clock: systemClock,
    secretBox: createSecretBox(SECRETS_KEY),
    outbox: { enqueue: (name, message) => enqueued.push({ channel: name, message }) },
    config: { publicUrl: 'https://vault.example.com' },
    log: pino({ level: 'info' }, logs),
    allowPrivateAddresses: true,
    timeoutMs: 2000,
  });
});
afterAll(async () => {
  channel.close();
  await Promise.all([server?.close(), service?.close()]);
});

const db = () => server.database.db;
const now = () => new Date().toISOString();

/** A device of the user, subscribed at the push service (or at `endpoint`, with a browser's keys from the service). */
async function subscribedDevice(userId: string, endpoint?: string) {
  const id = randomUUID();
  const identifier = randomUUID();
  await db().insertInto('devices').values({ id, user_id: userId, type: 2, identifier, name: 'chrome', push_token: null, creation_date: now(), revision_date: now() }).execute();
  const subscription = await service.subscribe((await ensureVapidKeys({ db: db(), secretBox: createSecretBox(SECRETS_KEY), clock: systemClock })).publicKey);
  await saveSubscription(db(), id, { endpoint: endpoint ?? subscription.endpoint, ...subscription.keys }, now());
  return { id, identifier, subscription };
}

const cipherPush = (target: Push['target'], contextId: string | null = null): Push => ({
  type: PushType.SyncCipherUpdate,
  payload: { Id: randomUUID(), UserId: 'user' in target ? target.user : null, OrganizationId: null, RevisionDate: new Date('2026-11-30T12:00:00Z'), CollectionIds: null },
  contextId,
  target,
});

/** Runs the message the channel made for the push through deliver, as the outbox would. */
async function deliver(push: Push): Promise<void> {
  const message = channel.messageFor(push);
  expect(message).not.toBeNull();
  await channel.deliver(JSON.parse(JSON.stringify(message)) as OutboxMessage, 1);
}

describe('the Web Push channel', () => {
  it('sends the official payload, encrypted for the browser and signed with the VAPID key, to every device but the acting one', async () => {
    const userId = await seedUser(server);
    const [acting, other] = [await subscribedDevice(userId), await subscribedDevice(userId)];
    const push = cipherPush({ user: userId }, acting.identifier);
    await deliver(push);

    expect(await service.messages(acting.subscription)).toEqual([]);
    const [received, ...more] = await service.messages(other.subscription);
    expect(more).toEqual([]);
    // What the extension does with it: new NotificationResponse(event.data.json().data).
    const data = (JSON.parse(received ?? '') as { data: { type: unknown; payload: unknown } }).data;
    expect(data.type).toBe(PushType.SyncCipherUpdate);
    expect(typeof data.payload).toBe('string');
    expect(JSON.parse(data.payload as string)).toEqual({ ...push.payload, RevisionDate: '2026-11-30T12:00:00.000Z' });
  });

  it("reaches an organization's confirmed members only, read when the push is delivered", async () => {
    const organizationId = await seedOrganization(server);
    const [confirmed, invited, revoked, later] = await Promise.all([seedUser(server), seedUser(server), seedUser(server), seedUser(server)]);
    await seedMembership(server, { organizationId, userId: confirmed, status: Status.Confirmed });
    await seedMembership(server, { organizationId, userId: invited, status: Status.Invited });
    await seedMembership(server, { organizationId, userId: revoked, status: Status.Revoked });
    const devices = await Promise.all([confirmed, invited, revoked, later].map((u) => subscribedDevice(u)));
    const push: Push = { type: PushType.PolicyChanged, payload: { OrganizationId: organizationId }, contextId: null, target: { organization: organizationId } };
    const message = JSON.parse(JSON.stringify(channel.messageFor(push))) as OutboxMessage;
    // Confirmed after the push was made, before it was delivered.
    await seedMembership(server, { organizationId, userId: later, status: Status.Confirmed });
    await channel.deliver(message, 1);
    const counts = await Promise.all(devices.map(async (d) => (await service.messages(d.subscription)).length));
    expect(counts).toEqual([1, 0, 0, 1]);
  });

  it('makes nothing for the anonymous hub', () => {
    expect(channel.messageFor({ type: PushType.AuthRequestResponse, payload: { Id: randomUUID() }, contextId: null, target: { authRequest: randomUUID() } })).toBeNull();
  });

  it('skips removed devices and sends each browser a change once', async () => {
    const [userId, second] = [await seedUser(server), await seedUser(server)];
    const removed = await subscribedDevice(userId);
    await db().updateTable('devices').set({ active: false }).where('id', '=', removed.id).execute();
    const shared = await subscribedDevice(userId);
    // One browser, two accounts of the same organization: the same subscription on two devices.
    const twin = await subscribedDevice(second, shared.subscription.endpoint);
    await db().updateTable('web_push_subscriptions').set({ p256dh: shared.subscription.keys.p256dh, auth: shared.subscription.keys.auth }).where('device_id', '=', twin.id).execute();
    const organizationId = await seedOrganization(server);
    for (const u of [userId, second]) await seedMembership(server, { organizationId, userId: u, status: Status.Confirmed });
    await deliver({ type: PushType.SyncOrgKeys, payload: { UserId: userId, Date: new Date() }, contextId: null, target: { organization: organizationId } });
    expect(await service.messages(removed.subscription)).toEqual([]);
    expect(await service.messages(shared.subscription)).toHaveLength(1);
  });

  it('removes a subscription the push service says is gone (410, 404)', async () => {
    const userId = await seedUser(server);
    const expired = await subscribedDevice(userId);
    await service.expire(expired.subscription);
    const notFound = await startAnsweringService(404);
    try {
      const unknown = await subscribedDevice(userId, notFound.endpoint('unknown'));
      const kept = await subscribedDevice(userId);
      await deliver(cipherPush({ user: userId }));
      const left = await db().selectFrom('web_push_subscriptions').select('device_id').where('device_id', 'in', [expired.id, unknown.id, kept.id]).execute();
      expect(left.map((r) => r.device_id)).toEqual([kept.id]);
      expect(notFound.received).toHaveLength(1);
      expect(await service.messages(kept.subscription)).toHaveLength(1);
    } finally {
      await notFound.close();
    }
  });

  it('puts back only the subscriptions that failed, and the outbox retries a message none took', async () => {
    const userId = await seedUser(server);
    const down = await startAnsweringService(503);
    try {
      const good = await subscribedDevice(userId);
      const failing = await subscribedDevice(userId, down.endpoint('busy'));
      enqueued.length = 0;
      await deliver(cipherPush({ user: userId }));
      expect(await service.messages(good.subscription)).toHaveLength(1);
      expect(enqueued).toHaveLength(1);
      const retry = enqueued[0]!;
      expect(retry.channel).toBe('web-push');
      expect(retry.message.devices).toEqual([failing.id]);

      // The second message names only the failed device: while its service is down, nothing went
      // out, so it is the outbox's to try again (it throws), and the good browser is not told twice.
      const stored = JSON.parse(JSON.stringify(retry.message)) as OutboxMessage;
      // Within a minute of its failure the service is not asked again (nothing went out: the
      // outbox's to try again), even once it would answer.
      await expect(channel.deliver(stored, 1)).rejects.toThrow(/none of 1 push service.*failed within the last minute/);
      down.status = 201;
      await expect(channel.deliver(stored, 2)).rejects.toThrow(/failed within the last minute/);
      expect(down.received).toHaveLength(1);
      // Another instance (no failures seen) sends it.
      const other = createWebPushChannel({ db: db(), clock: systemClock, secretBox: createSecretBox(SECRETS_KEY), outbox: { enqueue() {} }, config: { publicUrl: 'https://vault.example.com' }, log: pino({ level: 'silent' }), allowPrivateAddresses: true });
      await other.deliver(stored, 3);
      other.close();
      expect(down.received).toHaveLength(2);
      expect(await service.messages(good.subscription)).toHaveLength(1);
      expect(enqueued).toHaveLength(1);
    } finally {
      await down.close();
    }
  });

  it('ends a delivery within its budget when push services hang, leaving the rest to the outbox', async () => {
    const userId = await seedUser(server);
    const sockets = new Set<Socket>();
    const hanging = createServer(() => undefined).on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    const quick = createWebPushChannel({ db: db(), clock: systemClock, secretBox: createSecretBox(SECRETS_KEY), outbox: { enqueue() {} }, config: { publicUrl: 'https://vault.example.com' }, log: pino({ level: 'silent' }), allowPrivateAddresses: true, deliveryBudgetMs: 300 });
    try {
      for (let i = 0; i < 20; i++) await subscribedDevice(userId, `${base}/push/${i}`);
      const started = Date.now();
      await expect(quick.deliver(JSON.parse(JSON.stringify(quick.messageFor(cipherPush({ user: userId })))) as OutboxMessage, 1)).rejects.toThrow(/none of 20/);
      // Well before the outbox's own 20 s per attempt, and the 2 s each send would otherwise wait.
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      quick.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });

  it('never connects to a private or loopback address unless allowed, whatever the stored endpoint says', async () => {
    const guarded = new LogCapture();
    const strict = createWebPushChannel({ db: db(), clock: systemClock, secretBox: createSecretBox(SECRETS_KEY), outbox: { enqueue: (name, message) => enqueued.push({ channel: name, message }) }, config: { publicUrl: 'https://vault.example.com' }, log: pino({ level: 'info' }, guarded), allowPrivateAddresses: false });
    const local = await startAnsweringService(201);
    try {
      const userId = await seedUser(server);
      // A literal loopback address, and a name that resolves to one (checked as the connection is made).
      await subscribedDevice(userId, 'https://127.0.0.1/push/literal');
      await subscribedDevice(userId, 'https://localhost/push/named');
      // And a public-looking name on another port than 443, refused before any lookup.
      await subscribedDevice(userId, `https://push.example.com:${new URL(local.endpoint('x')).port}/push/port`);
      enqueued.length = 0;
      await strict.deliver(JSON.parse(JSON.stringify(strict.messageFor(cipherPush({ user: userId })))) as OutboxMessage, 1);
      expect(local.received).toEqual([]);
      expect(enqueued).toEqual([]);
      expect(guarded.text().match(/WEB_PUSH_ALLOW_PRIVATE_ADDRESSES/g)).toHaveLength(3);
    } finally {
      strict.close();
      await local.close();
    }
  });

  it('keeps subscriptions out of the log', () => {
    expect(logs.text()).toMatch(/subscription expired/);
    expect(logs.text()).not.toMatch(/notify|\/push\/|p256dh|auth"/);
  });
});

describe('the VAPID key pair', () => {
  it('is made once when two instances ask at once, and read by both', async () => {
    const fresh = await startTestServer({ env: { SECRETS_KEY: SECRETS_KEY.toString('base64') } });
    try {
      const make = () => ensureVapidKeys({ db: fresh.database.db, clock: systemClock, secretBox: createSecretBox(SECRETS_KEY) });
      const [a, b] = await Promise.all([make(), make()]);
      expect(a.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
      expect(b).toEqual(a);
      expect(Buffer.from(a.privateKey, 'base64url')).toHaveLength(32);
      const rows = await fresh.database.db.selectFrom('web_push_keys').selectAll().execute();
      expect(rows).toHaveLength(1);
      // The private key is sealed, not stored as it is.
      expect(rows[0]!.private_key).toMatch(/^sb1\./);
      expect(Buffer.from(rows[0]!.public_key, 'base64url')[0]).toBe(4);
    } finally {
      await fresh.close();
    }
  });

  it('sends nothing, with an error in the log, from an instance whose secrets key cannot open it; the outbox tries again', async () => {
    const stray = new LogCapture();
    const other = createWebPushChannel({ db: db(), clock: systemClock, secretBox: createSecretBox(randomBytes(32)), outbox: { enqueue() {} }, config: { publicUrl: 'https://vault.example.com' }, log: pino({ level: 'info' }, stray), allowPrivateAddresses: true });
    const userId = await seedUser(server);
    await subscribedDevice(userId);
    const message = other.messageFor(cipherPush({ user: userId }));
    await expect(other.deliver(JSON.parse(JSON.stringify(message)) as OutboxMessage, 1)).rejects.toThrow(/SECRETS_KEY/);
    other.close();
    expect(stray.text()).toMatch(/SECRETS_KEY/);
  });
});
