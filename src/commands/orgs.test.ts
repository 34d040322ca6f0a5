import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, type LoggedInUser } from '../../test/support/accounts.js';
import { seedPolicy } from '../../test/support/members.js';
import { runOrgs } from '../../test/support/sm-cli.js';
import { startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';
import { totpCode } from '../features/two-factor/totp.js';
import { decryptBytes, decryptString, publicKeyOf, rsaUnwrap } from './client/crypto.js';
import { openUserSession } from './client/session.js';
import { runOrgsCommand } from './orgs.js';
import { TextCapture as Capture } from '../../test/support/capture.js';
import { enableAuthenticator } from '../../test/support/two-factor.js';

/**
 * `strongroom orgs` against running servers, self-hosted and cloud, without the official client:
 * what the command writes is opened again with the owner's keys; bad input, refusals and a
 * server that is down end with the documented exit codes and one line saying why.
 */
let sink: SmtpSink;
let selfHosted: TestServer;
let cloud: TestServer;
let owner: LoggedInUser;
let cloudOwner: LoggedInUser;
let member: LoggedInUser;

/** Bitwarden's PolicyType.ResetPassword (account recovery). */
const RESET_PASSWORD_POLICY = 8;

const orgs = (server: TestServer, argv: string[], password: string | null = owner.account.password) => runOrgs(server, argv, password === null ? '' : `${password}\n`);

beforeAll(async () => {
  sink = await startSmtpSink();
  selfHosted = await startTestServer({ env: sink.env });
  cloud = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
  owner = await seedAccount(selfHosted, { email: 'orgs-owner@example.com', derivation: 'real' });
  member = await seedAccount(selfHosted, { email: 'orgs-member@example.com', derivation: 'real' });
  cloudOwner = await seedAccount(cloud, { email: 'orgs-owner@example.com', derivation: 'real' });
}, 120_000);

afterAll(async () => {
  await selfHosted?.close();
  await cloud?.close();
  await sink?.close();
});

/** The invitation link the server mailed to that address. */
async function mailedLink(email: string): Promise<string> {
  const mail = await sink.waitFor(email);
  const link = /\S*#\/accept-organization\?\S+/.exec(mail.text)?.[0];
  if (!link) throw new Error(`no invitation link in the mail:\n${mail.text}`);
  return link;
}

/** What the owner's own keys open of the organization: its key, its key pair and its collections' names. */
async function openedByOwner(server: TestServer, orgId: string) {
  const session = await openUserSession({ serverUrl: server.baseUrl, email: owner.account.email, password: owner.account.password });
  try {
    const orgKey = await session.organizationKey(orgId);
    const keys = await session.request<{ publicKey: string; privateKey: string }>('GET', `/api/organizations/${orgId}/keys`);
    const collections = await session.request<{ data: { id: string; name: string }[] }>('GET', `/api/organizations/${orgId}/collections`);
    return {
      keyPairMatches: publicKeyOf(decryptBytes(keys.privateKey, orgKey)) === keys.publicKey,
      collections: collections.data.map((c) => ({ id: c.id, name: decryptString(c.name, orgKey) })),
    };
  } finally {
    session.close();
  }
}

describe('strongroom orgs create', { timeout: 60_000 }, () => {
  it('signs a license and founds a self-hosted organization with its keys and first collection', async () => {
    const result = await orgs(selfHosted, ['create', '--email', owner.account.email, '--name', 'Acme Ops', '--collection', 'Servers', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { id: string; name: string; planType: number; collection: { id: string; name: string } };
    expect(printed).toMatchObject({ name: 'Acme Ops', planType: 0, owner: owner.account.email, collection: { name: 'Servers' } });

    const row = await selfHosted.database.db.selectFrom('organizations').select(['name', 'self_host', 'license_key', 'billing_email']).where('id', '=', printed.id).executeTakeFirstOrThrow();
    expect({ ...row, self_host: Boolean(row.self_host) }).toMatchObject({ name: 'Acme Ops', self_host: true, billing_email: owner.account.email });
    expect(row.license_key).toBeTruthy();
    expect(await openedByOwner(selfHosted, printed.id)).toEqual({ keyPairMatches: true, collections: [{ id: printed.collection.id, name: 'Servers' }] });
  });

  it('uploads a license file made elsewhere, taking its name from it', async () => {
    const { runLicenseCommand } = await import('./license.js');
    const dir = await mkdtemp(join(tmpdir(), 'orgs-license-'));
    const file = join(dir, 'license.json');
    await writeFile(file, await runLicenseCommand(['issue', '--name', 'Licensed Org', '--plan', 'EnterpriseAnnually', '--expires', '30d'], { db: selfHosted.database.db, clock: selfHosted.clock }));
    const result = await orgs(selfHosted, ['create', '--email', owner.account.email, '--license', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Created the organization "Licensed Org" \(([0-9a-f-]{36})\), owned by orgs-owner@example.com, with the collection "Default collection" \([0-9a-f-]{36}\)\.\n$/);
    const id = /\(([0-9a-f-]{36})\)/.exec(result.stdout)?.[1] ?? '';
    const row = await selfHosted.database.db.selectFrom('organizations').select(['plan_type']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.plan_type).toBe(20);
  });

  it('founds a Free organization on a cloud deployment', async () => {
    const result = await orgs(cloud, ['create', '--email', cloudOwner.account.email, '--name', 'Cloud Team', '--billing-email', 'billing@example.com', '--json'], cloudOwner.account.password);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { id: string };
    const row = await cloud.database.db.selectFrom('organizations').select(['plan_type', 'billing_email', 'self_host']).where('id', '=', printed.id).executeTakeFirstOrThrow();
    expect({ ...row, self_host: Boolean(row.self_host) }).toEqual({ plan_type: 0, billing_email: 'billing@example.com', self_host: false });
    expect(await openedByOwner(cloud, printed.id)).toMatchObject({ keyPairMatches: true, collections: [{ name: 'Default collection' }] });
  });

  it('refuses bad input before asking for the password, exit code 2', async () => {
    const notJson = join(await mkdtemp(join(tmpdir(), 'orgs-license-')), 'license.txt');
    await writeFile(notJson, 'not a license');
    const cases: [string[], RegExp][] = [
      [['create', '--email', owner.account.email, '--license', notJson], /^--license: \S+license\.txt is not a license file \(not JSON\); make one with "strongroom license issue"\.\n$/],
      [['craete', '--email', owner.account.email], /^Unknown orgs command "craete"\. Did you mean "create"\? See "strongroom orgs --help"\.\n$/],
      [['--email', owner.account.email], /^Missing subcommand: create, list, invite, confirm, accept, member\. See "strongroom orgs --help"\.\n$/],
      [['list', '--email', owner.account.email, '--bogus'], /^Unknown option "--bogus"\. See "strongroom orgs --help"\.\n$/],
      [['member', '--email', owner.account.email, '--org', 'Acme Ops', '--member', member.account.email, '--secrets-manager', 'maybe'], /^--secrets-manager: expected on or off, got "maybe"\.\n$/],
      [['member', '--email', owner.account.email, '--org', 'Acme Ops', '--member', member.account.email], /^--secrets-manager on\|off is required\./],
      [['create', '--name', 'No Owner'], /^--email is required\./],
      [['create', '--email', 'not-an-email', '--name', 'X'], /^--email: "not-an-email" is not an email address\./],
      [['create', '--email', owner.account.email], /^--name is required\./],
      [['create', '--email', owner.account.email, '--name', 'X', '--plan', 'Platinum'], /^--plan: unknown plan "Platinum"\./],
      [['create', '--email', owner.account.email, '--license', '/nonexistent/license.json'], /^--license: cannot read \/nonexistent\/license\.json/],
      [['create', '--email', owner.account.email, '--name', 'X', '--password', 'secret'], /^The password is not accepted on the command line/],
      [['invite', '--email', owner.account.email, '--org', 'Acme Ops', '--member', member.account.email, '--type', 'boss'], /^--type: expected user, admin, manager or owner, got "boss"\./],
      [['frobnicate'], /^Unknown orgs command "frobnicate"\./],
    ];
    for (const [argv, message] of cases) {
      const result = await orgs(selfHosted, argv, null);
      expect([argv, result.code]).toEqual([argv, 2]);
      expect(result.stderr).toMatch(message);
    }
  });

  it("refuses a wrong password with the server's message, exit code 1", async () => {
    const result = await orgs(selfHosted, ['create', '--email', owner.account.email, '--name', 'Never'], 'not the master password');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('The login was refused: Username or password is incorrect. Try again.\n');
    expect(await selfHosted.database.db.selectFrom('organizations').select('id').where('name', '=', 'Never').execute()).toEqual([]);
  });

  it('says it cannot reach a server that is not running, exit code 3', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const result = await orgs(selfHosted, ['list', '--email', owner.account.email, '--server', `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}: `));
  });

  it('asks whether an http:// server that hangs up is on https://, exit code 3', async () => {
    // A TLS server closes a plain-HTTP request's connection without an answer, as this one does.
    const hangUp = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
    const port = (hangUp.address() as { port: number }).port;
    try {
      const result = await orgs(selfHosted, ['list', '--email', owner.account.email, '--server', `http://127.0.0.1:${port}`]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}: .+; is the server on https://127\\.0\\.0\\.1:${port}\\?\\n$`));
    } finally {
      await new Promise((resolve) => hangUp.close(resolve));
    }
  });

  it('says a --ca file without a certificate holds none, exit code 2', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'orgs-ca-')), 'ca.pem');
    await writeFile(file, 'no certificate here\n');
    const result = await orgs(selfHosted, ['list', '--email', owner.account.email, '--ca', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`--ca: ${file} holds no PEM certificate.\n`);
  });
});

describe('strongroom orgs list, invite and confirm', { timeout: 60_000 }, () => {
  it('lists the organizations of the account', async () => {
    const result = await orgs(selfHosted, ['list', '--email', owner.account.email, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const listed = JSON.parse(result.stdout) as { name: string; role: string; status: string }[];
    expect(listed.map((o) => [o.name, o.role, o.status]).sort()).toEqual([
      ['Acme Ops', 'owner', 'confirmed'],
      ['Licensed Org', 'owner', 'confirmed'],
    ]);
  });

  it('invites a member to a collection named by its decrypted name, and refuses to confirm before they accept', async () => {
    const invited = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', 'Acme Ops', '--member', member.account.email, '--type', 'admin', '--collection', 'Servers', '--json']);
    expect(invited.code, invited.stderr).toBe(0);
    const printed = JSON.parse(invited.stdout) as { organizationId: string; memberId: string; status: string; collections: { name: string }[] };
    expect(printed).toMatchObject({ email: member.account.email, type: 'admin', status: 'invited', collections: [{ name: 'Servers' }] });
    const row = await selfHosted.database.db.selectFrom('organization_users').select(['type', 'status', 'email']).where('id', '=', printed.memberId).executeTakeFirstOrThrow();
    expect(row).toEqual({ type: 1, status: 0, email: member.account.email });

    const early = await orgs(selfHosted, ['confirm', '--email', owner.account.email, '--org', printed.organizationId, '--member', member.account.email]);
    expect(early.code).toBe(1);
    expect(early.stderr).toBe(`${member.account.email} is invited, not accepted: a member is confirmed after accepting the invitation.\n`);
  });

  it('refuses an unknown organization or collection, exit code 1', async () => {
    const unknownOrg = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', 'Nobody Inc', '--member', 'x@example.com']);
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toBe('orgs-owner@example.com is in no organization named "Nobody Inc".\n');
    const unknownCollection = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', 'Acme Ops', '--member', 'x@example.com', '--collection', 'Nope']);
    expect(unknownCollection.code).toBe(1);
    expect(unknownCollection.stderr).toBe('The organization has no collection "Nope".\n');
  });

  it('does not find an organization the account is only invited to, exit code 1', async () => {
    const outsider = await orgs(selfHosted, ['invite', '--email', member.account.email, '--org', 'Acme Ops', '--member', 'x@example.com'], member.account.password);
    expect(outsider.code).toBe(1);
    expect(outsider.stderr).toBe('orgs-member@example.com is in no organization named "Acme Ops".\n');
  });

  it("answers the server's refusal with its message, exit code 1", async () => {
    // The Free plan has two seats: the owner's and the member's.
    const again = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', 'Acme Ops', '--member', 'third@example.com']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('You have reached the maximum number of users (2) for this organization.\n');
  });

  it('accepts the mailed link as the invited member, who sees the organization once confirmed', async () => {
    const link = await mailedLink(member.account.email);
    const refusals: [string[], string | RegExp][] = [
      [['accept', '--email', owner.account.email, link], `The invitation is for ${member.account.email}, not ${owner.account.email}: log in as the invited account.\n`],
      [['accept', '--email', member.account.email], /^The invitation link \(or its token\) is required\./],
      [['accept', '--email', member.account.email, link.split('&')[0] ?? ''], /^The invitation link has no token: pass the whole link from the mail, in single quotes/],
      [['accept', '--email', member.account.email, 'not-a-token'], /^A bare invitation token needs --org <organization id>/],
      [['accept', '--email', member.account.email, '--org', randomUUID(), 'not-a-token'], 'That is neither an invitation link nor an invitation token.\n'],
      [['accept', '--email', member.account.email, link.replace(/organizationUserId=[^&]+/, 'organizationUserId=42')], 'The invitation link has no valid organizationUserId: copy the whole link from the mail.\n'],
    ];
    for (const [argv, message] of refusals) {
      const result = await orgs(selfHosted, argv, null);
      expect([argv, result.code]).toEqual([argv, 2]);
      expect(result.stderr).toMatch(message);
    }

    const accepted = await orgs(selfHosted, ['accept', '--email', member.account.email, link, '--json'], member.account.password);
    expect(accepted.code, accepted.stderr).toBe(0);
    const printed = JSON.parse(accepted.stdout) as { organizationId: string; memberId: string };
    expect(printed).toMatchObject({ email: member.account.email, status: 'accepted', accountRecovery: false });
    const row = await selfHosted.database.db.selectFrom('organization_users').select(['status', 'user_id', 'reset_password_key']).where('id', '=', printed.memberId).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 1, user_id: member.userId, reset_password_key: null });

    const again = await orgs(selfHosted, ['accept', '--email', member.account.email, link], member.account.password);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('Invitation already accepted. You will receive an email when your organization membership is confirmed.\n');

    const confirmed = await orgs(selfHosted, ['confirm', '--email', owner.account.email, '--org', printed.organizationId, '--member', member.account.email]);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    // The member's own keys open the organization key the owner handed over: the same key.
    const opened = await openUserSession({ serverUrl: selfHosted.baseUrl, email: member.account.email, password: member.account.password });
    const ownerSession = await openUserSession({ serverUrl: selfHosted.baseUrl, email: owner.account.email, password: owner.account.password });
    try {
      expect(await opened.organizationKey(printed.organizationId)).toEqual(await ownerSession.organizationKey(printed.organizationId));
    } finally {
      opened.close();
      ownerSession.close();
    }
  });
});

describe('strongroom orgs accept with account recovery', { timeout: 120_000 }, () => {
  it("enrols the member where the organization's policy says so: the organization's private key opens their user key", async () => {
    const created = await orgs(selfHosted, ['create', '--email', owner.account.email, '--name', 'Recovery Org', '--plan', 'EnterpriseAnnually', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const orgId = (JSON.parse(created.stdout) as { id: string }).id;
    await seedPolicy(selfHosted, orgId, RESET_PASSWORD_POLICY);
    await selfHosted.database.db.updateTable('policies').set({ data: JSON.stringify({ autoEnrollEnabled: true }) }).where('organization_id', '=', orgId).execute();
    const recovered = await seedAccount(selfHosted, { email: 'orgs-recovered@example.com', derivation: 'real' });
    const invited = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', orgId, '--member', recovered.account.email]);
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.stdout).toContain('They join with the link mailed to them; then confirm them');
    const token = new URLSearchParams((await mailedLink(recovered.account.email)).split('?')[1]).get('token') ?? '';

    const accepted = await orgs(selfHosted, ['accept', '--email', recovered.account.email, '--org', orgId, token], recovered.account.password);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toBe(`Accepted the invitation to ${orgId}. As the organization requires, its admins can now recover your account (account recovery). An admin now confirms you ("strongroom orgs confirm"); until then you do not see its items.\n`);
    const row = await selfHosted.database.db.selectFrom('organization_users').select(['status', 'reset_password_key']).where('organization_id', '=', orgId).where('user_id', '=', recovered.userId).executeTakeFirstOrThrow();
    expect(row.status).toBe(1);

    const ownerSession = await openUserSession({ serverUrl: selfHosted.baseUrl, email: owner.account.email, password: owner.account.password });
    const memberSession = await openUserSession({ serverUrl: selfHosted.baseUrl, email: recovered.account.email, password: recovered.account.password });
    try {
      const keys = await ownerSession.request<{ privateKey: string }>('GET', `/api/organizations/${orgId}/keys`);
      const orgPrivateKey = decryptBytes(keys.privateKey, await ownerSession.organizationKey(orgId));
      expect(rsaUnwrap(row.reset_password_key ?? '', orgPrivateKey)).toEqual(memberSession.userKey);
    } finally {
      ownerSession.close();
      memberSession.close();
    }
  });
});

describe('strongroom orgs with two-step login', { timeout: 60_000 }, () => {
  it('asks for --code, then logs in with the authenticator code', async () => {
    const user = await seedAccount(selfHosted, { email: 'orgs-2fa@example.com', derivation: 'real' });
    const key = await enableAuthenticator(selfHosted, user);

    const asked = await orgs(selfHosted, ['list', '--email', user.account.email], user.account.password);
    expect(asked.code).toBe(1);
    expect(asked.stderr).toBe('Two-step login is on for this account: run the command again with --code <code from your authenticator app>.\n');
    // The next time step's code: the one just used to turn the authenticator on is spent.
    const code = await totpCode(key, new Date(Date.now() + 30_000));
    const listed = await orgs(selfHosted, ['list', '--email', user.account.email, '--code', code], user.account.password);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe('orgs-2fa@example.com is in no organization.\n');
  });
});

describe('strongroom orgs and Secrets Manager access', { timeout: 120_000 }, () => {
  const memberRow = async (memberId: string) => {
    const row = await selfHosted.database.db.selectFrom('organization_users').select(['type', 'access_secrets_manager']).where('id', '=', memberId).executeTakeFirstOrThrow();
    return { type: row.type, accessSecretsManager: Boolean(row.access_secrets_manager) };
  };
  const collectionAccess = (memberId: string) =>
    selfHosted.database.db.selectFrom('collection_users').select(['collection_id', 'read_only', 'hide_passwords', 'manage']).where('organization_user_id', '=', memberId).execute();

  it('invites with --secrets-manager, and turns the access on and off with orgs member, keeping role and collections', async () => {
    const created = await orgs(selfHosted, ['create', '--email', owner.account.email, '--name', 'SM Org', '--plan', 'EnterpriseAnnually', '--collection', 'Vaults', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const orgId = (JSON.parse(created.stdout) as { id: string }).id;

    const withAccess = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', orgId, '--member', 'sm-one@example.com', '--secrets-manager', '--json']);
    expect(withAccess.code, withAccess.stderr).toBe(0);
    const first = JSON.parse(withAccess.stdout) as { memberId: string; accessSecretsManager: boolean };
    expect(first.accessSecretsManager).toBe(true);
    expect((await memberRow(first.memberId)).accessSecretsManager).toBe(true);

    const without = await orgs(selfHosted, ['invite', '--email', owner.account.email, '--org', orgId, '--member', 'sm-two@example.com', '--type', 'manager', '--collection', 'Vaults', '--json']);
    expect(without.code, without.stderr).toBe(0);
    const second = (JSON.parse(without.stdout) as { memberId: string }).memberId;
    const before = { row: await memberRow(second), collections: await collectionAccess(second) };
    expect(before.row).toEqual({ type: 3, accessSecretsManager: false });
    expect(before.collections).toHaveLength(1);

    const member = (state: string) => orgs(selfHosted, ['member', '--email', owner.account.email, '--org', 'SM Org', '--member', 'sm-two@example.com', '--secrets-manager', state]);
    const on = await member('on');
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toBe('sm-two@example.com now has Secrets Manager access in "SM Org".\n');
    expect(await memberRow(second)).toEqual({ type: 3, accessSecretsManager: true });
    expect(await collectionAccess(second)).toEqual(before.collections);

    const off = await member('off');
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toBe('sm-two@example.com now does not have Secrets Manager access in "SM Org".\n');
    expect(await memberRow(second)).toEqual(before.row);
    expect(await collectionAccess(second)).toEqual(before.collections);

    const again = await member('off');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('sm-two@example.com already does not have Secrets Manager access in "SM Org".\n');
  });
});

describe('strongroom orgs invite without a mail server', { timeout: 60_000 }, () => {
  it("says no mail was sent and where the link is when this server's settings have no SMTP_HOST", async () => {
    // The cloud server of these tests has no SMTP_HOST; its owner founded "Cloud Team" above.
    const stdin = new PassThrough();
    stdin.end(`${cloudOwner.account.password}\n`);
    const stdout = new Capture();
    const stderr = new Capture();
    // No --server: the command reaches this machine's server, PUBLIC_URL, with its settings.
    const config = { ...cloud.config, publicUrl: cloud.baseUrl };
    expect(config.smtpHost).toBeUndefined();
    const code = await runOrgsCommand(['invite', '--email', cloudOwner.account.email, '--org', 'Cloud Team', '--member', 'unmailed@example.com'], { config, io: { stdin, stdout, stderr } });
    expect(code, stderr.text).toBe(0);
    expect(stdout.text).toBe(
      'Invited unmailed@example.com to "Cloud Team" as user. SMTP is not configured (SMTP_HOST), so no mail was sent: the invitation link is in the server\'s log, on the line "SMTP_HOST is not set; mail not sent". They accept it with "strongroom orgs accept"; then confirm them with "strongroom orgs confirm".\n',
    );
  });
});
