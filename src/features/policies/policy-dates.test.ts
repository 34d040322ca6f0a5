import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshOrgWithOwner, type Actor } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { PolicyType } from './policy-type.js';

// Clients 2026.8 run `new Date(policy.revisionDate).toISOString()` on every policy they keep; a
// missing date throws there and the vault shows empty. These tests read every answer that holds a
// policy object and check each one's date.
let server: TestServer;
let org: string;
let owner: Actor;

/** Every `object: "policy"` found anywhere in a JSON answer. */
function policiesIn(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(policiesIn);
  if (!value || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const own = record.object === 'policy' ? [record] : [];
  return [...own, ...Object.values(record).flatMap(policiesIn)];
}

function expectDated(policies: Record<string, unknown>[]) {
  expect(policies.length).toBeGreaterThan(0);
  for (const policy of policies) {
    expect(typeof policy.revisionDate, JSON.stringify(policy)).toBe('string');
    expect(new Date(policy.revisionDate as string).toISOString()).toBe(policy.revisionDate);
  }
}

async function seedRow(type: PolicyType, dates: { creation_date: string; revision_date: string }) {
  await server.database.db.insertInto('policies').values({ id: randomUUID(), organization_id: org, type, enabled: true, data: null, ...dates }).execute();
}

beforeAll(async () => {
  server = await startTestServer();
  ({ org, owner } = await freshOrgWithOwner(server));
  const saved = await server.request('PUT', `/api/organizations/${org}/policies/${PolicyType.MasterPassword}`, { token: owner.token, json: { enabled: true, data: { minLength: 14 } } });
  expect(saved.status).toBe(200);
  // Rows written elsewhere (a restore from another server) whose dates are empty.
  await seedRow(PolicyType.DisableSend, { creation_date: '2026-01-02T03:04:05.000Z', revision_date: '' });
  await seedRow(PolicyType.PasswordGenerator, { creation_date: '', revision_date: '' });
});
afterAll(async () => server.close());

describe('policy revision dates', () => {
  it('every policy in sync, in policies and policiesNew, carries a valid ISO date', async () => {
    const sync = await server.request('GET', '/api/sync', { token: owner.token });
    expect(sync.status).toBe(200);
    expect(sync.body.policies).toHaveLength(3);
    expect(sync.body.policiesNew).toHaveLength(3);
    expectDated(policiesIn(sync.body));
  });

  it('the organization list, single reads (saved or not), the master password read and a save answer dated policies', async () => {
    const base = `/api/organizations/${org}/policies`;
    const answers = await Promise.all([
      server.request('GET', base, { token: owner.token }),
      server.request('GET', `${base}/${PolicyType.MasterPassword}`, { token: owner.token }),
      server.request('GET', `${base}/${PolicyType.SingleOrg}`, { token: owner.token }),
      server.request('GET', `${base}/master-password`, { token: owner.token }),
      server.request('PUT', `${base}/${PolicyType.ActivateAutofill}`, { token: owner.token, json: { enabled: false } }),
    ]);
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    expectDated(answers.flatMap((a) => policiesIn(a.body)));
  });

  it('a row without a revision date answers its creation date, and one with neither the epoch', async () => {
    const list = await server.request('GET', `/api/organizations/${org}/policies`, { token: owner.token });
    const byType = new Map((list.body.data as { type: number; revisionDate: string }[]).map((p) => [p.type, p.revisionDate]));
    expect(byType.get(PolicyType.DisableSend)).toBe('2026-01-02T03:04:05.000Z');
    expect(byType.get(PolicyType.PasswordGenerator)).toBe('1970-01-01T00:00:00.000Z');
    const unsaved = await server.request('GET', `/api/organizations/${org}/policies/${PolicyType.RequireSso}`, { token: owner.token });
    expect(unsaved.body).toMatchObject({ id: null, enabled: false, revisionDate: '1970-01-01T00:00:00.000Z' });
  });
});
