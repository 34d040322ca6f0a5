import { systemClock } from '../shared/clock.js';
import { SESSION_OPTIONS, SESSION_USAGE, readMasterPassword, sessionTarget } from './client/server.js';
import { openUserSession, type UserSession } from './client/session.js';
import { nearestName } from './help.js';
import { acceptInvitationCommand } from './orgs-accept.js';
import { createOrganizationCommand } from './orgs-create.js';
import { confirmMemberCommand, inviteMemberCommand, listOrganizationsCommand, updateMemberCommand } from './orgs-members.js';
import { usage, type OrgsCommandDeps, type OrgsContext, type OrgsSubcommand } from './orgs-options.js';
import { ExitCode, failureOf, parseOptions, type OptionValues } from './options.js';

export const ORGS_USAGE = `Usage:
  strongroom orgs create --email <owner> --name <name> [--billing-email <email>]
                         [--collection <name>] [--plan <plan>] [--expires <date|Nd>]
                         [--license <file>] [--json]
      Creates an organization owned by this account, as the web vault does: its key (made
      here and wrapped to the owner's public key), its key pair and a first collection
      ("Default collection" unless named). Self-hosted, the command signs a license with this
      instance's issuer key and uploads it: the Free plan unless --plan names another (as
      "strongroom license issue" takes it), for 100 years unless --expires says otherwise. Off
      the server's machine, pass a license file made there with --license (its name and plan
      are the organization's). On a cloud deployment it creates a Free organization.
  strongroom orgs list --email <user> [--json]
      The organizations of this account, with its role and status in each.
  strongroom orgs invite --email <admin> --org <id or name> --member <email>
                         [--type user|admin|manager|owner] [--collection <name or id>]...
                         [--secrets-manager] [--json]
      Invites a member (mailed a link to join) with access to the named collections, and to
      Secrets Manager with --secrets-manager. Without SMTP_HOST no mail is sent: the link is in
      the server's log, and the member accepts it with "strongroom orgs accept".
  strongroom orgs accept --email <member> '<invitation link>'
  strongroom orgs accept --email <member> --org <organization id> <invitation token>
      Accepts an invitation as the invited account, as the web vault's link does: pass the link
      from the mail (quoted: it holds "&"), or the token the mail shows with the organization's
      id. Where the organization's account recovery policy enrols members automatically, the
      account's key is wrapped here to the organization's public key and handed over with it.
  strongroom orgs confirm --email <admin> --org <id or name> --member <email> [--json]
      Confirms a member who accepted: hands them the organization key, wrapped here to their
      public key, after which they see the organization's items.
  strongroom orgs member --email <admin> --org <id or name> --member <email>
                         --secrets-manager on|off [--json]
      Gives a member Secrets Manager access or takes it away; their role, permissions,
      collections and groups stay as they are.

${SESSION_USAGE}

Exit codes: 0 done, 1 refused (wrong password, two-step login, the server's refusal),
  2 usage error or bad input or configuration, 3 server or database unavailable, 70 internal error.`;

const SUBCOMMANDS: Record<string, OrgsSubcommand> = {
  create: createOrganizationCommand,
  list: listOrganizationsCommand,
  invite: inviteMemberCommand,
  confirm: confirmMemberCommand,
  accept: acceptInvitationCommand,
  member: updateMemberCommand,
};

function parse(args: string[], subcommand: OrgsSubcommand): { values: OptionValues; positionals: string[] } {
  return parseOptions('orgs', args, { ...subcommand.options, ...SESSION_OPTIONS, json: { type: 'boolean' } }, { positionals: subcommand.positionals });
}

/**
 * `strongroom orgs …`: organizations, run as a user who types their master password. Answers
 * the exit code; every failure is one line on standard error.
 */
export async function runOrgsCommand(args: string[], deps: OrgsCommandDeps): Promise<number> {
  const { io } = deps;
  const sessions: UserSession[] = [];
  try {
    const [name, ...rest] = args;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      (name === undefined ? io.stderr : io.stdout).write(`${ORGS_USAGE}\n`);
      return name === undefined ? ExitCode.Usage : ExitCode.Ok;
    }
    if (name.startsWith('-')) throw usage(`Missing subcommand: ${Object.keys(SUBCOMMANDS).join(', ')}.`);
    const subcommand = SUBCOMMANDS[name];
    if (!subcommand) {
      const near = nearestName(name, Object.keys(SUBCOMMANDS));
      throw usage(`Unknown orgs command "${name}".${near !== undefined ? ` Did you mean "${near}"?` : ''}`);
    }
    const { values, positionals } = parse(rest, subcommand);
    if (values.help) {
      io.stdout.write(`${ORGS_USAGE}\n`);
      return ExitCode.Ok;
    }
    const target = sessionTarget(values, deps.config);
    const context: OrgsContext = {
      values,
      positionals,
      deps: { ...deps, clock: deps.clock ?? systemClock },
      login: async (email) => {
        const password = await readMasterPassword(io, email);
        const session = await openUserSession({ ...target, email, password });
        sessions.push(session);
        return session;
      },
      print: (text, json) => {
        io.stdout.write(values.json ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);
      },
    };
    return await subcommand.run(context);
  } catch (error) {
    const { message, code } = failureOf(error);
    io.stderr.write(`${message}\n`);
    return code;
  } finally {
    for (const session of sessions) session.close();
  }
}
