/**
 * `strongroom sm …` and `strongroom orgs …` run in process against a running test server, as a
 * user who types their master password: standard input carries the password (and, for sm, a
 * secret's value), the output streams are captured. The owner it acts as is an account with real
 * key derivation, so the command's login derives the same keys an official client would.
 */
import { PassThrough } from 'node:stream';
import { seedAccount, type LoggedInUser } from './accounts.js';
import { generateSymmetricKey, rsaEncryptToEncString, type SymmetricKey } from './bw-crypto.js';
import { seedMembership, seedOrganization } from './orgs.js';
import { allowSecretsManager } from './sm.js';
import type { TestServer } from './test-server.js';
import { runOrgsCommand } from '../../src/commands/orgs.js';
import { runSmCommand } from '../../src/commands/sm.js';
import type { CommandInput } from '../../src/shared/terminal-input.js';
import { OrganizationUserType } from '../../src/platform/access/roles.js';
import { TextCapture as Capture } from './capture.js';

export interface SmRun {
  code: number;
  stdout: string;
  stderr: string;
}

type CommandRunner = (argv: string[], io: { stdin: CommandInput; stdout: Capture; stderr: Capture }) => Promise<number>;

/** Runs a command with `input` piped on standard input and its output captured. */
async function captured(run: CommandRunner, argv: string[], input: string): Promise<SmRun> {
  const stdin = new PassThrough() as PassThrough & CommandInput;
  stdin.end(input);
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(argv, { stdin, stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** `--server` (and `--ca`) for `server`, unless the command line names a server of its own. */
function targeting(server: TestServer, argv: string[], caFile?: string): string[] {
  return argv.includes('--server') ? argv : [...argv, '--server', server.baseUrl, ...(caFile ? ['--ca', caFile] : [])];
}

/**
 * Runs `strongroom sm <argv>` logged in to `server` (its URL, and `caFile` for HTTPS);
 * `input` is what is piped on standard input, the password's line first.
 */
export async function runSm(server: TestServer, argv: string[], input: string, opts: { caFile?: string } = {}): Promise<SmRun> {
  return captured((args, io) => runSmCommand(args, { config: server.config, io }), targeting(server, argv, opts.caFile), input);
}

/**
 * Runs `strongroom orgs <argv>` against `server` as `runSm` does, with the server's database for
 * the subcommands that sign a license with the instance's key.
 */
export async function runOrgs(server: TestServer, argv: string[], input: string, opts: { caFile?: string } = {}): Promise<SmRun> {
  return captured((args, io) => runOrgsCommand(args, { config: server.config, io, database: server.database }), targeting(server, argv, opts.caFile), input);
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
