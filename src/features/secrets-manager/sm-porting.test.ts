import { randomUUID } from 'node:crypto';
import { InsertQueryNode, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENC, type Actor } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { allowSecretsManager, seedSecret, smActor, smCallerOf } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { MAX_IMPORT_PROJECTS, MAX_IMPORT_SECRETS } from './sm-porting.schemas.js';
import { createSmPortingService } from './sm-porting.service.js';

let server: TestServer;
let org: string;
let owner: Actor;
let admin: Actor;
let member: Actor;
let noSm: Actor;
let stranger: Actor;

const T0 = '2026-01-01T00:00:00.000Z';
const ENC2 = ENC.replace('2.A', '2.B');

const smMember = (organizationId: string, email: string, type: OrganizationUserType, accessSecretsManager = true) => smActor(server, organizationId, { email, type, accessSecretsManager });

/** A fresh organization with the shared owner in it, so counts start from nothing. */
async function emptyOrg(): Promise<string> {
  const id = await seedOrganization(server);
  await allowSecretsManager(server, [await seedMembership(server, { organizationId: id, userId: owner.userId, type: OrganizationUserType.Owner })]);
  return id;
}

async function contents(organizationId: string) {
  const projects = await server.database.db.selectFrom('projects').selectAll().where('organization_id', '=', organizationId).execute();
  const secrets = await server.database.db.selectFrom('secrets').selectAll().where('organization_id', '=', organizationId).execute();
  return { projects, secrets };
}

/** An import of exactly as many projects and secrets as the limits allow, every secret in a project. */
function fullImport() {
  const projects = Array.from({ length: MAX_IMPORT_PROJECTS }, () => ({ id: randomUUID(), name: ENC }));
  const secrets = Array.from({ length: MAX_IMPORT_SECRETS }, (_, i) => ({ id: randomUUID(), key: ENC, value: ENC, note: ENC, projectIds: [projects[i % MAX_IMPORT_PROJECTS]!.id] }));
  return { projects, secrets };
}

const importTo = (organizationId: string, token: string, json: unknown) => server.request('POST', `/api/sm/${organizationId}/import`, { token, json });

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server);
  owner = await smMember(org, 'port-owner@example.com', OrganizationUserType.Owner);
  admin = await smMember(org, 'port-admin@example.com', OrganizationUserType.Admin);
  member = await smMember(org, 'port-member@example.com', OrganizationUserType.User);
  noSm = await smMember(org, 'port-nosm@example.com', OrganizationUserType.Admin, false);
  stranger = await smMember(await seedOrganization(server), 'port-stranger@example.com', OrganizationUserType.Owner);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('POST /sm/{organizationId}/import and GET /sm/{organizationId}/export', () => {
  it('imports projects and secrets under new ids, keeping which secret is in which project, and exports them back', async () => {
    const target = await emptyOrg();
    const p1 = randomUUID();
    const p2 = randomUUID();
    const body = {
      projects: [
        { id: p1, name: ENC },
        { id: p2.toUpperCase(), name: ENC2 },
      ],
      secrets: [
        { id: randomUUID(), key: ENC, value: ENC2, note: ENC, projectIds: [p2] },
        { id: randomUUID(), key: ENC2, value: ENC, note: ENC2, projectIds: [] },
      ],
    };
    const res = await importTo(target, owner.token, body);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    const stored = await contents(target);
    expect(stored.projects).toHaveLength(2);
    expect(stored.projects.map((p) => p.id)).not.toContain(p1);
    const second = stored.projects.find((p) => p.name === ENC2);
    expect(stored.secrets.find((s) => s.key === ENC)?.project_id).toBe(second?.id);
    expect(stored.secrets.find((s) => s.key === ENC2)?.project_id).toBeNull();

    const exported = await server.request('GET', `/api/sm/${target}/export`, { token: owner.token });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.object).toBe('SecretsManagerExportResponseModel');
    expect(exported.body.projects).toEqual(expect.arrayContaining(stored.projects.map((p) => ({ id: p.id, name: p.name }))));
    expect(exported.body.secrets).toEqual(
      expect.arrayContaining([{ id: stored.secrets.find((s) => s.key === ENC)?.id, key: ENC, value: ENC2, note: ENC, projectIds: [second?.id] }]),
    );
    // An export imports again as is.
    expect((await importTo(target, owner.token, exported.body)).status).toBe(200);
    expect((await contents(target)).secrets).toHaveLength(4);
  });

  it('leaves trashed secrets out of the export', async () => {
    const target = await emptyOrg();
    await seedSecret(server, target, null, { trashed: true, date: T0 });
    const exported = await server.request('GET', `/api/sm/${target}/export`, { token: owner.token });
    expect(exported.body).toEqual({ object: 'SecretsManagerExportResponseModel', projects: [], secrets: [] });
  });

  it('refuses bad imports with a 400 and writes nothing', async () => {
    const target = await emptyOrg();
    const p = randomUUID();
    const secret = (over: object = {}) => ({ id: randomUUID(), key: ENC, value: ENC, note: ENC, projectIds: [], ...over });
    const cases: [unknown, string, string][] = [
      [{ projects: [{ id: p, name: ENC }, { id: randomUUID(), name: ENC }], secrets: [secret({ projectIds: [p, randomUUID()] })] }, 'secrets[0].projectIds', 'A secret can only be in one project at a time.'],
      [{ projects: [], secrets: [secret({ projectIds: [randomUUID()] })] }, 'secrets[0].projectIds', 'The project is not part of this import.'],
      [{ projects: [{ id: p, name: ENC }, { id: p, name: ENC }] }, 'projects[1].id', 'A project id appears twice in the import.'],
      [{ projects: Array.from({ length: 1001 }, () => ({ id: randomUUID(), name: ENC })) }, 'projects', 'You cannot import this much data at once, the limit is 1000 projects and 6000 secrets.'],
      [{ secrets: Array.from({ length: 6001 }, () => secret()) }, 'secrets', 'You cannot import this much data at once, the limit is 1000 projects and 6000 secrets.'],
    ];
    for (const [body, field, message] of cases) {
      const res = await importTo(target, owner.token, body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.validationErrors).toEqual({ [field]: [message] });
    }
    for (const [body, field] of [
      [{ projects: [{ id: p, name: 'plain text' }] }, 'name'],
      [{ secrets: [secret({ value: 'plain text' })] }, 'value'],
      [{ secrets: [secret({ note: 'x' })] }, 'note'],
      [{ secrets: [secret({ key: `2.${'A'.repeat(1000)}|AAAA|AAAA` })] }, 'key'],
      [{ projects: [{ id: 'not-a-guid', name: ENC }] }, 'id'],
    ] as const) {
      const res = await importTo(target, owner.token, body);
      expect(res.status, res.text).toBe(400);
      expect(JSON.stringify(res.body.validationErrors)).toContain(field);
    }
    expect(await contents(target)).toEqual({ projects: [], secrets: [] });
  });

  it('imports the most the limits allow: 1000 projects and 6000 secrets', async () => {
    const target = await emptyOrg();
    const res = await importTo(target, owner.token, fullImport());
    expect(res.status, res.text).toBe(200);
    const stored = await contents(target);
    expect([stored.projects.length, stored.secrets.length]).toEqual([MAX_IMPORT_PROJECTS, MAX_IMPORT_SECRETS]);
    expect(stored.secrets.every((s) => s.project_id !== null)).toBe(true);
  });

  it('writes nothing when an insert fails part-way, after projects and some secrets went in', async () => {
    const target = await emptyOrg();
    let secretInserts = 0;
    // The third insert into secrets fails, after every project and two batches of secrets.
    const failing: KyselyPlugin = {
      transformQuery({ node }) {
        if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'secrets' && ++secretInserts === 3) throw new Error('disk full');
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const service = createSmPortingService({ db: server.database.db.withPlugin(failing), clock: { now: () => new Date() } });
    const principal = { kind: 'user', userId: owner.userId, scopes: ['api'] } as never;
    await expect(service.importData(smCallerOf(principal), target, fullImport())).rejects.toThrow('disk full');
    expect(secretInserts).toBe(3);
    expect(await contents(target)).toEqual({ projects: [], secrets: [] });
  });

  it('undoes the slices already written when a later one fails, leaving no project or secret behind', async () => {
    const target = await emptyOrg();
    let secretInserts = 0;
    // The 25th insert into secrets fails: every project and 1,200 secrets were committed before it.
    const failing: KyselyPlugin = {
      transformQuery({ node }) {
        if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'secrets' && ++secretInserts === 25) throw new Error('disk full');
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const service = createSmPortingService({ db: server.database.db.withPlugin(failing), clock: { now: () => new Date() } });
    const principal = { kind: 'user', userId: owner.userId, scopes: ['api'] } as never;
    await expect(service.importData(smCallerOf(principal), target, fullImport())).rejects.toThrow('disk full');
    expect(await contents(target)).toEqual({ projects: [], secrets: [] });
  });

  it('lets other requests run between the slices of a full import', async () => {
    const target = await emptyOrg();
    const service = createSmPortingService({ db: server.database.db, clock: { now: () => new Date() } });
    const principal = { kind: 'user', userId: owner.userId, scopes: ['api'] } as never;
    // Another request's turn on the loop, counted each time it comes round.
    let turns = 0;
    let running = true;
    const turn = () => {
      turns++;
      if (running) setImmediate(turn);
    };
    setImmediate(turn);
    await service.importData(smCallerOf(principal), target, fullImport());
    running = false;
    // At least one turn for each slice of 500 secrets.
    expect(turns).toBeGreaterThanOrEqual(MAX_IMPORT_SECRETS / 500);
    expect((await contents(target)).secrets).toHaveLength(MAX_IMPORT_SECRETS);
  });

  it('answers 404 to members who are not admins, admins without Secrets Manager and other organizations', async () => {
    expect((await server.request('GET', `/api/sm/${org}/export`, { token: admin.token })).status).toBe(200);
    for (const token of [member.token, noSm.token, stranger.token]) {
      expect((await server.request('GET', `/api/sm/${org}/export`, { token })).status).toBe(404);
      expect((await importTo(org, token, { projects: [{ id: randomUUID(), name: ENC }] })).status).toBe(404);
    }
    expect((await contents(org)).projects).toEqual([]);
  });
});
