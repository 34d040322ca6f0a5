/**
 * `strongroom sm …` run in process against a running test server, as a user who types their
 * master password: standard input carries the password (and nothing else), the output streams
 * are captured. The owner it acts as is an account with real key derivation, so the command's
 * login derives the same keys an official client would.
 */
import { PassThrough } from 'node:stream';
import { seedAccount, type LoggedInUser } from './accounts.js';
import { generateSymmetricKey, rsaEncryptToEncString, type SymmetricKey } from './bw-crypto.js';
import { seedMembership, seedOrganization } from './orgs.js';
import { allowSecretsManager } from './sm.js';
import type { TestServer } from './test-server.js';
import { runSmCommand } from '../../src/commands/sm.js';
import type { CommandInput } from '../../src/shared/terminal-input.js';
import { OrganizationUserType } from '../../src/platform/access/roles.js';
import { TextCapture as Capture } from './capture.js';

export interface SmRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `strongroom sm <argv>` logged in to `server` (its URL, and `caFile` for HTTPS);
 * `input` is what is piped on standard input, the password's line first.
 */
export async function runSm(server: TestServer, argv: string[], input: string, opts: { caFile?: string } = {}): Promise<SmRun> {
  const stdin = new PassThrough() as PassThrough & CommandInput;
  stdin.end(input);
  const stdout = new Capture();
  const stderr = new Capture();
  const target = ['--server', server.baseUrl, ...(opts.caFile ? ['--ca', opts.caFile] : [])];
  const code = await runSmCommand([...argv, ...target], { config: server.config, io: { stdin, stdout, stderr } });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** An organization with Secrets Manager, and its owner (Secrets Manager access, the org key wrapped to them) who can log in with a password. */
export async function smOwnerOrg(server: TestServer, email: string): Promise<{ orgId: string; owner: LoggedInUser; orgKey: SymmetricKey }> {
  const orgId = await seedOrganization(server, { overrides: { use_secrets_manager: true } });
  const owner = await seedAccount(server, { email, derivation: 'real' });
  const orgKey = generateSymmetricKey();
  const memberId = await seedMembership(server, {
    organizationId: orgId,
    userId: owner.userId,
    email,
    type: OrganizationUserType.Owner,
    key: rsaEncryptToEncString(orgKey.raw, owner.account.publicKeyB64),
  });
  await allowSecretsManager(server, [memberId]);
  return { orgId, owner, orgKey };
}
