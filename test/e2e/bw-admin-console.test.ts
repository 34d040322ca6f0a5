import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUsersCommand } from '../../src/commands/users.js';
import { adminTokenHash, signIn, type AdminBrowser } from '../support/admin-console.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';
import { TextCapture as Sink } from '../support/capture.js';

/** An account disabled in the admin console is refused by the official `bw login`, and logs in again once enabled. */
let server: TestServer;
let bw: BwCli;
let admin: AdminBrowser;
const EMAIL = 'console-disabled@example.com';
const PASSWORD = 'disabled from the admin console';

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls, env: { ADMIN_TOKEN: await adminTokenHash() } });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
  const stdin = new PassThrough();
  stdin.end(`${PASSWORD}\n`);
  const stderr = new Sink();
  const code = await runUsersCommand(['create', '--email', EMAIL], { config: server.config, io: { stdin, stdout: new Sink(), stderr }, database: server.database });
  if (code !== 0) throw new Error(`users create failed: ${stderr.text}`);
  // Over HTTPS the session cookie is Secure; inject reaches the same app without TLS, as a proxy would.
  admin = await signIn(server.app);
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

describe('official bw client: an account disabled in the admin console', { timeout: 300_000 }, () => {
  it('is refused at login while disabled and logs in once enabled', async () => {
    const user = await server.database.db.selectFrom('users').select('id').where('email', '=', EMAIL).executeTakeFirstOrThrow();
    expect((await admin.post(`/admin/users/${user.id}/disable`)).statusCode).toBe(303);
    const refused = await bw.login(EMAIL, PASSWORD);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('This account has been disabled. Contact your administrator.');

    expect((await admin.post(`/admin/users/${user.id}/enable`)).statusCode).toBe(303);
    const login = await bw.login(EMAIL, PASSWORD);
    expect(login.code, login.stderr).toBe(0);
  });
});
