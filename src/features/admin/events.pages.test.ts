import { describe, expect, it } from 'vitest';
import { consoleServers } from '../../../test/support/admin-console.js';
import { seedUser } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { EventType } from '../../platform/audit/event-type.js';

const startConsole = consoleServers();

const client = { ipAddress: '192.0.2.7', deviceType: 9, deviceIdentifier: null, clientVersion: null };

async function start() {
  const { server: s, browser } = await startConsole();
  const orgA = await seedOrganization(s, { name: 'Alpha Org' });
  const orgB = await seedOrganization(s, { name: 'Beta Org' });
  const userId = await seedUser(s, 'actor@example.com');
  const at = (day: string) => `${day}T10:00:00.000Z`;
  const record = (type: EventType, day: string, organizationId: string | null) =>
    s.app.features.audit.record(s.database.db, client, { type, organizationId, actingUserId: userId, userId, date: at(day) });
  await record(EventType.User_LoggedIn, '2026-11-20', null);
  await record(EventType.User_LoggedIn, '2026-11-21', null);
  await record(EventType.Cipher_Created, '2026-11-21', orgA);
  await record(EventType.Cipher_Updated, '2026-11-21', orgA);
  await record(EventType.Collection_Created, '2026-11-22', orgB);
  return { s, orgA, orgB, userId, browser };
}

const WINDOW = 'start=2026-11-01&end=2026-11-30';

describe('the events page', () => {
  it('lists every organization\'s events newest first with names, and the chart\'s numbers per day and category', async () => {
    const { browser } = await start();
    const page = await browser.get(`/admin/events?${WINDOW}`);
    expect(page.statusCode).toBe(200);
    const rows = [...page.body.matchAll(/<td data-label="Type">([^<]+)<\/td><td data-label="Organization">([^<]*)<\/td><td data-label="Acting user">([^<]*)<\/td><td data-label="Address">([^<]*)</g)].map((m) => [m[1], m[2], m[3], m[4]]);
    expect(rows).toEqual([
      ['Collection_Created', 'Beta Org', 'actor@example.com', '192.0.2.7'],
      ['Cipher_Updated', 'Alpha Org', 'actor@example.com', '192.0.2.7'],
      ['Cipher_Created', 'Alpha Org', 'actor@example.com', '192.0.2.7'],
      ['User_LoggedIn', '', 'actor@example.com', '192.0.2.7'],
      ['User_LoggedIn', '', 'actor@example.com', '192.0.2.7'],
    ]);
    const data = JSON.parse(/<script type="application\/json" id="events-chart-data">([^<]*)<\/script>/.exec(page.body)?.[1] ?? '{}') as { days: string[]; series: { label: string; counts: number[] }[] };
    expect(data.days).toEqual(['2026-11-20', '2026-11-21', '2026-11-22']);
    expect(data.series).toEqual([
      { label: 'Users', counts: [1, 1, 0] },
      { label: 'Items', counts: [0, 2, 0] },
      { label: 'Collections', counts: [0, 0, 1] },
    ]);
    // The script that draws it is Strongroom's own, and so is uPlot.
    expect(page.body).toContain('<script src="/admin/assets/uplot.js" defer></script>');
    expect(page.body).not.toMatch(/<script>(?!<)/);
  });

  it('filters by organization, acting user, category and dates', async () => {
    const { orgA, browser } = await start();
    const count = async (query: string) => ((await browser.get(`/admin/events?${query}`)).body.match(/<td data-label="Type">/g) ?? []).length;
    expect(await count(`${WINDOW}&organizationId=${orgA}`)).toBe(2);
    expect(await count(`${WINDOW}&category=10`)).toBe(2);
    expect(await count(`${WINDOW}&user=actor@example.com`)).toBe(5);
    expect(await count('start=2026-11-21&end=2026-11-21')).toBe(3);
    const unknown = await browser.get(`/admin/events?${WINDOW}&user=nobody@example.com`);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('nobody@example.com');
    expect((await browser.get('/admin/events?start=2026-11-01')).statusCode).toBe(400);
    expect((await browser.get('/admin/events?start=yesterday&end=today')).statusCode).toBe(400);
    expect((await browser.get('/admin/events?category=99')).statusCode).toBe(400);
    expect((await browser.get('/admin/events?start=2020-01-01&end=2026-11-30')).statusCode).toBe(400);
  });

  it("names Strongroom's own account-change and emergency-access events and filters by their categories", async () => {
    const { s, userId, browser } = await start();
    const record = (type: EventType) => s.app.features.audit.record(s.database.db, client, { type, organizationId: null, actingUserId: userId, userId, date: '2026-11-23T10:00:00.000Z' });
    await record(EventType.User_ChangedKdf);
    await record(EventType.EmergencyAccess_RecoveryInitiated);
    await record(EventType.EmergencyAccess_TakenOver);
    const page = await browser.get(`/admin/events?${WINDOW}`);
    const data = JSON.parse(/<script type="application\/json" id="events-chart-data">([^<]*)<\/script>/.exec(page.body)?.[1] ?? '{}') as { series: { label: string; counts: number[] }[] };
    expect(data.series.map((s) => s.label)).toEqual(['Users', 'Items', 'Collections', 'Account changes', 'Emergency access']);
    expect(page.body).toContain('<option value="91">Emergency access</option>');
    const types = async (query: string) => [...(await browser.get(`/admin/events?${query}`)).body.matchAll(/<td data-label="Type">([^<]+)<\/td>/g)].map((m) => m[1]);
    expect(await types(`${WINDOW}&category=90`)).toEqual(['User_ChangedKdf']);
    expect(await types(`${WINDOW}&category=91`)).toEqual(expect.arrayContaining(['EmergencyAccess_RecoveryInitiated', 'EmergencyAccess_TakenOver']));
    expect(await types(`${WINDOW}&category=91`)).toHaveLength(2);
  });

  it('pages by 50 with a continuation link', async () => {
    const { s, orgA, browser } = await start();
    for (let i = 0; i < 55; i++) await s.app.features.audit.record(s.database.db, client, { type: EventType.Cipher_Deleted, organizationId: orgA, date: `2026-11-23T10:00:${String(i).padStart(2, '0')}.000Z` });
    const first = await browser.get(`/admin/events?${WINDOW}`);
    expect((first.body.match(/<td data-label="Type">/g) ?? []).length).toBe(50);
    const next = /<a href="([^"]+)" rel="next">Older events<\/a>/.exec(first.body)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(next).toContain('continuationToken=');
    const second = await browser.get(next);
    expect((second.body.match(/<td data-label="Type">/g) ?? []).length).toBe(10);
    expect(second.body).not.toContain('rel="next"');
  });

  it('exports the filtered events as CSV', async () => {
    const { orgA, browser } = await start();
    const csv = await browser.get(`/admin/events.csv?${WINDOW}&organizationId=${orgA}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.headers['content-disposition']).toContain('attachment');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toMatch(/^date,type,userId,actingUserId,organizationId/);
    expect(lines.slice(1).map((line) => line.split(',')[1])).toEqual(['1101', '1100']);
  });
});
