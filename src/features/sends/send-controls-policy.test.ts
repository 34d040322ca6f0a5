import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { fileSendBody, textSendBody } from '../../../test/support/sends.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';
import { DISABLE_SEND, HIDE_EMAIL_DISALLOWED, SendWhoCanAccess } from './send-policies.js';

/**
 * The Send controls policy (type 21): one policy for what Disable Send (6) and Send options (7)
 * did, plus who may open members' Sends, the domains of their addresses, the Send types allowed
 * and how long Sends may live. Owners and admins are exempt, as from the older two.
 */

const HASH = 'c2VuZC1wYXNzd29yZC1oYXNoLWZyb20tdGhlLWNsaWVudA==';
const HOUR = 60 * 60 * 1000;

let server: TestServer;
let org: string;
let owner: Actor;
let member: Actor;
let outsider: Actor;

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Send controls' });
  owner = await actor(server, org, 'controls-owner@example.com', { type: OrganizationUserType.Owner });
  member = await actor(server, org, 'controls-member@example.com');
  outsider = await actor(server, await seedOrganization(server, { name: 'Elsewhere' }), 'controls-outsider@example.com');
});
afterAll(async () => {
  await server?.close();
});

const inHours = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();
const as = (who: Actor, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: who.token, ...(json === undefined ? {} : { json }) });
const setPolicy = (data: Record<string, unknown> | null, enabled = true) => as(owner, 'PUT', `/organizations/${org}/policies/${PolicyType.SendControls}`, { type: PolicyType.SendControls, enabled, data });
const text = (overrides: Record<string, unknown> = {}) => textSendBody(inHours(7 * 24), overrides);

async function expectRefused(who: Actor, body: Record<string, unknown>, message: string, path = '/sends') {
  const res = await as(who, 'POST', path, body);
  expect([res.status, res.body.message], res.text).toEqual([400, message]);
}
async function expectTaken(who: Actor, body: Record<string, unknown>, path = '/sends') {
  const res = await as(who, 'POST', path, body);
  expect(res.status, res.text).toBe(200);
  return (res.body.sendResponse ?? res.body) as { id: string };
}

describe('the Send controls policy', () => {
  it('refuses data the clients never send, naming the field', async () => {
    for (const [data, field] of [
      [{ whoCanAccess: 5 }, 'data.whoCanAccess'],
      [{ disableSend: 'yes' }, 'data.disableSend'],
      [{ deletionHours: 0 }, 'data.deletionHours'],
      [{ allowedSendTypes: [0, 7] }, 'data.allowedSendTypes'],
      [{ whoCanAccess: SendWhoCanAccess.PasswordProtected, allowedDomains: 'example.com' }, 'data.allowedDomains'],
    ] as const) {
      const res = await setPolicy(data);
      expect(res.status, res.text).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {})).toEqual([field]);
    }
  });

  it('requires a password when who can access is "anyone with a password", for members only', async () => {
    expect((await setPolicy({ whoCanAccess: SendWhoCanAccess.PasswordProtected })).status).toBe(200);
    const message = 'Due to an Enterprise policy your Sends must be protected by password';
    await expectRefused(member, text(), message);
    await expectRefused(member, text({ authType: 0, emails: 'friend@example.com' }), message);
    const kept = await expectTaken(member, text({ authType: 1, password: HASH }));
    // Removing the password would leave the Send open: refused as an edit would be.
    const removed = await as(member, 'PUT', `/sends/${kept.id}/remove-auth`);
    expect([removed.status, removed.body.message]).toEqual([400, message]);
    expect((await as(member, 'GET', `/sends/${kept.id}`)).body.authType).toBe(1);
    await expectTaken(owner, text());
    await expectTaken(outsider, text());
  });

  it('requires email verification to the allowed domains when who can access is "specific people"', async () => {
    expect((await setPolicy({ whoCanAccess: SendWhoCanAccess.SpecificPeople, allowedDomains: 'example.com, example.org' })).status).toBe(200);
    await expectRefused(member, text({ authType: 1, password: HASH }), 'Due to an Enterprise policy your Sends must be protected by email verification');
    await expectRefused(
      member,
      text({ authType: 0, emails: 'a@example.com,b@elsewhere.net' }),
      'Due to an Enterprise policy your Sends must be protected by email verification and access granted only to the following domain(s): example.com, example.org',
    );
    // Nor may a domain's look-alike pass (`badexample.com` is not below `example.com`).
    const lookAlike = await as(member, 'POST', '/sends', text({ authType: 0, emails: 'a@badexample.com' }));
    expect([lookAlike.status, lookAlike.body.message]).toEqual([400, expect.stringContaining('following domain(s)')]);
    const send = await expectTaken(member, text({ authType: 0, emails: 'a@example.com,b@mail.example.org' }));
    const edited = await as(member, 'PUT', `/sends/${send.id}`, text({ authType: 0, emails: 'c@elsewhere.net' }));
    expect(edited.status).toBe(400);
    expect((await as(member, 'GET', `/sends/${send.id}`)).body.emails).toBe('a@example.com,b@mail.example.org');
  });

  it('limits the Send types and how long Sends may live', async () => {
    expect((await setPolicy({ allowedSendTypes: [0], deletionHours: 24 })).status).toBe(200);
    await expectRefused(member, fileSendBody(inHours(12), 10), 'Due to an Enterprise policy your Sends must be of the following types: Text', '/sends/file/v2');
    await expectRefused(member, text(), 'Due to an Enterprise policy your Sends must have deletion dates no more than 1 day from their creation dates');
    await expectTaken(member, textSendBody(inHours(24)));
    expect((await setPolicy({ deletionHours: 5 })).status).toBe(200);
    await expectRefused(member, textSendBody(inHours(6)), 'Due to an Enterprise policy your Sends must have deletion dates no more than 5 hours from their creation dates');
    await expectTaken(member, fileSendBody(inHours(5), 10), '/sends/file/v2');
  });

  it('disables Send and hiding the email like the older policies, and binds nothing once turned off', async () => {
    expect((await setPolicy({ disableHideEmail: true })).status).toBe(200);
    await expectRefused(member, text({ hideEmail: true }), HIDE_EMAIL_DISALLOWED);
    const mine = await expectTaken(member, text());
    expect((await setPolicy({ disableSend: true })).status).toBe(200);
    await expectRefused(member, text(), DISABLE_SEND);
    const edit = await as(member, 'PUT', `/sends/${mine.id}`, text());
    expect([edit.status, edit.body.message]).toEqual([400, DISABLE_SEND]);
    expect((await as(member, 'DELETE', `/sends/${mine.id}`)).status).toBe(200);

    expect((await setPolicy({ disableSend: true }, false)).status).toBe(200);
    await expectTaken(member, text({ hideEmail: true }));
  });
});
