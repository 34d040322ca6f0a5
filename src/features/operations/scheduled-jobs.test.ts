import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedDatabaseUrl } from '../../../test/support/shared-database.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { purgeRunsIn } from '../../../test/support/scheduled-job-runs.js';

/**
 * Scheduled jobs run once per fleet: three instances on one database, each with the Send purge
 * due every second, and only the holder of its lease does the work. Counted by each instance's
 * strongroom_scheduled_job_runs_total (the fleet test checks the same across real processes).
 */
const TOKEN = 'scrape-token-0123456789';
const servers: TestServer[] = [];

afterAll(async () => {
  for (const server of servers) await server.close().catch(() => undefined);
});

async function runs(server: TestServer): Promise<{ ran: number; skipped: number }> {
  const res = await server.request('GET', '/metrics', { token: TOKEN });
  expect(res.status).toBe(200);
  return purgeRunsIn(res.text);
}

describe('scheduled jobs across instances on one database', () => {
  it('run on one instance at a time, and move to another when it stops', async () => {
    const databaseUrl = await sharedDatabaseUrl();
    // One after the other: the first makes the signing key, the others read it.
    for (let i = 0; i < 3; i++) {
      servers.push(await startTestServer({ databaseUrl, env: { METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN, SEND_PURGE_INTERVAL_SECONDS: '1' } }));
    }
    const start = await Promise.all(servers.map(runs));
    await sleep(3500);
    const end = await Promise.all(servers.map(runs));
    const first = end.map((r, i) => ({ ran: r.ran - (start[i]?.ran ?? 0), skipped: r.skipped - (start[i]?.skipped ?? 0) }));
    const holders = first.filter((r) => r.ran > 0);
    expect(holders, JSON.stringify(first)).toHaveLength(1);
    // About one run a second for the whole fleet, not one per instance.
    const fleetRuns = first.reduce((n, r) => n + r.ran, 0);
    expect(fleetRuns).toBeGreaterThanOrEqual(2);
    expect(fleetRuns).toBeLessThanOrEqual(5);
    // The others tried each second and found the lease taken.
    for (const r of first.filter((r) => r.ran === 0)) expect(r.skipped).toBeGreaterThanOrEqual(2);

    // The holder stops (a rolling restart): it gives the lease back, and one other takes over.
    const holder = first.findIndex((r) => r.ran > 0);
    await servers[holder]?.close();
    const rest = servers.filter((_, i) => i !== holder);
    servers.splice(holder, 1);
    const before = await Promise.all(rest.map(runs));
    await sleep(3000);
    const after = await Promise.all(rest.map(runs));
    const newRuns = after.map((r, i) => r.ran - (before[i]?.ran ?? 0));
    expect(newRuns.filter((n) => n > 0), JSON.stringify({ before, after })).toHaveLength(1);
    expect(newRuns.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5);
  }, 60_000);
});
