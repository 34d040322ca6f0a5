import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startRelayDouble, type RelayDouble } from '../../../test/support/relay-double.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { authRequestPush, authRequestResponsePush, folderPush, logOutPush, policyPush, userPush } from '../../platform/push/push-messages.js';
import { PushType, type Push } from '../../platform/push/pushes.js';
import { PermanentDeliveryError, type OutboxMessage } from '../push-delivery/channel.js';
import { RelayUnavailableError } from './relay-client.js';
import { createRelayChannel, type RelayChannel } from './relay-channel.js';

/*
 * The relay channel against a loopback double of Bitwarden's relay and identity server: the
 * bodies a self-hosted Bitwarden posts (camelCased, as JsonContent.Create sends them), the
 * token's reuse and renewal, and which failures the outbox retries.
 */

const DEVICE = TEST_DEVICE.deviceIdentifier;
let server: TestServer;
let relay: RelayDouble;
let user: LoggedInUser;
let deviceId: string;
let now = Date.now();
const clock = { now: () => new Date(now) };

function channel(overrides: { key?: string; timeoutMs?: number } = {}): RelayChannel {
  const made = createRelayChannel({
    config: { installationId: relay.installationId, installationKey: overrides.key ?? relay.installationKey, pushRelayUri: relay.url, pushIdentityUri: `${relay.url}/` },
    db: server.database.db,
    clock,
    ...(overrides.timeoutMs ? { timeoutMs: overrides.timeoutMs } : {}),
  });
  if (!made) throw new Error('relay channel not built');
  return made;
}

/** What the channel queues for a push, delivered at once; the relay's recorded body. */
async function sent(relayChannel: RelayChannel, push: Push): Promise<unknown> {
  const message = relayChannel.messageFor(push);
  if (!message) throw new Error('nothing to send');
  await relayChannel.deliver(JSON.parse(JSON.stringify(message)) as OutboxMessage, 1);
  expect(relay.calls.at(-1)?.path).toBe('/push/send');
  return relay.calls.at(-1)?.body;
}

beforeAll(async () => {
  [server, relay] = await Promise.all([startTestServer(), startRelayDouble()]);
  user = await seedAccount(server);
  const device = await server.database.db.selectFrom('devices').select('id').where('user_id', '=', user.userId).where('identifier', '=', DEVICE).executeTakeFirstOrThrow();
  deviceId = device.id;
});
afterAll(async () => {
  await Promise.all([server?.close(), relay?.close()]);
});
beforeEach(() => {
  relay.reset();
  now = Date.now();
});

describe('turning it on', () => {
  it('is off unless both INSTALLATION_ID and INSTALLATION_KEY are set', () => {
    const base = { pushRelayUri: relay.url, pushIdentityUri: relay.url };
    expect(createRelayChannel({ config: base, db: server.database.db })).toBeNull();
    expect(createRelayChannel({ config: { ...base, installationId: randomUUID() }, db: server.database.db })).toBeNull();
    expect(createRelayChannel({ config: { ...base, installationKey: 'k' }, db: server.database.db })).toBeNull();
    expect(createRelayChannel({ config: { ...base, installationId: randomUUID(), installationKey: 'k' }, db: server.database.db })?.name).toBe('relay');
  });
});

describe('what the relay carries', () => {
  it('an item push: the camelCased PushSendRequestModel, the acting device excluded by its identifier and named by its id', async () => {
    const relayChannel = channel();
    const itemId = randomUUID();
    const push: Push = {
      type: PushType.SyncCipherUpdate,
      payload: { Id: itemId, UserId: user.userId, OrganizationId: null, RevisionDate: new Date('2026-11-30T10:00:00.000Z'), CollectionIds: [] },
      contextId: DEVICE,
      target: { user: user.userId },
    };
    expect(await sent(relayChannel, push)).toEqual({
      userId: user.userId,
      organizationId: null,
      deviceId,
      identifier: DEVICE,
      type: 0,
      payload: { id: itemId, userId: user.userId, organizationId: null, revisionDate: '2026-11-30T10:00:00.000Z', collectionIds: [] },
      clientType: null,
      installationId: null,
    });
    const call = relay.calls[0];
    expect(call?.method).toBe('POST');
    expect(call?.authorization).toMatch(/^Bearer .+\..+\..+$/);
    expect(relay.tokenForms).toEqual([{ grant_type: 'client_credentials', scope: 'api.push', client_id: `installation.${relay.installationId}`, client_secret: relay.installationKey }]);
  });

  it('a push that excludes no device names none (LogOut everywhere, SyncCiphers, SyncOrgKeys)', async () => {
    const relayChannel = channel();
    expect(await sent(relayChannel, logOutPush(user.userId))).toMatchObject({ userId: user.userId, deviceId: null, identifier: null, type: PushType.LogOut, payload: { userId: user.userId, reason: null } });
    expect(await sent(relayChannel, userPush(PushType.SyncOrgKeys, user.userId, new Date(0)))).toMatchObject({ identifier: null, type: 6, payload: { userId: user.userId, date: '1970-01-01T00:00:00.000Z' } });
  });

  it('folders, log-in requests and a changed master password exclude the acting device', async () => {
    const relayChannel = channel();
    const folder = { id: randomUUID(), user_id: user.userId, revision_date: '2026-11-30T10:00:00.000Z' };
    expect(await sent(relayChannel, folderPush(PushType.SyncFolderCreate, folder, DEVICE))).toMatchObject({ type: 7, identifier: DEVICE, deviceId, payload: { id: folder.id, userId: user.userId, revisionDate: folder.revision_date } });
    const request = { id: randomUUID(), user_id: user.userId };
    expect(await sent(relayChannel, authRequestPush(request, DEVICE))).toMatchObject({ type: 15, userId: user.userId, identifier: DEVICE, payload: { id: request.id, userId: user.userId } });
    expect(await sent(relayChannel, logOutPush(user.userId, DEVICE))).toMatchObject({ type: 11, identifier: DEVICE });
  });

  it("an approved log-in request goes to the request's user, as the official server sends it, not to the anonymous hub", async () => {
    const relayChannel = channel();
    const request = { id: randomUUID(), user_id: user.userId };
    const push = authRequestResponsePush(request, DEVICE);
    expect(relayChannel.messageFor(push)).toMatchObject({ kind: 'send', push: { target: { user: user.userId } } });
    expect(await sent(relayChannel, push)).toMatchObject({ type: 16, userId: user.userId, organizationId: null, identifier: DEVICE, payload: { id: request.id, userId: user.userId } });
    // Any other push to an anonymous group is not the relay's.
    expect(relayChannel.messageFor({ ...push, type: PushType.AuthRequest })).toBeNull();
  });

  it('a policy goes to the organization, the nested Policy camelCased too', async () => {
    const relayChannel = channel();
    const org = randomUUID();
    const policy = { id: randomUUID(), organization_id: org, type: 0, data: '{"A":1}', enabled: true, creation_date: '2026-01-01T00:00:00.000Z', revision_date: '2026-01-02T00:00:00.000Z' };
    expect(await sent(relayChannel, policyPush(policy))).toEqual({
      userId: null,
      organizationId: org,
      deviceId: null,
      identifier: null,
      type: 25,
      payload: { organizationId: org, policy: { id: policy.id, organizationId: org, type: 0, data: '{"A":1}', enabled: true, creationDate: policy.creation_date, revisionDate: policy.revision_date } },
      clientType: null,
      installationId: null,
    });
  });
});

describe('the token', () => {
  it('is asked for once and reused, also by deliveries running at once', async () => {
    const relayChannel = channel();
    await Promise.all(Array.from({ length: 5 }, () => sent(relayChannel, logOutPush(user.userId))));
    await sent(relayChannel, logOutPush(user.userId));
    expect(relay.calls).toHaveLength(6);
    expect(relay.tokensIssued).toBe(1);
    expect(new Set(relay.calls.map((c) => c.authorization)).size).toBe(1);
  });

  it('is renewed shortly before it expires', async () => {
    relay.tokenLifetimeSeconds = 3600;
    const relayChannel = channel();
    await sent(relayChannel, logOutPush(user.userId));
    now += 50 * 60_000;
    await sent(relayChannel, logOutPush(user.userId));
    expect(relay.tokensIssued).toBe(1);
    now += 6 * 60_000;
    await sent(relayChannel, logOutPush(user.userId));
    expect(relay.tokensIssued).toBe(2);
  });

  it('a 401 drops it and throws for a retry, which gets a new one', async () => {
    const relayChannel = channel();
    await sent(relayChannel, logOutPush(user.userId));
    relay.revokeTokens();
    const message = relayChannel.messageFor(logOutPush(user.userId)) as OutboxMessage;
    const failure = await relayChannel.deliver(message, 1).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RelayUnavailableError);
    expect(failure).not.toBeInstanceOf(PermanentDeliveryError);
    await relayChannel.deliver(message, 2);
    expect(relay.tokensIssued).toBe(2);
    expect(relay.calls).toHaveLength(2);
  });

  it('a wrong key: retried (the operator may fix it), nothing sent, and the key is in no error', async () => {
    const relayChannel = channel({ key: 'not-the-key-1234' });
    const failure = (await relayChannel.deliver(relayChannel.messageFor(logOutPush(user.userId)) as OutboxMessage, 1).catch((e: unknown) => e)) as Error;
    expect(failure).toBeInstanceOf(RelayUnavailableError);
    expect(failure.message).toMatch(/identity answered 400.*INSTALLATION_KEY/);
    expect(relay.calls).toEqual([]);
    expect(JSON.stringify(relayChannel.status())).not.toContain('not-the-key-1234');
    expect(relayChannel.status().lastError?.message).toBe(failure.message);
  });
});

describe('failures', () => {
  const deliverOnce = async (relayChannel: RelayChannel) => relayChannel.deliver(relayChannel.messageFor(logOutPush(user.userId)) as OutboxMessage, 1).then(() => null, (e: unknown) => e as Error);

  it('a 4xx refusal is permanent (the outbox drops the message); a 5xx is retried', async () => {
    const relayChannel = channel();
    relay.mode = 'reject';
    expect(await deliverOnce(relayChannel)).toBeInstanceOf(PermanentDeliveryError);
    relay.mode = 'fail';
    const failure = await deliverOnce(relayChannel);
    expect(failure).toBeInstanceOf(RelayUnavailableError);
    expect(failure?.message).toBe('push/send: relay answered 500');
    expect(relayChannel.status().lastError?.message).toBe('push/send: relay answered 500');
    relay.mode = 'ok';
    expect(await deliverOnce(relayChannel)).toBeNull();
    expect(relayChannel.status()).toMatchObject({ lastError: null, lastSuccessAt: expect.any(String) });
  });

  it('a hanging relay times out (retried); a dropped connection and a closed port are retried', async () => {
    const relayChannel = channel({ timeoutMs: 300 });
    await sent(relayChannel, logOutPush(user.userId));
    relay.mode = 'hang';
    const started = Date.now();
    const hung = await deliverOnce(relayChannel);
    expect(hung).toBeInstanceOf(RelayUnavailableError);
    expect(hung?.message).toBe('push/send: no answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(3000);
    relay.mode = 'refuse';
    expect(await deliverOnce(relayChannel)).toBeInstanceOf(RelayUnavailableError);
    const closed = createRelayChannel({ config: { installationId: randomUUID(), installationKey: 'k', pushRelayUri: 'http://127.0.0.1:1', pushIdentityUri: 'http://127.0.0.1:1' }, db: server.database.db });
    expect(await deliverOnce(closed as RelayChannel)).toBeInstanceOf(RelayUnavailableError);
  });

  it('a message this version cannot read is dropped', async () => {
    await expect(channel().deliver({ kind: 'launch' }, 1)).rejects.toBeInstanceOf(PermanentDeliveryError);
    await expect(channel().deliver({ kind: 'register' }, 1)).rejects.toBeInstanceOf(PermanentDeliveryError);
  });
});

describe('registrations', () => {
  async function phone(owner: LoggedInUser, token: string | null, type = 0): Promise<string> {
    const id = randomUUID();
    const stamp = new Date().toISOString();
    await server.database.db
      .insertInto('devices')
      .values({ id, user_id: owner.userId, type, identifier: randomUUID(), name: 'phone', push_token: token, creation_date: stamp, revision_date: stamp, encrypted_user_key: null, encrypted_public_key: null, encrypted_private_key: null })
      .execute();
    return id;
  }

  it("register sends the device's token, type and identifier with the user's confirmed organizations, read at delivery", async () => {
    const owner = await seedAccount(server);
    const [confirmed, invited, revoked] = [await seedOrganization(server), await seedOrganization(server), await seedOrganization(server)];
    await seedMembership(server, { organizationId: confirmed, userId: owner.userId, status: OrganizationUserStatusType.Confirmed });
    await seedMembership(server, { organizationId: invited, userId: owner.userId, status: OrganizationUserStatusType.Accepted });
    await seedMembership(server, { organizationId: revoked, userId: owner.userId, status: OrganizationUserStatusType.Revoked });
    const id = await phone(owner, 'apns-token-1', 1);
    const identifier = (await server.database.db.selectFrom('devices').select('identifier').where('id', '=', id).executeTakeFirstOrThrow()).identifier;
    await server.database.db.updateTable('devices').set({ push_token: 'apns-token-2' }).where('id', '=', id).execute();
    await channel().deliver({ kind: 'register', deviceId: id }, 1);
    expect(relay.calls).toEqual([
      {
        method: 'POST',
        path: '/push/register',
        authorization: expect.any(String),
        body: { deviceId: id, pushToken: 'apns-token-2', userId: owner.userId, type: 1, identifier, organizationIds: [confirmed], installationId: relay.installationId },
      },
    ]);
  });

  it('register and delete send what is true at delivery, whichever was queued', async () => {
    const owner = await seedAccount(server);
    const cleared = await phone(owner, null);
    const gone = randomUUID();
    const holding = await phone(owner, 'fcm-still');
    await channel().deliver({ kind: 'register', deviceId: cleared }, 1);
    await channel().deliver({ kind: 'register', deviceId: gone }, 1);
    // A delete queued before the token came back (sent after it, or retried): the relay gets the device again.
    await channel().deliver({ kind: 'delete', deviceId: holding }, 1);
    expect(relay.calls.map(({ path, body }) => [path, (body as { id?: string; deviceId?: string }).id ?? (body as { deviceId?: string }).deviceId])).toEqual([
      ['/push/delete', cleared],
      ['/push/delete', gone],
      ['/push/register', holding],
    ]);
  });

  it('add- and delete-organization put each user where their membership is at delivery, naming their devices that hold a token', async () => {
    const a = await seedAccount(server);
    const b = await seedAccount(server);
    const none = await seedAccount(server);
    const [a1, b1] = [await phone(a, 'fcm-a'), await phone(b, 'fcm-b')];
    await phone(a, null);
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: a.userId, status: OrganizationUserStatusType.Confirmed });
    await seedMembership(server, { organizationId: org, userId: b.userId, status: OrganizationUserStatusType.Revoked });
    const relayChannel = channel();
    // Queued when both joined, delivered after b was revoked: a joins, b leaves.
    await relayChannel.deliver({ kind: 'add-organization', organizationId: org, userIds: [a.userId, b.userId, none.userId] }, 1);
    // Queued when a left, delivered after a came back: a stays in.
    await relayChannel.deliver({ kind: 'delete-organization', organizationId: org, userIds: [a.userId] }, 1);
    // No device with a token: no call, as officially.
    await relayChannel.deliver({ kind: 'delete-organization', organizationId: org, userIds: [none.userId] }, 1);
    expect(relay.calls.map(({ method, path, body }) => ({ method, path, body }))).toEqual([
      { method: 'PUT', path: '/push/add-organization', body: { devices: [{ id: a1 }], organizationId: org } },
      { method: 'PUT', path: '/push/delete-organization', body: { devices: [{ id: b1 }], organizationId: org } },
      { method: 'PUT', path: '/push/add-organization', body: { devices: [{ id: a1 }], organizationId: org } },
    ]);
  });
});
