/**
 * Organizations made with `strongroom orgs` are real organizations to the official `bw`: on a
 * self-hosted server over HTTPS, the command signs a license and founds one as its owner; `bw`
 * decrypts its collection's name and stores an item in it with the organization key the command
 * made. A member invited, accepting with the command and confirmed by it, sees that item in their
 * own `bw`: the organization key the command wrapped to their public key opens it. One server and
 * one CLI for the file; the steps build on each other in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { runOrgs } from '../support/sm-cli.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';

const SLOW = 300_000;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

let tls: TestTls;
let sink: SmtpSink;
let server: TestServer;
let bw: BwCli;
let owner: LoggedInUser;
let member: LoggedInUser;
let orgId: string;
let collectionId: string;

/** Runs `strongroom orgs …` in this process against the HTTPS server, the password on standard input. */
const orgs = (argv: string[], password: string) => runOrgs(server, argv, `${password}\n`, { caFile: tls.caPath });

beforeAll(async () => {
  tls = await createTestTls();
  sink = await startSmtpSink();
  server = await startTestServer({ tls, env: sink.env });
  owner = await seedAccount(server, { email: 'cli-org-owner@example.com', derivation: 'real' });
  member = await seedAccount(server, { email: 'cli-org-member@example.com', derivation: 'real' });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, SLOW);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
  await sink?.close();
});

describe('official bw client: organizations made by strongroom orgs', () => {
  it('sees the organization and its collection, and stores an item in it', async () => {
    const created = await orgs(['create', '--email', owner.account.email, '--name', 'CLI Founded', '--collection', 'Deploy keys', '--json'], owner.account.password);
    expect(created.code, created.stderr).toBe(0);
    const printed = JSON.parse(created.stdout) as { id: string; collection: { id: string } };
    orgId = printed.id;
    collectionId = printed.collection.id;

    const login = await bw.login(owner.account.email, owner.account.password);
    expect(login.code, login.stderr).toBe(0);
    const organizations = await bw.json<{ id: string; name: string; status: number; type: number }[]>(['list', 'organizations']);
    expect(organizations.map((o) => [o.id, o.name, o.status, o.type])).toEqual([[orgId, 'CLI Founded', 2, 0]]);
    // bw decrypts the name with the organization key it unwrapped with the owner's private key.
    const collections = await bw.json<{ id: string; name: string }[]>(['list', 'org-collections', '--organizationid', orgId]);
    expect(collections.map((c) => [c.id, c.name])).toEqual([[collectionId, 'Deploy keys']]);

    const item = await bw.json<{ id: string; organizationId: string }>([
      'create',
      'item',
      encode({ type: 1, name: 'Deploy login', organizationId: orgId, collectionIds: [collectionId], login: { username: 'deploy', password: 'hunter2', uris: [] }, fields: [], reprompt: 0, favorite: false }),
      '--organizationid',
      orgId,
    ]);
    expect(item.organizationId).toBe(orgId);
    await bw.logout();
  }, SLOW);

  it('lets an invited, accepted and confirmed member read the shared item', async () => {
    const invited = await orgs(['invite', '--email', owner.account.email, '--org', 'CLI Founded', '--member', member.account.email, '--collection', 'Deploy keys'], owner.account.password);
    expect(invited.code, invited.stderr).toBe(0);
    const link = /\S*#\/accept-organization\?\S+/.exec((await sink.waitFor(member.account.email)).text)?.[0] ?? '';
    const accepted = await orgs(['accept', '--email', member.account.email, link], member.account.password);
    expect(accepted.code, accepted.stderr).toBe(0);

    const confirmed = await orgs(['confirm', '--email', owner.account.email, '--org', orgId, '--member', member.account.email], owner.account.password);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toBe(`Confirmed ${member.account.email} in "CLI Founded": they now see its items they have access to.\n`);

    const login = await bw.login(member.account.email, member.account.password);
    expect(login.code, login.stderr).toBe(0);
    const organizations = await bw.json<{ id: string; name: string; status: number; type: number }[]>(['list', 'organizations']);
    expect(organizations.map((o) => [o.id, o.name, o.status, o.type])).toEqual([[orgId, 'CLI Founded', 2, 2]]);
    const items = await bw.json<{ name: string; login?: { password?: string } }[]>(['list', 'items', '--organizationid', orgId]);
    expect(items.map((i) => [i.name, i.login?.password])).toEqual([['Deploy login', 'hunter2']]);
  }, SLOW);
});
