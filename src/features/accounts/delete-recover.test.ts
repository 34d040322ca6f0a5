import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { BadRequest } from '../../http/errors.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { createAuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { localFileStore } from '../../platform/storage/file-store.js';
import { isSoleOwner } from '../organizations/sole-owner.js';
import { removeAccount } from './account-rules.js';

/**
 * Deleting an account by a mailed link: `POST /api/accounts/delete-recover` mails it,
 * `POST /api/accounts/delete-recover-token` follows it, as the official server names them. One server with a mail sink and a clock the
 * last test moves; a second without SMTP for the logged link.
 */
const PUBLIC_URL = 'https://vault.example.com';
const SOLE_OWNER = 'Cannot delete this user because it is the sole owner of at least one organization. Please delete these organizations or upgrade another user.';

const clock = testClock();
let sink: SmtpSink;
let server: TestServer;
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ clock, env: { ...sink.env, PUBLIC_URL } });
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const askLink = (s: TestServer, email: string) => s.request('POST', '/api/accounts/delete-recover', { json: { email } });
const confirm = (userId: string, token: string) => server.request('POST', '/api/accounts/delete-recover-token', { json: { userId, token } });
const exists = async (userId: string) => (await server.database.db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined;

/** Asks for the link and reads it from the mail, as the web vault's page reads its query. */
async function mailedLink(user: LoggedInUser): Promise<{ userId: string; token: string; email: string; url: URL }> {
  expect((await askLink(server, user.account.email.toUpperCase())).status).toBe(200);
  const mail = await sink.waitFor(user.account.email);
  const match = /(https:\/\/vault\.example\.com\/#\/verify-recover-delete\?\S+)/.exec(mail.text);
  if (!match?.[1]) throw new Error(`no verify-recover-delete link in mail:\n${mail.text}`);
  const url = new URL(match[1]);
  const query = new URLSearchParams(url.hash.replace(/^#\/verify-recover-delete\?/, ''));
  return { userId: query.get('userId') ?? '', token: query.get('token') ?? '', email: query.get('email') ?? '', url };
}

describe('deleting an account by mailed link', () => {
  it('mails the web vault link, whose token deletes the account once and records User_Deleted', async () => {
    const user = await createUser(server, { email: freshEmail('gone') });
    const link = await mailedLink(user);
    expect(link.url.origin + link.url.pathname).toBe(`${PUBLIC_URL}/`);
    expect(link).toMatchObject({ userId: user.userId, email: user.account.email });

    const other = await createUser(server, { email: freshEmail('stays') });
    const refusals: [string, unknown, string][] = [
      ['a forged token', { userId: user.userId, token: `${link.token}x` }, 'token'],
      ['another account\'s id', { userId: other.userId, token: link.token }, 'token'],
      ['an unknown id', { userId: '6f1c2a9e-0000-4000-8000-000000000000', token: link.token }, 'token'],
      ['no token', { userId: user.userId }, 'token'],
      ['an id that is no GUID', { userId: 'abc', token: link.token }, 'userId'],
    ];
    for (const [what, json, field] of refusals) {
      const res = await server.request('POST', '/api/accounts/delete-recover-token', { json });
      expect(res.status, what).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), what).toEqual([field]);
    }
    expect(await exists(user.userId)).toBe(true);
    expect(await exists(other.userId)).toBe(true);

    expect((await confirm(link.userId.toUpperCase(), link.token)).status).toBe(200);
    expect(await exists(user.userId)).toBe(false);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    const events = await server.database.db.selectFrom('events').select(['type', 'acting_user_id']).where('user_id', '=', user.userId).where('type', '=', EventType.User_Deleted).execute();
    expect(events).toEqual([{ type: EventType.User_Deleted, acting_user_id: user.userId }]);
    expect((await confirm(link.userId, link.token)).status).toBe(400);
  });

  it("takes exactly what the web vault's recover-delete and verify-recover-delete pages post", async () => {
    const user = await createUser(server, { email: freshEmail('webvault') });
    // recover-delete: new DeleteRecoverRequest() with only its email set, anonymous.
    const asked = await server.request('POST', '/api/accounts/delete-recover', { json: { email: user.account.email } });
    expect(asked.status).toBe(200);
    const mail = await sink.waitFor(user.account.email);
    const match = /verify-recover-delete\?(\S+)/.exec(mail.text);
    const query = new URLSearchParams(match?.[1] ?? '');
    // verify-recover-delete: new VerifyDeleteRecoverRequest(userId, token) from the link's query.
    const body = { userId: query.get('userId'), token: query.get('token') };
    const wrongWay = await server.request('POST', '/api/accounts/delete-recover', { json: body });
    expect(wrongWay.status).toBe(400);
    expect(await exists(user.userId)).toBe(true);
    expect((await server.request('POST', '/api/accounts/delete-recover-token', { json: body })).status).toBe(200);
    expect(await exists(user.userId)).toBe(false);
  });

  it('answers 200 for an address with no account, or a disabled one, and mails nothing', async () => {
    const disabled = await createUser(server, { email: freshEmail('off') });
    await server.database.db.updateTable('users').set({ disabled: true }).where('id', '=', disabled.userId).execute();
    const before = sink.messages.length;
    for (const email of [freshEmail('nobody'), disabled.account.email]) {
      const res = await askLink(server, email);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
    }
    // A known address's mail arrives after the two requests above; none came before it.
    const known = await createUser(server, { email: freshEmail('known') });
    await mailedLink(known);
    expect(sink.messages.length).toBe(before + 1);
    expect((await server.request('POST', '/api/accounts/delete-recover', { json: { email: 'not an address' } })).status).toBe(400);
  });

  it('mails one address three links an hour, then answers the same and mails nothing', async () => {
    const user = await createUser(server, { email: freshEmail('flood') });
    for (let i = 0; i < 4; i++) expect((await askLink(server, user.account.email)).status).toBe(200);
    for (let i = 0; i < 3; i++) await sink.waitFor(user.account.email);
    // A later request's mail arrives after the fourth one would have.
    const control = await createUser(server, { email: freshEmail('control') });
    await mailedLink(control);
    expect(sink.messages.filter((m) => m.to.includes(user.account.email)).length).toBe(3);
  });

  it('voids the link when the security stamp changes', async () => {
    const user = await createUser(server, { email: freshEmail('stamp') });
    const link = await mailedLink(user);
    const stamp = await server.request('POST', '/api/accounts/security-stamp', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(stamp.status).toBe(200);
    expect((await confirm(link.userId, link.token)).body.validationErrors).toEqual({ token: ['Invalid token.'] });
    expect(await exists(user.userId)).toBe(true);
  });

  it('refuses in the deleting transaction when the stamp changed after the link was checked', async () => {
    const user = await createUser(server, { email: freshEmail('race') });
    const { db } = server.database;
    const checked = await db.selectFrom('users').selectAll().where('id', '=', user.userId).executeTakeFirstOrThrow();
    // "Log out of all sessions" commits between the link's check and the deletion.
    const stamp = await server.request('POST', '/api/accounts/security-stamp', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(stamp.status).toBe(200);
    const deps = { db, clock, isSoleOwner, pushes: recordingPushes(), files: localFileStore(server.filesDir), audit: createAuditLog({ clock }) };
    const by = { client: null, actingUserId: user.userId };
    const refusal = () => BadRequest.field('token', 'Invalid token.');
    await expect(removeAccount(deps, checked, by, { securityStamp: checked.security_stamp, refusal })).rejects.toBeInstanceOf(BadRequest);
    expect(await exists(user.userId)).toBe(true);
    const current = await db.selectFrom('users').select('security_stamp').where('id', '=', user.userId).executeTakeFirstOrThrow();
    await removeAccount(deps, checked, by, { securityStamp: current.security_stamp, refusal });
    expect(await exists(user.userId)).toBe(false);
  });

  it('refuses the sole owner of an organization, keeping the account', async () => {
    const owner = await createUser(server, { email: freshEmail('owner') });
    const orgId = await seedOrganization(server);
    await seedMembership(server, { organizationId: orgId, userId: owner.userId, type: OrganizationUserType.Owner });
    const link = await mailedLink(owner);
    const res = await confirm(link.userId, link.token);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(SOLE_OWNER);
    expect(await exists(owner.userId)).toBe(true);
  });

  // Last in the file: it moves the server's clock past the link's hour.
  it('refuses a link older than an hour', async () => {
    const user = await createUser(server, { email: freshEmail('late') });
    const link = await mailedLink(user);
    clock.advance(61 * 60_000);
    expect((await confirm(link.userId, link.token)).status).toBe(400);
    expect(await exists(user.userId)).toBe(true);
  });
});

describe('without SMTP', () => {
  it('logs the deletion mail with its link for the operator, and nothing for an unknown address', async () => {
    const plain = await startTestServer({ env: { PUBLIC_URL } });
    try {
      const user = await createUser(plain, { email: freshEmail('nosmtp') });
      expect((await askLink(plain, freshEmail('unknown'))).status).toBe(200);
      expect(plain.logs.text()).not.toContain('verify-recover-delete');
      expect((await askLink(plain, user.account.email)).status).toBe(200);
      // The mail goes out after the answer.
      const line = await vi.waitFor(() => {
        const found = plain.logs.lines.find((l) => l.includes('SMTP_HOST is not set'));
        if (!found) throw new Error('no mail logged yet');
        return found;
      });
      expect(line).toContain(`${PUBLIC_URL}/#/verify-recover-delete?userId=${user.userId}&token=`);
    } finally {
      await plain.close();
    }
  });
});

describe('with a mail server that never answers', () => {
  it('answers a known address at once and logs the failed delivery', async () => {
    const sockets = new Set<Socket>();
    const stalled = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const port = (stalled.address() as { port: number }).port;
    const slow = await startTestServer({ env: { PUBLIC_URL, SMTP_HOST: '127.0.0.1', SMTP_PORT: String(port), SMTP_SECURE: 'false', SMTP_FROM: 'Strongroom <no-reply@strongroom.test>' } });
    try {
      const user = await createUser(slow, { email: freshEmail('stalled') });
      const started = Date.now();
      expect((await askLink(slow, user.account.email)).status).toBe(200);
      // Waiting for the greeting would take the mailer's 30-second timeout.
      expect(Date.now() - started).toBeLessThan(5_000);
      await vi.waitFor(() => expect(sockets.size).toBe(1));
      for (const socket of sockets) socket.destroy();
      await vi.waitFor(() => expect(slow.logs.text()).toContain('account deletion mail failed'), { timeout: 5_000 });
    } finally {
      await slow.close();
      await new Promise((resolve) => stalled.close(resolve));
    }
  });
});
