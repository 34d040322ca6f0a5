/**
 * `strongroom sm …` end to end over HTTPS: an owner with an organization that has Secrets
 * Manager, and nothing else made for them; the commands alone make a project, a machine
 * account, its grant and an access token, and the official SDK (`@bitwarden/sdk-napi`) then
 * logs in with the printed token and works in the granted project only. One server and one
 * SDK client for the file; the steps build on each other.
 */
import { BitwardenClient, DeviceType } from '@bitwarden/sdk-napi';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decryptText, type SymmetricKey } from '../support/bw-crypto.js';
import { runSm, smOwnerOrg } from '../support/sm-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';

const LOG_WARN = 3;
const EMAIL = 'sm-cli-owner@example.com';
let tls: TestTls;
let server: TestServer;
let org: string;
let orgKey: SymmetricKey;
let password: string;

beforeAll(async () => {
  tls = await createTestTls();
  // The SDK's rustls reads the trusted roots from SSL_CERT_FILE when a client is made.
  vi.stubEnv('SSL_CERT_FILE', tls.caPath);
  server = await startTestServer({ tls });
  const made = await smOwnerOrg(server, EMAIL);
  org = made.orgId;
  orgKey = made.orgKey;
  password = made.owner.account.password;
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await server?.close();
});

/** The command as the owner, who pipes their password; fails the test unless it exits 0. */
async function sm(...argv: string[]) {
  const run = await runSm(server, [...argv, '--email', EMAIL], `${password}\n`, { caFile: tls.caPath });
  if (run.code !== 0) throw new Error(`strongroom sm ${argv.join(' ')} exited with ${run.code}: ${run.stderr}`);
  return run;
}

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

describe('Secrets Manager made from the command line, used by the SDK', () => {
  let granted: string;
  let withheld: string;
  let account: string;
  let accessToken: string;
  let sdk: BitwardenClient;

  it('creates projects and a machine account with names only the organization key opens', async () => {
    granted = String(json((await sm('projects', 'create', '--org', org, '--name', 'production', '--json')).stdout).id);
    withheld = String(json((await sm('projects', 'create', '--org', org, '--name', 'finance', '--json')).stdout).id);
    account = String(json((await sm('machine-accounts', 'create', '--org', org, '--name', 'deployer', '--json')).stdout).id);

    const rows = await server.database.db.selectFrom('projects').select(['id', 'name']).where('organization_id', '=', org).execute();
    expect(Object.fromEntries(rows.map((r) => [r.id, decryptText(r.name, orgKey)]))).toEqual({ [granted]: 'production', [withheld]: 'finance' });
    const listed = (await sm('projects', 'list', '--org', org)).stdout;
    expect(listed).toMatch(new RegExp(`^${granted}\\s+production\\s`, 'm'));
    expect(listed).toMatch(new RegExp(`^${withheld}\\s+finance\\s`, 'm'));
    expect(JSON.parse((await sm('machine-accounts', 'list', '--org', org, '--json')).stdout)).toEqual([expect.objectContaining({ id: account, name: 'deployer' })]);
  });

  it('grants the machine account read and write on one project', async () => {
    const run = await sm('access', '--machine-account', account, '--project', granted, '--write');
    expect(run.stdout).toBe(`Machine account deployer (${account}) can read and write project production (${granted}).\n`);
    const policies = await server.database.db.selectFrom('access_policies').select(['granted_project_id', 'read', 'write']).where('service_account_id', '=', account).execute();
    expect(policies.map((p) => [p.granted_project_id, Boolean(p.read), Boolean(p.write)])).toEqual([[granted, true, true]]);
  });

  it('prints an access token once, alone on standard output, with the warning on standard error', async () => {
    const run = await sm('tokens', 'create', '--machine-account', account, '--name', 'ci', '--expires', '30');
    expect(run.stdout).toMatch(/^0\.[0-9a-f-]{36}\.[^:\s]+:[A-Za-z0-9+/]{22}==\n$/);
    accessToken = run.stdout.trim();
    expect(run.stderr).toMatch(/shown this once/);
    const row = await server.database.db.selectFrom('access_tokens').selectAll().where('service_account_id', '=', account).executeTakeFirstOrThrow();
    expect(accessToken.startsWith(`0.${row.id}.`)).toBe(true);
    // The server keeps neither the client secret nor the key secret.
    expect(JSON.stringify(row)).not.toContain(accessToken.split('.')[2]?.split(':')[0]);
    expect(JSON.stringify(row)).not.toContain(accessToken.split(':')[1]);
    expect(decryptText(row.name, orgKey)).toBe('ci');
    expect(new Date(String(row.expire_at)).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });

  it('lets the SDK log in with the printed token and work in the granted project', async () => {
    sdk = new BitwardenClient({ apiUrl: `${server.baseUrl}/api`, identityUrl: `${server.baseUrl}/identity`, userAgent: 'strongroom-test', deviceType: DeviceType.SDK }, LOG_WARN);
    await sdk.auth().loginAccessToken(accessToken);
    expect((await sdk.projects().list(org)).data.map((p) => [p.id, p.name])).toEqual([[granted, 'production']]);
    const secret = await sdk.secrets().create(org, 'DB_PASSWORD', 'from-the-sdk', '', [granted]);
    expect((await sdk.secrets().get(secret.id)).value).toBe('from-the-sdk');
    const row = await server.database.db.selectFrom('secrets').select('value').where('id', '=', secret.id).executeTakeFirstOrThrow();
    expect(decryptText(row.value, orgKey)).toBe('from-the-sdk');
  });

  it('hands the SDK a secret made from the command line, its value piped after the password', async () => {
    const run = await runSm(server, ['secrets', 'create', '--email', EMAIL, '--project', granted, '--key', 'TLS_KEY', '--json'], `${password}\nline one\nline two\n`, { caFile: tls.caPath });
    expect(run.code).toBe(0);
    const id = String(json(run.stdout).id);
    expect(await sdk.secrets().get(id)).toMatchObject({ key: 'TLS_KEY', value: 'line one\nline two', projectId: granted });
  });

  it('keeps the SDK out of the project it was not granted', async () => {
    await expect(sdk.projects().get(withheld)).rejects.toThrow();
    await expect(sdk.secrets().create(org, 'SNEAKY', 'value', '', [withheld])).rejects.toThrow();
    expect(await server.database.db.selectFrom('secrets').select('id').where('project_id', '=', withheld).execute()).toEqual([]);
  });
});
