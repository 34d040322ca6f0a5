import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUsersCommand } from '../../src/commands/users.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';
import { TextCapture as Capture } from '../support/capture.js';

/**
 * Accounts made by the operator command are real client accounts: the official `bw` logs into
 * one (600,000 PBKDF2 iterations, derived by the command) and unlocks its vault; once disabled,
 * its session ends and `bw login` is refused. An Argon2id account logs in too.
 */
let server: TestServer;
let bw: BwCli;
const EMAIL = 'operator-made@example.com';
const PASSWORD = 'made by the operator command';

async function users(argv: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  stdin.end(input);
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runUsersCommand(argv, { config: server.config, io: { stdin, stdout, stderr }, database: server.database });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls, env: { REGISTRATION_ENABLED: 'false' } });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

describe('official bw client: accounts made by strongroom users', { timeout: 300_000 }, () => {
  it('logs into and unlocks an account the command created', async () => {
    const created = await users(['create', '--email', EMAIL, '--name', 'Operator Made'], `${PASSWORD}\n`);
    expect(created.code, created.stderr).toBe(0);

    const login = await bw.login(EMAIL, PASSWORD);
    expect(login.code, login.stderr).toBe(0);
    // Unlocking decrypts the stored user key with the master key bw derives from the password.
    expect((await bw.lock()).code).toBe(0);
    const unlock = await bw.unlock(PASSWORD);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(await bw.status()).toMatchObject({ status: 'unlocked', userEmail: EMAIL });
  });

  it('loses its session and is refused at login once disabled', async () => {
    expect((await users(['disable', '--email', EMAIL])).code).toBe(0);
    expect((await bw.run(['sync', '--force'])).code).not.toBe(0);
    await bw.logout();
    const refused = await bw.login(EMAIL, PASSWORD);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('This account has been disabled. Contact your administrator.');
  });

  // Runs after the refused login above, with the CLI logged out.
  it('logs into an Argon2id account the command created, deriving the same master key', async () => {
    const email = 'argon-made@example.com';
    const created = await users(['create', '--email', email, '--kdf', 'argon2id', '--memory', '32', '--parallelism', '2'], `${PASSWORD}\n`);
    expect(created.code, created.stderr).toBe(0);
    const login = await bw.login(email, PASSWORD);
    expect(login.code, login.stderr).toBe(0);
    expect(await bw.status()).toMatchObject({ status: 'unlocked', userEmail: email });
  });
});
