import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recordingPushes } from '../../../test/support/pushes.js';
import { freshDatabaseUrl } from '../../../test/support/test-server.js';
import { openDatabase, type Database } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { PushType, type Push } from '../../platform/push/pushes.js';
import { systemClock } from '../../shared/clock.js';
import { PermanentDeliveryError, storedPush, type OutboxMessage, type PushChannel } from './channel.js';
import type { DeliveryResult, OutboxLog } from './outbox.js';
import { createPushDelivery, type PushDelivery } from './push-delivery.js';

let database: Database;
let drop: () => Promise<void>;
const running: PushDelivery[] = [];

beforeAll(async () => {
  const fresh = await freshDatabaseUrl();
  drop = () => fresh.drop();
  database = openDatabase(fresh.url, { poolSize: 4 });
  await migrateToLatest(database);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.outbox.stop()));
  await database.db.deleteFrom('push_outbox').execute();
  await database.db.deleteFrom('leases').execute();
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

const quiet: OutboxLog = { warn() {} };
const FAST = { pollMs: 20, retryBaseMs: 10, retryMaxMs: 40, attemptTimeoutMs: 300, maxAttempts: 4 };

function push(userId: string, contextId: string | null = null): Push {
  return { type: PushType.SyncCipherUpdate, payload: { Id: 'c1', UserId: userId, RevisionDate: new Date('2026-11-30T10:00:00Z') }, contextId, target: { user: userId } };
}

/** A channel that records what it got and answers as `behave` says. */
function channel(name: string, behave: (message: OutboxMessage, attempt: number) => Promise<void> = async () => undefined) {
  const got: { message: OutboxMessage; attempt: number }[] = [];
  const ch: PushChannel & { got: typeof got } = {
    name,
    got,
    messageFor: (p) => ('authRequest' in p.target ? null : { push: storedPush(p) }),
    async deliver(message, attempt) {
      got.push({ message, attempt });
      await behave(message, attempt);
    },
  };
  return ch;
}

function delivery(channels: PushChannel[], settings = FAST, log = quiet) {
  const hub = recordingPushes();
  const results: [string, DeliveryResult][] = [];
  const d = createPushDelivery({ db: database.db, clock: systemClock, log, hub, settings, onDelivery: (c, r) => results.push([c, r]) });
  for (const c of channels) d.outbox.addChannel(c);
  d.outbox.start();
  running.push(d);
  return { ...d, hub, results };
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const rows = () => database.db.selectFrom('push_outbox').selectAll().execute();

describe('push outbox', () => {
  it('gives the hub the push at once and each channel its message after, as stored JSON', async () => {
    const relay = channel('relay');
    const d = delivery([relay]);
    d.pushes.send([push('u1', 'device-a'), { ...push('u2'), target: { authRequest: 'r1' } }]);
    expect(d.hub.sent).toHaveLength(2);
    // Nothing reached the channel within the caller's turn: it goes through the database.
    expect(relay.got).toHaveLength(0);
    await until(() => relay.got.length === 1);
    expect(relay.got[0]!.message).toEqual({ push: { type: PushType.SyncCipherUpdate, payload: { Id: 'c1', UserId: 'u1', RevisionDate: '2026-11-30T10:00:00.000Z' }, contextId: 'device-a', target: { user: 'u1' } } });
    expect(relay.got[0]!.attempt).toBe(1);
    await until(async () => (await rows()).length === 0);
    expect(d.results).toEqual([['relay', 'sent']]);
  });

  it('retries a failing message with back-off and keeps why, then drops it after the last attempt', async () => {
    const relay = channel('relay', async () => {
      throw new Error('relay answered 503');
    });
    const d = delivery([relay]);
    d.pushes.send(push('u1'));
    let seen: Awaited<ReturnType<typeof rows>> = [];
    await until(async () => (seen = await rows()).some((r) => r.attempts >= 1));
    expect(seen[0]).toMatchObject({ channel: 'relay', last_error: 'relay answered 503' });
    await until(() => relay.got.length === FAST.maxAttempts);
    await until(async () => (await rows()).length === 0);
    expect(relay.got.map((g) => g.attempt)).toEqual([1, 2, 3, 4]);
    expect(d.results.map(([, r]) => r)).toEqual(['retried', 'retried', 'retried', 'dropped']);
  });

  it('drops at once what the channel refuses for good', async () => {
    const relay = channel('relay', async () => {
      throw new PermanentDeliveryError('relay answered 400');
    });
    const d = delivery([relay]);
    d.pushes.send(push('u1'));
    await until(() => d.results.length === 1);
    // The result is counted as the attempt ends; the row goes in the batch's delete right after.
    await until(async () => (await rows()).length === 0);
    expect(d.results).toEqual([['relay', 'dropped']]);
    expect(relay.got).toHaveLength(1);
  });

  it('a hung channel delays only its own messages: the other channel delivers meanwhile', async () => {
    const hung = channel('relay', () => new Promise<void>(() => undefined));
    const web = channel('web-push');
    const d = delivery([hung, web]);
    d.pushes.send([push('u1'), push('u2')]);
    await until(() => web.got.length === 2);
    await until(() => hung.got.length > 0);
    // The hung attempts time out and are tried again later, never lost.
    await until(async () => (await rows()).some((r) => r.channel === 'relay' && r.attempts >= 1 && /no answer within/.test(r.last_error ?? '')));
    expect((await rows()).filter((r) => r.channel === 'web-push')).toHaveLength(0);
  });

  it('of two instances on one database, each message is sent once', async () => {
    const a = channel('relay');
    const b = channel('relay');
    const one = delivery([a]);
    const two = delivery([b]);
    for (let i = 0; i < 40; i++) (i % 2 ? one : two).pushes.send(push(`u${i}`));
    await until(() => a.got.length + b.got.length >= 40);
    await until(async () => (await rows()).length === 0);
    await new Promise((r) => setTimeout(r, 100));
    const users = [...a.got, ...b.got].map((g) => (g.message.push as { target: { user: string } }).target.user).sort();
    expect(users).toEqual(Array.from({ length: 40 }, (_, i) => `u${i}`).sort());
  });

  it('reports a failing channel in the health check, and how many messages wait', async () => {
    const relay = channel('relay', async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:9');
    });
    const warnings: string[] = [];
    const d = delivery([relay], { ...FAST, maxAttempts: 50, retryMaxMs: 10 }, { warn: (_obj: object, msg: string) => void warnings.push(msg) });
    expect(await d.health.probe()).toEqual({ channels: ['relay'], waiting: { relay: 0 } });
    d.pushes.send(push('u1'));
    await until(() => relay.got.length >= 3);
    await expect(d.health.probe()).rejects.toThrow(/^relay: 1 messages waiting, failing since .*; last error: connect ECONNREFUSED 127\.0\.0\.1:9$/);
    expect(await d.pending()).toEqual({ relay: 1 });
    // Said once in the log too, where neither health nor metrics may be served.
    expect(warnings.filter((w) => /the channel is failing/.test(w))).toHaveLength(1);
  });

  it('writes nothing without channels, and keeps what was enqueued when it stops', async () => {
    const none = delivery([]);
    none.pushes.send(push('u1'));
    expect(none.hub.sent).toHaveLength(1);
    await new Promise((r) => setImmediate(r));
    expect(await rows()).toHaveLength(0);

    const relay = channel('relay');
    const d = delivery([relay]);
    await d.outbox.stop();
    d.outbox.enqueue('relay', { kind: 'register', deviceId: 'd1' });
    d.outbox.enqueue('unknown', { kind: 'nothing' });
    // The insert has begun (it starts on the next turn) but not ended: flushed() waits for it too.
    await new Promise((r) => setImmediate(r));
    await d.outbox.flushed();
    expect((await rows()).map((r) => [r.channel, JSON.parse(r.message) as unknown])).toEqual([['relay', { kind: 'register', deviceId: 'd1' }]]);
  });
});
