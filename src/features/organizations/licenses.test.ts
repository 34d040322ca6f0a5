import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { createOrganization, foundingKeys } from '../../../test/support/org-founding.js';
import { freshDatabaseUrl, startTestServer, TEST_ENGINE, type TestServer } from '../../../test/support/test-server.js';
import { programArgs } from '../../../test/support/program.js';
import { systemClock } from '../../shared/clock.js';
import { ConfigError, loadConfig } from '../../config/config.js';
import { UsageError } from '../../shared/startup-error.js';
import { runLicenseCommand } from '../../commands/license.js';
import { createLicenseIssuer, keyIdOf, licenseTerms, signLicense, type LicenseDocument } from './licenses.js';
import { PlanType } from './plans.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(options);
  servers.push(s);
  return s;
}

const root = new URL('../../../', import.meta.url).pathname;

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [...programArgs(), ...args], { cwd: root, env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env } });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function apply(s: TestServer, token: string, license: string | LicenseDocument, extra: Record<string, unknown> = {}) {
  return s.request('POST', '/api/organizations/license', {
    token,
    json: { license: typeof license === 'string' ? license : JSON.stringify(license), ...extra },
  });
}

describe('organization licenses', () => {
  it('are signed by a cloud instance for its organizations and applied by a self-hosted instance that trusts it', async () => {
    const cloud = await start({ env: { DEPLOYMENT: 'cloud' } });
    const owner = await createUser(cloud);
    const { id } = await createOrganization(cloud, owner, { name: 'Acme', planType: PlanType.EnterpriseAnnually, additionalSeats: 40 });
    const installationId = randomUUID();
    const missing = await cloud.request('GET', `/api/organizations/${id}/license`, { token: owner.accessToken });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.validationErrors)).toEqual(['installationId']);
    const download = await cloud.request('GET', `/api/organizations/${id}/license?installationId=${installationId.toUpperCase()}`, { token: owner.accessToken });
    expect(download.status).toBe(200);
    const license = download.body as LicenseDocument;
    expect(license).toMatchObject({ object: 'organizationLicense', id, name: 'Acme', planType: 20, productTierType: 3, seats: 40, installationId, useSso: true });
    const issuerKey = await cloud.database.db.selectFrom('server_keys').select('public_jwk').where('purpose', '=', 'license-issuer').executeTakeFirstOrThrow();

    const selfHosted = await start({ env: { LICENSE_ISSUER_PUBLIC_KEYS: issuerKey.public_jwk, INSTALLATION_ID: installationId } });
    const admin = await createUser(selfHosted);
    const { fields } = foundingKeys(admin);
    const res = await apply(selfHosted, admin.accessToken, download.text, fields);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'organization', id, name: 'Acme', planType: 20, seats: 40, selfHost: true, useSso: true, expirationDate: license.expires });
    const profile = await selfHosted.request('GET', '/api/accounts/profile', { token: admin.accessToken });
    expect(profile.body.organizations).toMatchObject([{ id, type: 0, status: 2, key: fields.key, selfHost: true }]);
    expect(await selfHosted.database.db.selectFrom('collections').select('id').where('organization_id', '=', id).execute()).toHaveLength(1);

    const again = await apply(selfHosted, admin.accessToken, download.text, fields);
    expect(again.status).toBe(400);
    expect(again.body.validationErrors).toEqual({ license: ['This license has already been applied to an organization.'] });
  });

  it('refuses tampered, untrusted, malformed, foreign and expired licenses with a 400 naming the license', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaPem = rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString().replace(/\n/g, '\\n');
    const clock = testClock();
    const installationId = randomUUID();
    const s = await start({ clock, env: { LICENSE_ISSUER_PUBLIC_KEYS: rsaPem, INSTALLATION_ID: installationId } });
    const user = await createUser(s);
    const { fields } = foundingKeys(user);
    const issuer = createLicenseIssuer({ db: s.database.db, clock });
    const terms = (overrides: Partial<Parameters<typeof licenseTerms>[0]> = {}) =>
      licenseTerms({
        id: randomUUID(),
        licenseKey: randomUUID(),
        name: 'Selfhost',
        billingEmail: 'b@example.com',
        planType: PlanType.TeamsAnnually,
        expires: new Date(clock.now().getTime() + 86_400_000).toISOString(),
        ...overrides,
      });
    const good = await issuer.issue(terms());
    const shortLived = await issuer.issue(terms({ expires: new Date(clock.now().getTime() + 10 * 60_000).toISOString() }));

    const stranger = generateKeyPairSync('ed25519');
    const untrusted = signLicense(
      { ...good, id: randomUUID(), issuer: await keyIdOf(stranger.publicKey), signature: undefined } as unknown as Omit<LicenseDocument, 'signature'>,
      stranger.privateKey,
    );
    const cases: [string | LicenseDocument, string][] = [
      [{ ...good, seats: 1000 }, 'The license signature is not valid: the file was changed after it was signed.'],
      [{ ...good, useSso: true }, 'The license signature is not valid: the file was changed after it was signed.'],
      [{ ...good, signature: 'AAAA' }, 'The license signature is not valid: the file was changed after it was signed.'],
      [untrusted, 'The license was signed by an issuer this server does not trust.'],
      ['not json', 'The license file is not valid JSON.'],
      ['{"name":"x"}', 'The license file is not an organization license of this server.'],
      [await issuer.issue(terms({ installationId: randomUUID() })), 'The license was issued for another installation.'],
    ];
    for (const [license, message] of cases) {
      const res = await apply(s, user.accessToken, license, fields);
      expect(res.status, message).toBe(400);
      expect(res.body.validationErrors, message).toEqual({ license: [message] });
    }
    const badKey = await apply(s, user.accessToken, good, { ...fields, key: 'plain' });
    expect(Object.keys(badKey.body.validationErrors)).toEqual(['key']);
    expect((await apply(s, user.accessToken, good, {})).body.validationErrors).toHaveProperty('key');
    expect(await s.database.db.selectFrom('organizations').selectAll().execute()).toEqual([]);

    // A trusted RSA issuer's license applies.
    const rsaLicense = signLicense({ ...good, id: randomUUID(), licenseKey: randomUUID(), issuer: await keyIdOf(rsa.publicKey), signature: undefined } as unknown as Omit<LicenseDocument, 'signature'>, rsa.privateKey);
    expect((await apply(s, user.accessToken, rsaLicense, fields)).status).toBe(200);

    // Past its expiry (but within the caller's token lifetime).
    clock.advance(11 * 60_000);
    const expired = await apply(s, user.accessToken, shortLived, fields);
    expect(expired.status).toBe(400);
    expect(expired.body.validationErrors.license[0]).toMatch(/^The license expired on \d{4}-/);
  });

  it('are issued by the `license issue` command with the instance\'s own key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-license-'));
    const fresh = TEST_ENGINE === 'sqlite' ? { url: `sqlite:${join(dir, 'db.sqlite')}`, drop: async () => undefined } : await freshDatabaseUrl();
    try {
      const env = { DATABASE_URL: fresh.url };
      const issued = await run(['license', 'issue', '--name', 'Acme Selfhost', '--plan', 'EnterpriseAnnually', '--seats', '25', '--expires', '365d'], env);
      expect(issued.stderr).toBe('');
      expect(issued.code).toBe(0);
      const license = JSON.parse(issued.stdout) as LicenseDocument;
      expect(license).toMatchObject({ object: 'organizationLicense', name: 'Acme Selfhost', planType: 20, seats: 25, usePolicies: true, installationId: null });
      const key = await run(['license', 'issuer-key'], env);
      expect(key.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);

      // A usage error is exit code 2 with the message on stderr.
      const unknown = await run(['license', 'frobnicate'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('Usage:');

      const s = await start({ databaseUrl: fresh.url });
      // The same command in process (spawning one costs seconds): each bad option is named.
      for (const [args, message] of [
        [['--name', 'X', '--plan', '99', '--expires', '30d'], '--plan: unknown plan "99".'],
        [['--name', 'X', '--plan', '0', '--expires', 'tomorrow'], '--expires: expected an ISO-8601 date'],
        [['--name', 'X', '--plan', '0', '--expires', '2001-01-01'], '--expires: the date is in the past.'],
        [['--plan', '0'], 'Missing --name, --expires.'],
        [['--name', 'X', '--plan', '0', '--expires', '30d', '--seats', 'many'], '--seats: expected a whole number'],
      ] as const) {
        const refused = runLicenseCommand(['issue', ...args], { db: s.database.db, clock: systemClock });
        await expect(refused, message).rejects.toThrow(UsageError);
        await expect(refused, message).rejects.toThrow(message);
      }

      const admin = await createUser(s);
      const res = await apply(s, admin.accessToken, issued.stdout, foundingKeys(admin).fields);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: license.id, name: 'Acme Selfhost', seats: 25, usePolicies: true, selfHost: true });
    } finally {
      await fresh.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('checks the trusted issuer keys when the configuration loads', () => {
    const pem = generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(() => loadConfig({ LICENSE_ISSUER_PUBLIC_KEYS: `${pem}\n${pem}` })).not.toThrow();
    expect(() => loadConfig({ LICENSE_ISSUER_PUBLIC_KEYS: JSON.stringify([pem]) })).not.toThrow();
    for (const bad of ['garbage', '{"kty":"oct","k":"AAAA"}', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----']) {
      try {
        loadConfig({ LICENSE_ISSUER_PUBLIC_KEYS: bad });
        expect.unreachable(bad);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).problems.join('\n')).toContain('LICENSE_ISSUER_PUBLIC_KEYS:');
      }
    }
  });
});
