import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { orgWithOwner, seedPolicy } from '../../../test/support/members.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PolicyType } from './policy-type.js';

// GET /organizations/{orgId}/policies/token: the web vault's read while an invitee registers.
let server: TestServer;
let sink: SmtpSink;
const clock = testClock();
let orgId: string;
let ownerToken: string;
let invitation: ReturnType<typeof invitationFrom>;
let other: ReturnType<typeof invitationFrom>;

const policiesByToken = (org: string, query: Record<string, string>) => server.request('GET', `/api/organizations/${org}/policies/token?${new URLSearchParams(query).toString()}`);
const linkOf = (i: ReturnType<typeof invitationFrom>) => ({ token: i.token, email: i.email, organizationUserId: i.organizationUserId });

async function invite(org: string, token: string, email: string) {
  const res = await server.request('POST', `/api/organizations/${org}/users/invite`, { token, json: { emails: [email], type: Role.User, collections: [] } });
  expect(res.status, res.text).toBe(200);
  return invitationFrom(await sink.waitFor(email));
}

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ env: sink.env, clock });
  const org = await orgWithOwner(server);
  orgId = org.orgId;
  ownerToken = org.owner.accessToken;
  await seedPolicy(server, orgId, PolicyType.SingleOrg, false);
  await seedPolicy(server, orgId, PolicyType.TwoFactorAuthentication);
  await seedPolicy(server, orgId, PolicyType.MasterPassword);
  await server.database.db
    .updateTable('policies')
    .set({ data: JSON.stringify({ minLength: 14, requireUpper: true }) })
    .where('organization_id', '=', orgId)
    .where('type', '=', PolicyType.MasterPassword)
    .execute();
  invitation = await invite(orgId, ownerToken, 'Newcomer@Example.com');
  other = await invite(orgId, ownerToken, 'someone-else@example.com');
}, 120_000);

afterAll(async () => {
  await server.close();
  await sink.close();
});

describe('policies by invitation token', () => {
  it("answers the organization's enabled policies, and only those, to the link's holder without a login", async () => {
    const res = await policiesByToken(orgId, linkOf(invitation));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', continuationToken: null });
    const data = res.body.data as { type: number; enabled: boolean; organizationId: string; object: string; data: unknown }[];
    expect(data.map((p) => p.type).sort()).toEqual([PolicyType.TwoFactorAuthentication, PolicyType.MasterPassword].sort());
    expect(data.every((p) => p.enabled && p.organizationId === orgId && p.object === 'policy')).toBe(true);
    expect(data.find((p) => p.type === (PolicyType.MasterPassword as number))?.data).toEqual({ minLength: 14, requireUpper: true });
    // The email as typed in another case is the same invitee.
    expect((await policiesByToken(orgId, { ...linkOf(invitation), email: 'NEWCOMER@example.com' })).status).toBe(200);
  });

  it('answers 404 to a forged token, another email, another membership, another organization', async () => {
    const refusals = [
      { ...linkOf(invitation), token: 'forged.token.value' },
      { ...linkOf(invitation), token: `${invitation.token.slice(0, -4)}AAAA` },
      { ...linkOf(invitation), email: 'intruder@example.com' },
      { ...linkOf(invitation), organizationUserId: other.organizationUserId },
      { ...linkOf(invitation), organizationUserId: randomUUID() },
    ];
    for (const query of refusals) {
      const res = await policiesByToken(orgId, query);
      expect(res.status, JSON.stringify(query)).toBe(404);
      expect(res.body).not.toHaveProperty('data');
    }
    // A valid link presented on another organization's path.
    const elsewhere = await orgWithOwner(server);
    await seedPolicy(server, elsewhere.orgId, PolicyType.MasterPassword);
    expect((await policiesByToken(elsewhere.orgId, linkOf(invitation))).status).toBe(404);
    expect((await policiesByToken(randomUUID(), linkOf(invitation))).status).toBe(404);
  });

  it('names a missing or malformed parameter with a 400', async () => {
    const { token: _token, ...noToken } = linkOf(invitation);
    const missing = await policiesByToken(orgId, noToken);
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('token');
    const badId = await policiesByToken(orgId, { ...linkOf(invitation), organizationUserId: 'not-a-guid' });
    expect(badId.status).toBe(400);
    expect(badId.text).toContain('organizationUserId');
    expect((await server.request('GET', `/api/organizations/not-a-guid/policies/token?${new URLSearchParams(linkOf(invitation)).toString()}`)).status).toBe(400);
  });

  it('answers 404 when the organization cannot use policies', async () => {
    await server.database.db.updateTable('organizations').set({ use_policies: false }).where('id', '=', orgId).execute();
    try {
      expect((await policiesByToken(orgId, linkOf(invitation))).status).toBe(404);
    } finally {
      await server.database.db.updateTable('organizations').set({ use_policies: true }).where('id', '=', orgId).execute();
    }
  });

  it('stops answering once the invitation token expires', async () => {
    expect((await policiesByToken(orgId, linkOf(other))).status).toBe(200);
    clock.advance(6 * 86_400_000);
    expect((await policiesByToken(orgId, linkOf(other))).status).toBe(404);
  });
});
