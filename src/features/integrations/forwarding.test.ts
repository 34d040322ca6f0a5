import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, orgWithOwner, type Actor } from '../../../test/support/admin.js';
import { acceptedIds, COUNTING_TEMPLATE, emitEvents, emitReadSet, organizationWithHook, signatureValid } from '../../../test/support/forwarding.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { eventually, startReceiver } from '../../../test/support/webhook-receiver.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { isPrivateAddress } from '../../platform/net/outbound-address.js';
import { createRelay } from './relay.js';
import type { Transport } from './transports.js';

/** Fast retries and a short time limit; the local receiver is a loopback address, so allowed. */
const FAST = {
  INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES: 'true',
  INTEGRATIONS_POLL_MS: '20',
  INTEGRATIONS_RETRY_BASE_MS: '20',
  INTEGRATIONS_MAX_RETRIES: '3',
  INTEGRATIONS_TIMEOUT_MS: '1500',
  HEALTH_ENABLED: 'true',
};

let server: TestServer;
let owner: Actor;

beforeAll(async () => {
  server = await startTestServer({ env: FAST });
  ({ owner } = await orgWithOwner(server));
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const unique = (ids: string[]) => [...new Set(ids)].sort();

describe('forwarding to a webhook (in process, no broker)', () => {
  it('delivers every committed event once, signed and with the configured Authorization, one per secret of a read set', async () => {
    const receiver = await startReceiver();
    try {
      const hook = await organizationWithHook(server, owner, `${receiver.url}/hook`, { configuration: { Uri: `${receiver.url}/hook`, Scheme: 'Bearer', Token: 'tok-123' } });
      const ids = await emitEvents(server, hook.org, 40);
      const secrets = [randomUUID(), randomUUID(), randomUUID()];
      await emitReadSet(server, hook.org, secrets);
      // An event from a real route, written in the route's transaction.
      const created = await server.request('POST', `/api/organizations/${hook.org}/collections`, { token: owner.token, json: { name: ENC, externalId: null, groups: [], users: [] } });
      expect(created.status, created.text).toBe(200);

      await eventually(() => receiver.accepted().length >= 44, 20_000, '44 deliveries');
      const bodies = receiver.accepted().map((r) => JSON.parse(r.body) as { id: string; type: string; secret: string; org: string });
      expect(unique(bodies.filter((b) => b.type === 'Collection_Updated').map((b) => b.id))).toEqual(unique(ids));
      // At least once: a delivery whose answer came too late is sent again, so count distinct ids.
      const reads = bodies.filter((b) => b.type === 'Secret_Retrieved');
      expect(unique(reads.map((b) => b.secret))).toEqual(unique(secrets));
      expect(new Set(reads.map((b) => b.id)).size).toBe(3);
      expect(new Set(bodies.filter((b) => b.type === 'Collection_Created').map((b) => b.id)).size).toBe(1);
      expect(bodies.every((b) => b.org === hook.org)).toBe(true);
      for (const r of receiver.received) {
        expect(r.path).toBe('/hook');
        expect(r.headers.authorization).toBe('Bearer tok-123');
        expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(r.headers['x-strongroom-delivery']).toMatch(/^[0-9a-f-]{36}$/);
        expect(signatureValid(hook.signingSecret, r)).toBe(true);
        expect(signatureValid('another secret', r)).toBe(false);
      }
      expect(new Set(bodies.map((b) => b.id)).size).toBe(44);
    } finally {
      await receiver.close();
    }
  });

  it('retries failures with backoff until the receiver recovers, losing none', async () => {
    const tries = new Map<string, number>();
    // Each event fails twice (500, then 503 with Retry-After 0), then goes through.
    const receiver = await startReceiver(({ body }) => {
      const id = (JSON.parse(body) as { id: string }).id;
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      return n === 1 ? 500 : n === 2 ? 503 : 200;
    });
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      const ids = await emitEvents(server, hook.org, 15);
      await eventually(() => unique(acceptedIds(receiver.received)).length === 15, 20_000, 'every event delivered');
      expect(unique(acceptedIds(receiver.received))).toEqual(unique(ids));
      expect(receiver.received).toHaveLength(45);
      expect([...tries.values()].every((n) => n === 3)).toBe(true);
      expect((await server.request('GET', `/api/organizations/${hook.org}/integrations/dead-letters`, { token: owner.token })).body.data).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('gives up on a receiver that does not answer in time and tries again', async () => {
    const tries = new Map<string, number>();
    const receiver = await startReceiver(({ body }) => {
      const id = (JSON.parse(body) as { id: string }).id;
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      return n === 1 ? 'hang' : 200;
    });
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      const ids = await emitEvents(server, hook.org, 8);
      await eventually(() => unique(acceptedIds(receiver.received)).length === 8, 20_000, 'every event delivered after the time-outs');
      expect(unique(acceptedIds(receiver.received))).toEqual(unique(ids));
      expect(receiver.received.filter((r) => r.answer === 'hang')).toHaveLength(8);
    } finally {
      await receiver.close();
    }
  });

  it('shuts down at once while a delivery waits for its retry or its answer, instead of waiting for them', async () => {
    // Without the stop order of integrations.close, this server's close would wait out a
    // retry delay of five to ten minutes (or a delivery's time limit of two).
    for (const answer of [503, 'hang'] as const) {
      const slow = await startTestServer({ env: { ...FAST, INTEGRATIONS_RETRY_BASE_MS: '600000', INTEGRATIONS_TIMEOUT_MS: '120000' } });
      const receiver = await startReceiver(() => answer);
      try {
        const { owner: slowOwner } = await orgWithOwner(slow);
        const hook = await organizationWithHook(slow, slowOwner, receiver.url);
        await emitEvents(slow, hook.org, 1);
        await eventually(() => receiver.received.length > 0, 20_000, 'the first delivery attempt');
        const closed = slow.close().then(() => 'closed' as const);
        const waited = new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 30_000).unref());
        expect(await Promise.race([closed, waited]), `close with the receiver answering ${answer}`).toBe('closed');
      } finally {
        await receiver.close();
      }
    }
  }, 120_000);

  it('parks what fails every retry in the dead-letter queue, and an owner replays it once the receiver is back', async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      const ids = await emitEvents(server, hook.org, 5);
      const deadLetters = `/api/organizations/${hook.org}/integrations/dead-letters`;
      let listed: { id: string; attempts: number; lastError: string; body: string; integrationId: string }[] = [];
      await eventually(async () => {
        listed = (await server.request('GET', deadLetters, { token: owner.token })).body.data;
        return listed.length === 5;
      }, 20_000, 'five dead letters');
      // One try and three retries each.
      expect(receiver.received).toHaveLength(20);
      expect(listed.every((d) => d.attempts === 4 && /503/.test(d.lastError) && d.integrationId === hook.integrationId)).toBe(true);
      expect(unique(listed.map((d) => (JSON.parse(d.body) as { id: string }).id))).toEqual(unique(ids));

      receiver.setBehavior(() => 200);
      const one = await server.request('POST', `${deadLetters}/${listed[0]!.id}/replay`, { token: owner.token });
      expect(one.status, one.text).toBe(200);
      expect(one.body).toMatchObject({ replayed: 1, skipped: 0 });
      await eventually(() => receiver.accepted().length === 1, 10_000, 'the replayed one');
      const rest = await server.request('POST', `${deadLetters}/replay`, { token: owner.token, json: { integrationId: hook.integrationId } });
      expect(rest.body).toMatchObject({ replayed: 4, skipped: 0 });
      await eventually(() => unique(acceptedIds(receiver.received)).length === 5, 10_000, 'all five delivered');
      expect(unique(acceptedIds(receiver.received))).toEqual(unique(ids));
      expect((await server.request('GET', deadLetters, { token: owner.token })).body.data).toEqual([]);
      expect((await server.request('POST', `${deadLetters}/${listed[0]!.id}/replay`, { token: owner.token })).status).toBe(404);
    } finally {
      await receiver.close();
    }
  });

  it('parks at once what the receiver refuses for good (4xx), without retrying', async () => {
    const receiver = await startReceiver(() => 404);
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      await emitEvents(server, hook.org, 2);
      await eventually(async () => (await server.request('GET', `/api/organizations/${hook.org}/integrations/dead-letters`, { token: owner.token })).body.data.length === 2, 10_000, 'two dead letters');
      expect(receiver.received).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('forwards only the selected event type that passes the filters', async () => {
    const receiver = await startReceiver();
    try {
      const actorId = randomUUID();
      const hook = await organizationWithHook(server, owner, `${receiver.url}/selected`, {
        eventType: EventType.Collection_Created,
        filters: { AndOperator: true, Rules: [{ Property: 'ActingUserId', Operation: 0, Value: actorId }] },
      });
      // A second configuration of the same integration sees everything, so the test knows when all was relayed.
      const all = await server.request('POST', `/api/organizations/${hook.org}/integrations/${hook.integrationId}/configurations`, {
        token: owner.token,
        json: { configuration: JSON.stringify({ Uri: `${receiver.url}/all` }), eventType: null, filters: null, template: COUNTING_TEMPLATE },
      });
      expect(all.status).toBe(200);
      const [wanted] = await emitEvents(server, hook.org, 1, { type: EventType.Collection_Created, acting_user_id: actorId });
      await emitEvents(server, hook.org, 1, { type: EventType.Collection_Created, acting_user_id: randomUUID() });
      await emitEvents(server, hook.org, 1, { type: EventType.Collection_Updated, acting_user_id: actorId });
      await eventually(() => receiver.received.filter((r) => r.path === '/all').length === 3, 10_000, 'three events relayed');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const selected = receiver.received.filter((r) => r.path === '/selected');
      expect(selected.map((r) => (JSON.parse(r.body) as { id: string }).id)).toEqual([wanted]);
    } finally {
      await receiver.close();
    }
  });

  it('posts Slack and Teams message formats to their incoming webhooks', async () => {
    const receiver = await startReceiver();
    try {
      const slack = await organizationWithHook(server, owner, `${receiver.url}/slack`, { type: 3, template: 'Event #Type# by #ActingUserId#' });
      const teams = await organizationWithHook(server, owner, `${receiver.url}/teams`, { type: 7, template: 'Event #Type#' });
      await emitEvents(server, slack.org, 1, { type: EventType.Group_Created });
      await emitEvents(server, teams.org, 1, { type: EventType.Group_Deleted });
      await eventually(() => receiver.received.length === 2, 10_000, 'two messages');
      const byPath = Object.fromEntries(receiver.received.map((r) => [r.path, JSON.parse(r.body) as Record<string, unknown>]));
      expect(byPath['/slack']).toEqual({ text: 'Event Group_Created by ' });
      expect(byPath['/teams']).toMatchObject({ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard', body: [{ type: 'TextBlock', text: 'Event Group_Deleted' }] } }] });
    } finally {
      await receiver.close();
    }
  });

  it('shows the relay and its deliveries in /healthz/extended', async () => {
    const res = await server.request('GET', '/api/healthz/extended');
    expect(res.status).toBe(200);
    expect(res.body.results.integrations).toMatchObject({ status: 'Healthy', data: { transport: 'in-process', relay: { leader: true } } });
    expect(res.body.results.integrations.data.deliveries.delivered).toBeGreaterThan(0);
  });
});

describe('outbound requests never reach private addresses unless the operator allows it', () => {
  it('classifies loopback, private, link-local and mapped addresses as private, public ones not', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not an ip']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('refuses a loopback address, by number or by a name that resolves to it, and parks the delivery', async () => {
    const strict = await startTestServer({ env: { ...FAST, INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES: 'false' } });
    const receiver = await startReceiver();
    try {
      const { owner: strictOwner } = await orgWithOwner(strict);
      const port = new URL(receiver.url).port;
      const hook = await organizationWithHook(strict, strictOwner, `http://127.0.0.1:${port}/direct`);
      await strict.request('POST', `/api/organizations/${hook.org}/integrations/${hook.integrationId}/configurations`, {
        token: strictOwner.token,
        json: { configuration: JSON.stringify({ Uri: `http://localhost:${port}/named` }), template: COUNTING_TEMPLATE },
      });
      await emitEvents(strict, hook.org, 1);
      let letters: { lastError: string; attempts: number }[] = [];
      await eventually(async () => {
        letters = (await strict.request('GET', `/api/organizations/${hook.org}/integrations/dead-letters`, { token: strictOwner.token })).body.data;
        return letters.length === 2;
      }, 10_000, 'two refused deliveries');
      for (const letter of letters) {
        expect(letter.lastError).toMatch(/private, loopback or link-local/);
        expect(letter.attempts).toBe(1);
      }
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
      await strict.close();
    }
  }, 120_000);
});

describe('one relay per fleet', () => {
  it('a second relay on the same database hands nothing over while the first holds the lease', async () => {
    const receiver = await startReceiver();
    const handed: unknown[] = [];
    const transport: Transport = {
      kind: 'in-process',
      publishEvents: async (events) => void handed.push(...events),
      enqueue: async () => undefined,
      state: () => ({ connected: true }),
      close: async () => undefined,
    };
    const second = createRelay({ db: server.database.db, engine: server.database.engine, transport, pollMs: 10, log: { warn: () => undefined } });
    second.start();
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      await emitEvents(server, hook.org, 3);
      await eventually(() => receiver.received.length === 3, 10_000, 'three deliveries');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(handed).toEqual([]);
      expect(second.state().leader).toBe(false);
      const member = await actor(server, hook.org, 'member@example.com', { type: OrganizationUserType.User });
      expect((await server.request('GET', `/api/organizations/${hook.org}/integrations`, { token: member.token })).status).toBe(404);
    } finally {
      await second.stop();
      await receiver.close();
    }
  });
});
