import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAccount } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { freshDatabaseUrl, startTestServer, TEST_ENGINE, type TestServer } from '../support/test-server.js';

/**
 * The official `bw` over the certificates TLS_MODE=self-signed makes, trusting them only through
 * NODE_EXTRA_CA_CERTS=<DATA_DIR>/tls/ca.pem, as the start-up message tells users to.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'sr-e2e-tls-'));
const caPath = join(dataDir, 'tls', 'ca.pem');
const PASSWORD = 'self-signed master password';
let databaseUrl: string;
let server: TestServer | undefined;
let bw: BwCli;

function start(env: Record<string, string> = {}, port?: number): Promise<TestServer> {
  return startTestServer({ databaseUrl, ...(port ? { port } : {}), env: { TLS_MODE: 'self-signed', DATA_DIR: dataDir, ...env } });
}

beforeAll(async () => {
  // The database outlives a restart: a file under DATA_DIR, or a schema of this run on PostgreSQL.
  databaseUrl = TEST_ENGINE === 'sqlite' ? `sqlite:${join(dataDir, 'strongroom.sqlite')}` : (await freshDatabaseUrl()).url;
  server = await start();
}, 60_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('official bw client over the self-signed certificates', { timeout: 180_000 }, () => {
  it('logs in over https://127.0.0.1 trusting only the generated CA', async () => {
    const account = await registerAccount(server!, { email: 'tls-user@example.com', password: PASSWORD, derivation: 'real' });
    expect(server!.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    bw = await createBwCli({ serverUrl: server!.baseUrl, caPath });
    await bw.configServer();
    const login = await bw.login(account.email, PASSWORD);
    expect(login.code, login.stderr).toBe(0);
    expect(bw.session).toMatch(/.{20,}/);
  });

  it('keeps working when a restart with another name re-issues the server certificate from the same CA', async () => {
    const caBefore = readFileSync(caPath, 'utf8');
    const certBefore = readFileSync(join(dataDir, 'tls', 'server.pem'), 'utf8');
    const port = Number(new URL(server!.baseUrl).port);
    await server!.close();
    server = undefined;
    server = await start({ TLS_HOSTNAMES: 'localhost,127.0.0.1,::1,strongroom.test' }, port);

    expect(readFileSync(caPath, 'utf8')).toBe(caBefore);
    const cert = readFileSync(join(dataDir, 'tls', 'server.pem'), 'utf8');
    expect(cert).not.toBe(certBefore);
    expect(new X509Certificate(cert).checkHost('strongroom.test')).toBe('strongroom.test');

    const sync = await bw.run(['sync', '--force']);
    expect(sync.code, sync.stderr).toBe(0);
  });
});
