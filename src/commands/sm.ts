import type { Config } from '../config/config.js';
import { readMasterPassword, SESSION_OPTIONS, SESSION_USAGE, sessionTarget } from './client/server.js';
import { openUserSession, type UserSession } from './client/session.js';
import { accessCommand } from './sm-access.js';
import type { SmCommand } from './sm-command.js';
import { ExitCode, failureOf } from './options.js';
import { emailOf, parseSmArgs, smUsageError } from './sm-options.js';
import { createItemCommand, listItemsCommand, MACHINE_ACCOUNTS, PROJECTS } from './sm-org-items.js';
import { createSecretCommand, readPasswordAndValue } from './sm-secrets.js';
import { createTokenCommand, listTokensCommand, revokeTokenCommand } from './sm-tokens.js';
import type { CommandIo } from './users.js';

export const SM_USAGE = `Usage:
  strongroom sm projects create --email <email> --org <id|name> --name <name> [--json]
  strongroom sm projects list --email <email> --org <id|name> [--json]
  strongroom sm machine-accounts create --email <email> --org <id|name> --name <name> [--json]
  strongroom sm machine-accounts list --email <email> --org <id|name> [--json]
      Secrets Manager projects and machine accounts of an organization, given by its id or
      its name (see "strongroom orgs list"). Names are encrypted and opened with the
      organization key on this machine.
  strongroom sm access --email <email> --project <id>
                       (--machine-account <id> | --member <email> | --group <id>)
                       [--read | --write | --revoke]
      Lets a machine account, a member or a group read (--read, the default) or read and
      write (--write) the project's secrets, or removes that grant (--revoke). Every other
      grant is left as it is.
  strongroom sm tokens create --email <email> --machine-account <id> [--name <name>]
                              [--expires never|<days>|<YYYY-MM-DD>|<ISO date-time>] [--json]
      Makes an access token and prints it once, as the SDK and bws take it
      (0.<id>.<secret>:<key>), alone on standard output. It cannot be shown again.
  strongroom sm tokens list --email <email> --machine-account <id> [--json]
  strongroom sm tokens revoke --email <email> --machine-account <id> --token <id>
  strongroom sm secrets create --email <email> --project <id> --key <name> [--note <note>] [--json]
      Adds a secret to the project. Its value is never an option: it is asked after the
      password at a terminal, or piped after the password's line (all the rest of the input,
      less one final line break).

Each command logs in as the user with --email, as an official client does: the master
password is derived here and the server never sees it or a plain key. The user needs
Secrets Manager access in the organization, and the rights the web app would ask for.

${SESSION_USAGE}

Exit codes: 0 done, 1 refused (wrong password, no such organization, project, machine
  account, member, group or token, no permission), 2 usage error or bad input, 3 server unreachable,
  70 internal error.`;

const COMMANDS: Record<string, SmCommand> = {
  'projects create': createItemCommand(PROJECTS),
  'projects list': listItemsCommand(PROJECTS),
  'machine-accounts create': createItemCommand(MACHINE_ACCOUNTS),
  'machine-accounts list': listItemsCommand(MACHINE_ACCOUNTS),
  'tokens create': createTokenCommand,
  'tokens list': listTokensCommand,
  'tokens revoke': revokeTokenCommand,
  access: accessCommand,
  'secrets create': createSecretCommand,
};

export interface SmCommandDeps {
  config: Config;
  io: CommandIo;
  now?: () => Date;
}

/** The command a command line names: one word (`access`) or a noun and a verb; answers it and the arguments after it. */
function commandOf(argv: string[]): { command: SmCommand; args: string[] } {
  const [noun = '', verb = ''] = argv;
  const single = COMMANDS[noun];
  if (single) return { command: single, args: argv.slice(1) };
  const pair = COMMANDS[`${noun} ${verb}`];
  if (pair) return { command: pair, args: argv.slice(2) };
  const verbs = Object.keys(COMMANDS).filter((name) => name.startsWith(`${noun} `));
  if (verbs.length > 0) throw smUsageError(`"sm ${noun}" takes ${verbs.map((v) => v.split(' ')[1]).join(', ')}${verb ? `, not "${verb}"` : ''}.`);
  const nouns = [...new Set(Object.keys(COMMANDS).map((name) => name.split(' ')[0]))];
  throw smUsageError(`Unknown sm command "${noun}": it takes ${nouns.join(', ')}.`);
}

/**
 * `strongroom sm …`: returns the exit code. Every failure is reported as one line on standard
 * error; nothing here ends the process.
 */
export async function runSmCommand(argv: string[], deps: SmCommandDeps): Promise<number> {
  const { io, config } = deps;
  let session: UserSession | undefined;
  try {
    const first = argv[0];
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      (first === undefined ? io.stderr : io.stdout).write(`${SM_USAGE}\n`);
      return first === undefined ? ExitCode.Usage : ExitCode.Ok;
    }
    const { command, args } = commandOf(argv);
    const values = parseSmArgs(args, { email: { type: 'string' }, ...SESSION_OPTIONS, ...command.options });
    if (values.help) {
      io.stdout.write(`${SM_USAGE}\n`);
      return ExitCode.Ok;
    }
    const email = emailOf(values);
    const prepared = command.prepare(values, deps.now?.() ?? new Date());
    const target = sessionTarget(values, config);
    const { password, value } = command.readsValue ? await readPasswordAndValue(io, email) : { password: await readMasterPassword(io, email), value: undefined };
    session = await openUserSession({ ...target, email, password });
    return await command.run({ session, values, io, ...(value !== undefined ? { value } : {}) }, prepared);
  } catch (error) {
    const { message, code } = failureOf(error);
    io.stderr.write(`${message}\n`);
    return code;
  } finally {
    session?.close();
  }
}
