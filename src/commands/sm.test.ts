import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptText, encryptText, generateSymmetricKey, rsaEncryptToEncString, type SymmetricKey } from '../../test/support/bw-crypto.js';
import { runSm, smOwnerOrg } from '../../test/support/sm-cli.js';
import { seedGroup, seedUser } from '../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../test/support/orgs.js';
import { OrganizationUserStatusType } from '../platform/access/roles.js';
import { allowSecretsManager, seedMachineAccount, seedPolicy, seedProject, READ } from '../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';

/**
 * `strongroom sm …` in process against a running server (plain HTTP: the e2e file covers HTTPS
 * and the SDK), for what it refuses and what it leaves alone. One server and one owner for the
 * file; each test makes its own projects and machine accounts.
 */
const EMAIL = 'sm-command-owner@example.com';
let server: TestServer;
let org: string;
let orgKey: SymmetricKey;
let password: string;
let publicKey: string;

beforeAll(async () => {
  server = await startTestServer();
  const made = await smOwnerOrg(server, EMAIL);
  org = made.orgId;
  orgKey = made.orgKey;
  password = made.owner.account.password;
  publicKey = made.owner.account.publicKeyB64;
}, 60_000);

afterAll(async () => server?.close());

const sm = (argv: string[], input = `${password}\n`) => runSm(server, argv, input);
const asOwner = (...argv: string[]) => sm([...argv, '--email', EMAIL]);

const named = (name: string) => ({ name: encryptText(name, orgKey) });

describe('strongroom sm refuses', () => {
  it('an unknown machine account, naming it (exit 1)', async () => {
    const missing = randomUUID();
    const run = await asOwner('tokens', 'create', '--machine-account', missing);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^There is no machine account ${missing} that ${EMAIL} can reach`));
    expect(run.stdout).toBe('');
  });

  it('a bad --expires before the password is asked (exit 2)', async () => {
    const account = await seedMachineAccount(server, org, named('expiring'));
    for (const expires of ['tomorrow', '0', '2001-01-01']) {
      const run = await sm(['tokens', 'create', '--email', EMAIL, '--machine-account', account, '--expires', expires], '');
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^--expires: /);
    }
    expect(await server.database.db.selectFrom('access_tokens').select('id').where('service_account_id', '=', account).execute()).toEqual([]);
  });

  it('a wrong password with the server’s answer (exit 1), making nothing', async () => {
    const run = await sm(['projects', 'create', '--email', EMAIL, '--org', org, '--name', 'never made'], 'not the password at all\n');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^The login was refused: /);
    const names = (await server.database.db.selectFrom('projects').select('name').where('organization_id', '=', org).execute()).map((r) => decryptText(r.name, orgKey));
    expect(names).not.toContain('never made');
  });

  it('an organization the user is not in (exit 1)', async () => {
    const run = await asOwner('projects', 'create', '--org', randomUUID(), '--name', 'elsewhere');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/is in no organization with id/);
  });

  it('bad command lines (exit 2)', async () => {
    expect((await sm(['projects', 'create', '--org', org, '--name', 'x'])).stderr).toMatch(/^--email is required/);
    expect((await asOwner('projects', 'rename', '--org', org)).stderr).toMatch(/^"sm projects" takes create, list, not "rename"/);
    expect((await asOwner('vaults', 'list')).stderr).toMatch(/^Unknown sm command "vaults": it takes projects, machine-accounts, tokens, access, secrets\./);
    expect((await asOwner('projects', 'list', '--org', org, '--bogus')).stderr).toBe('Unknown option "--bogus". See "strongroom sm --help".\n');
    const project = await asOwner('access', '--machine-account', randomUUID(), '--project', 'production');
    expect(project).toMatchObject({ code: 2, stderr: '--project: expected an id (a GUID), got "production".\n' });
    expect((await sm([])).code).toBe(2);
    const help = await sm(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/strongroom sm tokens create/);
  });

  it('a project of another organization than the machine account (exit 1)', async () => {
    const other = await smOwnerOrg(server, 'sm-command-other@example.com');
    const foreign = await seedProject(server, other.orgId);
    const account = await seedMachineAccount(server, org, named('crossing'));
    // The owner of both organizations sees both, so only the command's own check stands between.
    await server.database.db
      .updateTable('organization_users')
      .set({ user_id: (await server.database.db.selectFrom('users').select('id').where('email', '=', EMAIL).executeTakeFirstOrThrow()).id })
      .where('organization_id', '=', other.orgId)
      .execute();
    const run = await asOwner('access', '--machine-account', account, '--project', foreign);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`Project ${foreign} belongs to another organization than machine account ${account}.\n`);
    expect(await server.database.db.selectFrom('access_policies').select('id').where('service_account_id', '=', account).execute()).toEqual([]);
  });
});

describe('strongroom sm access and tokens', () => {
  it('changes one grant and leaves the machine account’s others as they were', async () => {
    const account = await seedMachineAccount(server, org, named('builder'));
    const kept = await seedProject(server, org, named('kept'));
    const changed = await seedProject(server, org, named('changed'));
    await seedPolicy(server, { machineAccount: account }, { project: kept }, READ);
    const grants = async (): Promise<Record<string, string>> => {
      const rows = await server.database.db.selectFrom('access_policies').select(['granted_project_id', 'read', 'write']).where('service_account_id', '=', account).execute();
      return Object.fromEntries(rows.map((p) => [String(p.granted_project_id), `${Boolean(p.read)}/${Boolean(p.write)}`]));
    };

    expect((await asOwner('access', '--machine-account', account, '--project', changed)).stdout).toBe(`Machine account builder (${account}) can read project changed (${changed}).\n`);
    expect(await grants()).toEqual({ [kept]: 'true/false', [changed]: 'true/false' });
    expect((await asOwner('access', '--machine-account', account, '--project', changed, '--write')).code).toBe(0);
    expect(await grants()).toEqual({ [kept]: 'true/false', [changed]: 'true/true' });
    expect((await asOwner('access', '--machine-account', account, '--project', changed, '--revoke')).stdout).toMatch(/no longer has a grant on project changed/);
    expect(await grants()).toEqual({ [kept]: 'true/false' });
  });

  it('grants a member and a group, keeping the project’s other people', async () => {
    const project = await seedProject(server, org, named('shared'));
    const member = await seedMembership(server, { organizationId: org, userId: await seedUser(server, 'sm-command-member@example.com'), email: 'sm-command-member@example.com' });
    await allowSecretsManager(server, [member]);
    const group = await seedGroup(server, org);
    const people = async (): Promise<Record<string, string>> => {
      const rows = await server.database.db.selectFrom('access_policies').select(['organization_user_id', 'group_id', 'read', 'write']).where('granted_project_id', '=', project).execute();
      return Object.fromEntries(rows.map((p) => [String(p.organization_user_id ?? p.group_id), `${Boolean(p.read)}/${Boolean(p.write)}`]));
    };
    const before = await people();

    const granted = await asOwner('access', '--member', 'SM-Command-Member@example.com', '--project', project, '--write');
    expect(granted.stdout).toBe(`Member sm-command-member@example.com can read and write project shared (${project}).\n`);
    expect((await asOwner('access', '--group', group, '--project', project)).code).toBe(0);
    expect(await people()).toEqual({ ...before, [member]: 'true/true', [group]: 'true/false' });
    expect((await asOwner('access', '--member', 'sm-command-member@example.com', '--project', project, '--revoke')).code).toBe(0);
    expect(await people()).toEqual({ ...before, [group]: 'true/false' });

    const stranger = await asOwner('access', '--member', 'nobody@example.com', '--project', project);
    expect(stranger).toMatchObject({ code: 1, stderr: `The organization of project ${project} has no member nobody@example.com.\n` });
    const both = await asOwner('access', '--member', 'nobody@example.com', '--group', group, '--project', project);
    expect(both).toMatchObject({ code: 2, stderr: expect.stringMatching(/^Name who gets the access with one of/) });
  });

  it('lists and revokes tokens, and refuses a token id the machine account does not have', async () => {
    const account = await seedMachineAccount(server, org, named('rotating'));
    const made = await asOwner('tokens', 'create', '--machine-account', account, '--json', '--expires', '2099-01-01');
    expect(made.code).toBe(0);
    const token = JSON.parse(made.stdout) as { id: string; accessToken: string; expireAt: string; name: string };
    expect(token).toMatchObject({ name: 'strongroom command line', expireAt: '2099-01-01T00:00:00.000Z' });
    expect(token.accessToken.startsWith(`0.${token.id}.`)).toBe(true);

    const listed = JSON.parse((await asOwner('tokens', 'list', '--machine-account', account, '--json')).stdout) as { id: string; name: string }[];
    expect(listed.map((t) => [t.id, t.name])).toEqual([[token.id, 'strongroom command line']]);

    const unknown = randomUUID();
    const refused = await asOwner('tokens', 'revoke', '--machine-account', account, '--token', unknown);
    expect(refused).toMatchObject({ code: 1, stderr: `Machine account ${account} has no access token ${unknown}.\n` });
    expect((await asOwner('tokens', 'revoke', '--machine-account', account, '--token', token.id)).code).toBe(0);
    expect((await asOwner('tokens', 'list', '--machine-account', account)).stdout).toBe('No access tokens.\n');
  });
});

describe('strongroom sm secrets create', () => {
  it('takes the value from standard input after the password, never from the command line', async () => {
    const project = await seedProject(server, org, named('app'));
    const refused = await sm(['secrets', 'create', '--email', EMAIL, '--project', project, '--key', 'API_KEY', '--value=hunter2']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^A secret value is not accepted on the command line/);
    const empty = await asOwner('secrets', 'create', '--project', project, '--key', 'API_KEY');
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringMatching(/^No value: /) });

    const made = await sm(['secrets', 'create', '--email', EMAIL, '--project', project, '--key', 'API_KEY', '--note', 'rotated yearly'], `${password}\nhunter2\n`);
    expect(made.code).toBe(0);
    const rows = await server.database.db.selectFrom('secrets').selectAll().where('project_id', '=', project).execute();
    expect(rows.map((r) => [decryptText(r.key, orgKey), decryptText(r.value, orgKey), decryptText(r.note, orgKey)])).toEqual([['API_KEY', 'hunter2', 'rotated yearly']]);
    expect(made.stdout).toBe(`Created secret API_KEY (${rows[0]?.id}) in project ${project}.\n`);
  });

  it('refuses a value too long for the server before sending it (exit 2)', async () => {
    const project = await seedProject(server, org, named('big'));
    const run = await sm(['secrets', 'create', '--email', EMAIL, '--project', project, '--key', 'BIG'], `${password}\n${'x'.repeat(30_000)}\n`);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^The value is too long: encrypted, it would take \d+ of the 35000 characters/);
    expect(await server.database.db.selectFrom('secrets').select('id').where('project_id', '=', project).execute()).toEqual([]);
  });
});

describe('strongroom sm and the organization', () => {
  it('takes --org by name regardless of case, and refuses a name that matches none or several (exit 1)', async () => {
    await server.database.db.updateTable('organizations').set({ name: 'SM Command Org' }).where('id', '=', org).execute();
    const made = await asOwner('projects', 'create', '--org', 'sm command org', '--name', 'found by name', '--json');
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ organizationId: org, name: 'found by name' });
    const listed = await asOwner('projects', 'list', '--org', 'SM COMMAND ORG', '--json');
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((p) => p.name)).toContain('found by name');

    const unknown = await asOwner('projects', 'list', '--org', 'SM Command');
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: `${EMAIL} is in no organization named "SM Command".\n` });

    const userId = (await server.database.db.selectFrom('users').select('id').where('email', '=', EMAIL).executeTakeFirstOrThrow()).id;
    const twins: string[] = [];
    for (let i = 0; i < 2; i++) {
      const twin = await seedOrganization(server, { name: 'Twin', overrides: { use_secrets_manager: true } });
      await seedMembership(server, { organizationId: twin, userId, email: EMAIL, key: rsaEncryptToEncString(generateSymmetricKey().raw, publicKey) });
      twins.push(twin);
    }
    const ambiguous = await asOwner('machine-accounts', 'create', '--org', 'twin', '--name', 'nowhere');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/^2 organizations are named "twin": name one by id \(.+\)\.\n$/);
    for (const twin of twins) expect(ambiguous.stderr).toContain(twin);
    expect(await server.database.db.selectFrom('service_accounts').select('id').where('organization_id', 'in', twins).execute()).toEqual([]);
  });

  it('says a member has no Secrets Manager access, and how it is given, rather than "not found"', async () => {
    const email = 'sm-command-no-access@example.com';
    const other = await smOwnerOrg(server, email);
    await server.database.db.updateTable('organizations').set({ name: 'No Access Org' }).where('id', '=', other.orgId).execute();
    await server.database.db.updateTable('organization_users').set({ access_secrets_manager: false }).where('organization_id', '=', other.orgId).execute();
    const run = (...argv: string[]) => runSm(server, [...argv, '--email', email], `${other.owner.account.password}\n`);
    const refusal = `${email} is a member of organization "No Access Org" (${other.orgId}) but has no Secrets Manager access in it. An owner or admin gives it with: strongroom orgs member --org ${other.orgId} --member ${email} --secrets-manager on.\n`;

    expect(await run('projects', 'list', '--org', other.orgId)).toMatchObject({ code: 1, stdout: '', stderr: refusal });
    expect(await run('projects', 'create', '--org', 'No Access Org', '--name', 'refused')).toMatchObject({ code: 1, stderr: refusal });
    expect(await server.database.db.selectFrom('projects').select('id').where('organization_id', '=', other.orgId).execute()).toEqual([]);

    // With the access but an organization that does not use Secrets Manager, that is what is said.
    await server.database.db.updateTable('organization_users').set({ access_secrets_manager: true }).where('organization_id', '=', other.orgId).execute();
    await server.database.db.updateTable('organizations').set({ use_secrets_manager: false }).where('id', '=', other.orgId).execute();
    expect(await run('machine-accounts', 'list', '--org', other.orgId)).toMatchObject({ code: 1, stderr: `The organization "No Access Org" (${other.orgId}) does not use Secrets Manager.\n` });
  });

  it('tells a member without Secrets Manager access, or not yet confirmed, from no member in sm access', async () => {
    const project = await seedProject(server, org, named('people'));
    const noAccess = 'sm-command-plain-member@example.com';
    await seedMembership(server, { organizationId: org, userId: await seedUser(server, noAccess), email: noAccess });
    const invited = 'sm-command-invited@example.com';
    await seedMembership(server, { organizationId: org, email: invited, status: OrganizationUserStatusType.Invited });

    expect(await asOwner('access', '--member', noAccess, '--project', project)).toMatchObject({
      code: 1,
      stderr: `${noAccess} is a member of the organization of project ${project} but has no Secrets Manager access in it. Give it with: strongroom orgs member --org ${org} --member ${noAccess} --secrets-manager on.\n`,
    });
    const notConfirmed = await asOwner('access', '--member', invited, '--project', project);
    expect(notConfirmed).toMatchObject({ code: 1, stderr: expect.stringMatching(new RegExp(`^${invited} is not yet a confirmed member of the organization of project ${project}: confirm them first`)) });
    expect(await server.database.db.selectFrom('access_policies').select('id').where('granted_project_id', '=', project).execute()).toEqual([]);
  });
});
