import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, ENC, orgWithOwner, type Actor } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { REPORT_METRICS } from './reports.service.js';

const DAY = 24 * 60 * 60 * 1000;
const clock = testClock(new Date('2026-11-20T12:00:00.000Z'));
let server: TestServer;
let org: string;
let otherOrg: string;
let teamsOrg: string;
let owner: Actor;
let reporter: Actor;
let user: Actor;
let stranger: Actor;
let teamsOwner: Actor;

/** Distinct, well-formed encrypted strings. */
const enc = (letter: string) => ENC.replace('2.A', `2.${letter}`);
const METRICS = Object.fromEntries(Object.keys(REPORT_METRICS).map((name, i) => [name, i + 1]));
const report = (extra: Record<string, unknown> = {}) => ({
  reportData: enc('R'),
  contentEncryptionKey: enc('K'),
  summaryData: enc('S'),
  applicationData: enc('P'),
  metrics: METRICS,
  ...extra,
});
const base = (orgId = org) => `/api/reports/organizations/${orgId}`;
const add = (token: string, json: unknown, orgId = org) => server.request('POST', base(orgId), { token, json });

beforeAll(async () => {
  server = await startTestServer({ clock });
  ({ org, owner, otherOrg, stranger } = await orgWithOwner(server));
  reporter = await actor(server, org, 'reporter@example.com', custom('accessReports'));
  user = await actor(server, org, 'user@example.com', { type: OrganizationUserType.User });
  teamsOrg = await seedOrganization(server, { planType: PlanType.TeamsAnnually, name: 'Teams' });
  teamsOwner = await actor(server, teamsOrg, 'teams-owner@example.com', { type: OrganizationUserType.Owner });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('organization reports', () => {
  it('stores a report with its twelve metrics and answers it, latest and by id', async () => {
    expect((await server.request('GET', `${base()}/latest`, { token: owner.token })).status).toBe(404);
    const res = await add(reporter.token, report());
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      organizationId: org,
      reportData: enc('R'),
      contentEncryptionKey: enc('K'),
      summaryData: enc('S'),
      applicationData: enc('P'),
      reportFile: null,
      creationDate: clock.now().toISOString(),
      metrics: METRICS,
    });
    const stored = await server.database.db.selectFrom('organization_reports').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(stored.critical_password_at_risk_count).toBe(12);
    expect(stored.application_count).toBe(1);

    clock.advance(1000);
    const newer = await add(owner.token, report({ metrics: { totalMemberCount: 7 } }));
    const latest = await server.request('GET', `${base()}/latest`, { token: owner.token });
    expect(latest.body.id).toBe(newer.body.id);
    // A metric left out is stored as null, as the official server does.
    expect(latest.body.metrics).toMatchObject({ totalMemberCount: 7, totalApplicationCount: null });
    const first = await server.request('GET', `${base()}/${res.body.id}`, { token: owner.token });
    expect(first.body.id).toBe(res.body.id);
  });

  it('refuses a report missing any encrypted part, naming it, and writes nothing', async () => {
    const before = await server.database.db.selectFrom('organization_reports').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    for (const field of ['reportData', 'contentEncryptionKey', 'summaryData', 'applicationData']) {
      const res = await add(owner.token, report({ [field]: null }));
      expect(res.status, field).toBe(400);
      expect(JSON.stringify(res.body.validationErrors), field).toContain(field);
    }
    const malformed = await add(owner.token, report({ summaryData: 'not encrypted' }));
    expect(malformed.status).toBe(400);
    expect(malformed.text).toContain('summaryData');
    const negative = await add(owner.token, report({ metrics: { totalPasswordCount: -1 } }));
    expect(negative.status).toBe(400);
    expect(negative.text).toContain('totalPasswordCount');
    const after = await server.database.db.selectFrom('organization_reports').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('updates the summary with its metrics, and the application data, and answers each part', async () => {
    const created = await add(owner.token, report());
    clock.advance(60_000);
    const patched = await server.request('PATCH', `${base()}/data/summary/${created.body.id}`, { token: reporter.token, json: { summaryData: enc('T'), metrics: { totalPasswordCount: 40 } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ summaryData: enc('T'), revisionDate: clock.now().toISOString() });
    expect(patched.body.metrics).toMatchObject({ totalPasswordCount: 40, totalApplicationCount: null });
    const summary = await server.request('GET', `${base()}/data/summary/${created.body.id}`, { token: owner.token });
    expect(summary.body).toEqual({ encryptedData: enc('T'), encryptionKey: enc('K'), date: clock.now().toISOString() });

    expect((await server.request('PATCH', `${base()}/data/summary/${created.body.id}`, { token: owner.token, json: { summaryData: '' } })).status).toBe(400);
    const app = await server.request('PATCH', `${base()}/data/application/${created.body.id}`, { token: owner.token, json: { applicationData: enc('Q') } });
    expect(app.status, app.text).toBe(200);
    expect((await server.request('GET', `${base()}/data/application/${created.body.id}`, { token: owner.token })).body).toEqual({ applicationData: enc('Q') });
  });

  it('answers the summaries revised within a date range, whole days at both ends, newest first', async () => {
    const { id: older } = await server.request('POST', base(otherOrg), { token: stranger.token, json: report() }).then((r) => r.body as { id: string });
    // Revised three days ago (tokens would expire if the clock moved that far).
    await server.database.db
      .updateTable('organization_reports')
      .set({ revision_date: new Date(clock.now().getTime() - 3 * DAY).toISOString() })
      .where('id', '=', older)
      .execute();
    await add(stranger.token, report({ summaryData: enc('L') }), otherOrg);
    const today = clock.now().toISOString().slice(0, 10);
    const threeDaysAgo = new Date(clock.now().getTime() - 3 * DAY).toISOString().slice(0, 10);
    const range = (start: string, end: string) => server.request('GET', `${base(otherOrg)}/data/summary?startDate=${start}&endDate=${end}`, { token: stranger.token });
    const both = await range(threeDaysAgo, today);
    expect(both.status, both.text).toBe(200);
    expect((both.body as { encryptedData: string }[]).map((s) => s.encryptedData)).toEqual([enc('L'), enc('S')]);
    expect((await range(today, today)).body).toHaveLength(1);
    const backwards = await range(today, threeDaysAgo);
    expect(backwards.status).toBe(400);
    expect(backwards.text).toContain('startDate');
    const bad = await range('yesterday', today);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('startDate');
  });

  it("refuses another organization's report with 400 and an unknown one with 404, and deletes", async () => {
    const theirs = (await add(stranger.token, report(), otherOrg)).body.id as string;
    const ours = (await add(owner.token, report())).body.id as string;
    expect((await server.request('GET', `${base()}/${theirs}`, { token: owner.token })).status).toBe(400);
    expect((await server.request('DELETE', `${base()}/${theirs}`, { token: owner.token })).status).toBe(400);
    expect((await server.request('GET', `${base()}/${randomUUID()}`, { token: owner.token })).status).toBe(404);
    expect((await server.request('GET', `${base(otherOrg)}/${theirs}`, { token: stranger.token })).status).toBe(200);
    const removed = await server.request('DELETE', `${base()}/${ours}`, { token: owner.token });
    expect(removed.status, removed.text).toBe(200);
    expect((await server.request('GET', `${base()}/${ours}`, { token: owner.token })).status).toBe(404);
  });

  it('is for owners, admins and accessReports members of an Enterprise organization, as useRiskInsights says', async () => {
    expect((await add(user.token, report())).status).toBe(403);
    expect((await server.request('GET', `${base()}/latest`, { token: stranger.token })).status).toBe(404);
    const teams = await add(teamsOwner.token, report(), teamsOrg);
    expect(teams.status).toBe(400);
    expect(teams.body.message).toBe("Your organization's plan does not support this feature.");
    const profile = async (a: Actor) => (await server.request('GET', '/api/accounts/profile', { token: a.token })).body.organizations as { id: string; useRiskInsights: boolean }[];
    expect((await profile(owner)).find((o) => o.id === org)?.useRiskInsights).toBe(true);
    expect((await profile(teamsOwner)).find((o) => o.id === teamsOrg)?.useRiskInsights).toBe(false);
  });
});
