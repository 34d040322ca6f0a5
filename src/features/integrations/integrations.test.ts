import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, orgWithOwner, type Actor } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';

let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
let admin: Actor;
let stranger: Actor;

const path = (orgId = org) => `/api/organizations/${orgId}/integrations`;
const webhook = { type: 4, configuration: JSON.stringify({ Uri: 'https://hooks.example.com/in', Scheme: 'Bearer', Token: 'secret' }) };

beforeAll(async () => {
  // The relay is not what these tests look at.
  server = await startTestServer({ env: { INTEGRATIONS_RELAY: 'false' } });
  ({ org, owner, otherOrg, stranger } = await orgWithOwner(server));
  admin = await actor(server, org, 'admin@example.com', { type: OrganizationUserType.Admin });
  await actor(server, org, 'logs@example.com', custom('accessEventLogs'));
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** Deletes every integration of the organization, so each test starts from none. */
async function clean() {
  await server.database.db.deleteFrom('organization_integrations').where('organization_id', '=', org).execute();
}

describe('organization integrations', () => {
  it('creates, lists, updates and deletes an integration with the official shape and status', async () => {
    await clean();
    const created = await server.request('POST', path(), { token: owner.token, json: webhook });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ object: 'organizationIntegration', type: 4, configuration: webhook.configuration, status: 4 });
    expect(created.body.signingSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = created.body.id as string;

    const listed = await server.request('GET', path(), { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ object: 'list', data: [{ id, type: 4 }] });

    const conflict = await server.request('POST', path(), { token: owner.token, json: { type: 4, configuration: null } });
    expect(conflict.status).toBe(409);

    const updated = await server.request('PUT', `${path()}/${id.toUpperCase()}`, { token: owner.token, json: { type: 4, configuration: null } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ id, configuration: null, status: 4 });
    const retyped = await server.request('PUT', `${path()}/${id}`, { token: owner.token, json: { type: 5, configuration: '{"Uri":"https://splunk.example.com","Scheme":"Splunk","Token":"t"}' } });
    expect(retyped.status).toBe(400);

    const deleted = await server.request('DELETE', `${path()}/${id}`, { token: owner.token });
    expect(deleted.status).toBe(204);
    expect((await server.request('GET', path(), { token: owner.token })).body.data).toEqual([]);
    expect((await server.request('DELETE', `${path()}/${id}`, { token: owner.token })).status).toBe(404);
  });

  it('takes each official type with its own configuration and refuses what is missing or malformed', async () => {
    await clean();
    const ok = [
      { type: 5, configuration: JSON.stringify({ Uri: 'https://splunk.example.com:8088/services/collector', Scheme: 'Splunk', Token: 'hec-token' }) },
      { type: 6, configuration: JSON.stringify({ ApiKey: 'dd-key', Uri: 'https://http-intake.logs.datadoghq.com/api/v2/logs' }) },
      { type: 3, configuration: JSON.stringify({ Uri: 'https://hooks.slack.com/services/T/B/X' }) },
      { type: 7, configuration: JSON.stringify({ uri: 'https://example.webhook.office.com/webhookb2/x' }) },
    ];
    for (const body of ok) {
      const res = await server.request('POST', path(), { token: owner.token, json: body });
      expect(res.status, `${body.type}: ${res.text}`).toBe(200);
      expect(res.body.status).toBe(4);
    }
    await clean();
    const bad: [unknown, string, RegExp][] = [
      [{ type: 2 }, 'type', /not yet supported/],
      [{ type: 99 }, 'type', /not recognized/],
      [{ type: 5, configuration: null }, 'configuration', /HecIntegration/],
      [{ type: 5, configuration: '{"Uri":"https://x.example.com","Scheme":"Splunk"}' }, 'configuration', /Token is required/],
      [{ type: 6, configuration: '{"Uri":"https://x.example.com"}' }, 'configuration', /ApiKey is required/],
      [{ type: 4, configuration: '{"Uri":"ftp://x.example.com"}' }, 'configuration', /http or https/],
      [{ type: 4, configuration: '{"Uri":"https://u:p@x.example.com"}' }, 'configuration', /user name or password/],
      [{ type: 4, configuration: 'not json' }, 'configuration', /JSON object/],
      [{ type: 3, configuration: null }, 'configuration', /incoming webhook/],
    ];
    for (const [body, field, message] of bad) {
      const res = await server.request('POST', path(), { token: owner.token, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body.validationErrors?.[field] ?? res.body.message), JSON.stringify(body)).toMatch(message);
    }
    const missingType = await server.request('POST', path(), { token: owner.token, json: { configuration: null } });
    expect(missingType.status).toBe(400);
    expect((await server.request('GET', path(), { token: owner.token })).body.data).toEqual([]);
  });

  it('answers 404 to everyone but owners, and to owners of another organization', async () => {
    await clean();
    for (const who of [admin, stranger]) {
      expect((await server.request('GET', path(), { token: who.token })).status).toBe(404);
      expect((await server.request('POST', path(), { token: who.token, json: webhook })).status).toBe(404);
    }
    expect((await server.request('GET', path())).status).toBe(401);
    // The stranger owns another organization: its integrations are not these.
    const theirs = await server.request('POST', path(otherOrg), { token: stranger.token, json: webhook });
    expect(theirs.status).toBe(200);
    expect((await server.request('PUT', `${path()}/${theirs.body.id}`, { token: owner.token, json: webhook })).status).toBe(404);
    expect((await server.request('GET', `${path()}/${theirs.body.id}/configurations`, { token: owner.token })).status).toBe(404);
  });
});

describe('integration configurations', () => {
  it('creates, lists, updates and deletes configurations, with event type, filters and template', async () => {
    await clean();
    const integration = (await server.request('POST', path(), { token: owner.token, json: { type: 4, configuration: null } })).body.id as string;
    const base = `${path()}/${integration}/configurations`;
    const filters = JSON.stringify({ AndOperator: true, Rules: [{ Property: 'ActingUserId', Operation: 0, Value: owner.userId }] });
    const body = { configuration: JSON.stringify({ Uri: 'https://hooks.example.com/a' }), eventType: EventType.Collection_Created, filters, template: '{"type":"#Type#"}' };
    const created = await server.request('POST', base, { token: owner.token, json: body });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ object: 'organizationIntegrationConfiguration', ...body });
    expect(Date.parse(created.body.creationDate as string)).not.toBeNaN();
    const id = created.body.id as string;

    const all = { ...body, eventType: null, filters: null };
    const updated = await server.request('PUT', `${base}/${id}`, { token: owner.token, json: all });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ id, eventType: null, filters: null });

    const listed = await server.request('GET', base, { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ id, eventType: null, template: body.template })]);

    expect((await server.request('POST', `${base}/${id}/delete`, { token: owner.token })).status).toBe(200);
    expect((await server.request('GET', base, { token: owner.token })).body).toEqual([]);
    expect((await server.request('DELETE', `${base}/${id}`, { token: owner.token })).status).toBe(404);
  });

  it('refuses a configuration without a template, with unknown event types, bad filters or settings its type does not take', async () => {
    await clean();
    const hook = (await server.request('POST', path(), { token: owner.token, json: { type: 4, configuration: null } })).body.id as string;
    const hec = (await server.request('POST', path(), { token: owner.token, json: { type: 5, configuration: '{"Uri":"https://s.example.com","Scheme":"Splunk","Token":"t"}' } })).body.id as string;
    const uri = JSON.stringify({ Uri: 'https://hooks.example.com/a' });
    const bad: [string, unknown, string][] = [
      [hook, { configuration: uri, template: '  ' }, 'template'],
      [hook, { configuration: uri }, 'template'],
      [hook, { configuration: uri, template: 'x', eventType: 1200 }, 'eventType'],
      [hook, { configuration: uri, template: 'x', filters: '{"Rules":[{"Property":"Nope","Operation":0,"Value":"x"}]}' }, 'filters'],
      [hook, { configuration: null, template: 'x' }, 'configuration'],
      [hec, { configuration: uri, template: 'x' }, 'configuration'],
    ];
    for (const [integration, body, field] of bad) {
      const res = await server.request('POST', `${path()}/${integration}/configurations`, { token: owner.token, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(body)).toContain(field);
    }
    const typed = await server.request('POST', `${path()}/${hook}/configurations`, { token: owner.token, json: { configuration: uri, template: 'x', eventType: 'Cipher_Created' } });
    expect(typed.status).toBe(400);
    const count = await server.database.db.selectFrom('organization_integration_configurations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
    const heced = await server.request('POST', `${path()}/${hec}/configurations`, { token: owner.token, json: { configuration: null, template: '{"event":"#EventMessage#"}' } });
    expect(heced.status, heced.text).toBe(200);
  });

  it('lists no dead letters at first and refuses to replay one that does not exist', async () => {
    await clean();
    const res = await server.request('GET', `${path()}/dead-letters`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', data: [] });
    expect((await server.request('GET', `${path()}/dead-letters`, { token: admin.token })).status).toBe(404);
  });
});
