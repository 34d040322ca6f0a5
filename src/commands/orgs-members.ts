import type { Config } from '../config/config.js';
import { decryptString, rsaWrap } from './client/crypto.js';
import { organizationOption } from './client/organization-option.js';
import type { UserSession } from './client/session.js';
import { emailOption, usage, type OrgsSubcommand } from './orgs-options.js';
import { CommandFailure, ExitCode, text, type OptionValues } from './options.js';
import { printable } from './output.js';

interface Membership {
  id: string;
  name: string;
  type: number;
  status: number;
}

interface Member {
  id: string;
  userId: string | null;
  email: string | null;
  type: number;
  status: number;
}

const ROLES: Record<string, number> = { owner: 0, admin: 1, user: 2, manager: 3 };
const ROLE_NAMES = ['owner', 'admin', 'user', 'manager', 'custom'];
const STATUS_NAMES: Record<number, string> = { [-1]: 'revoked', 0: 'invited', 1: 'accepted', 2: 'confirmed' };
const ACCEPTED = 1;
const CONFIRMED = 2;
/** The message of the server's log line holding a mail it could not send (src/features/mail/mailer.ts). */
const MAIL_NOT_SENT_LOG = 'SMTP_HOST is not set; mail not sent';
/** The server takes at most this many collections in one invitation. */
const MAX_COLLECTIONS = 1000;

/** The collections --collection names (each an id or a name), with their ids. */
async function collectionsOf(session: UserSession, orgId: string, wanted: string[]): Promise<{ id: string; name: string }[]> {
  if (wanted.length === 0) return [];
  if (wanted.length > MAX_COLLECTIONS) throw new CommandFailure(`--collection: at most ${MAX_COLLECTIONS} collections.`, ExitCode.Usage);
  const orgKey = await session.organizationKey(orgId);
  const { data } = await session.request<{ data: { id: string; name: string }[] }>('GET', `/api/organizations/${orgId}/collections`);
  const known = data.map((c) => ({ id: c.id, name: decryptString(c.name, orgKey) }));
  const chosen = new Map<string, { id: string; name: string }>();
  for (const item of wanted) {
    const matches = known.filter((c) => c.id.toLowerCase() === item.toLowerCase() || c.name === item);
    if (matches.length === 0) throw new CommandFailure(`The organization has no collection "${printable(item)}".`, ExitCode.Refused);
    if (matches.length > 1) throw new CommandFailure(`${matches.length} collections are named "${printable(item)}": name one by id.`, ExitCode.Refused);
    const match = matches[0] as { id: string; name: string };
    chosen.set(match.id, match);
  }
  return [...chosen.values()];
}

async function memberOf(session: UserSession, orgId: string, email: string): Promise<Member> {
  const { data } = await session.request<{ data: Member[] }>('GET', `/api/organizations/${orgId}/users`);
  const member = data.find((m) => m.email?.toLowerCase() === email);
  if (!member) throw new CommandFailure(`${email} is not a member of the organization (invite them first).`, ExitCode.Refused);
  return member;
}

/**
 * How the invitee gets the link. Run against this machine's own server (no --server) whose
 * settings have no SMTP_HOST, the server only logs the mail, so the operator is told where it is.
 */
function joinAdvice(values: OptionValues, config: Config): string {
  if (text(values, 'server') === undefined && config.smtpHost === undefined) {
    return `SMTP is not configured (SMTP_HOST), so no mail was sent: the invitation link is in the server's log, on the line "${MAIL_NOT_SENT_LOG}". They accept it with "strongroom orgs accept"`;
  }
  return 'They join with the link mailed to them';
}

export const listOrganizationsCommand: OrgsSubcommand = {
  options: { email: { type: 'string' } },
  async run({ values, login, print }) {
    const session = await login(emailOption(values, 'email'));
    const { data } = await session.request<{ data: Membership[] }>('GET', '/api/organizations');
    const rows = data.map((o) => `${o.id}  ${printable(o.name)}  (${ROLE_NAMES[o.type] ?? o.type}, ${STATUS_NAMES[o.status] ?? o.status})`);
    print(rows.length > 0 ? rows.join('\n') : `${session.email} is in no organization.`, data.map((o) => ({ id: o.id, name: o.name, role: ROLE_NAMES[o.type] ?? o.type, status: STATUS_NAMES[o.status] ?? o.status })));
    return ExitCode.Ok;
  },
};

export const inviteMemberCommand: OrgsSubcommand = {
  options: {
    email: { type: 'string' },
    org: { type: 'string' },
    member: { type: 'string' },
    type: { type: 'string' },
    collection: { type: 'string', multiple: true },
    'secrets-manager': { type: 'boolean' },
  },
  async run({ values, deps, login, print }) {
    const admin = emailOption(values, 'email');
    const member = emailOption(values, 'member');
    const role = text(values, 'type') ?? 'user';
    const type = ROLES[role];
    if (type === undefined) throw new CommandFailure(`--type: expected user, admin, manager or owner, got "${role}".`, ExitCode.Usage);
    const wanted = (values.collection as string[] | undefined) ?? [];
    if (wanted.length > MAX_COLLECTIONS) throw new CommandFailure(`--collection: at most ${MAX_COLLECTIONS} collections.`, ExitCode.Usage);
    const organization = organizationOption('orgs', values);
    const session = await login(admin);
    const org = await organization(session);
    const collections = await collectionsOf(session, org.id, wanted);
    await session.request('POST', `/api/organizations/${org.id}/users/invite`, {
      emails: [member],
      type,
      accessSecretsManager: values['secrets-manager'] === true,
      collections: collections.map((c) => ({ id: c.id, readOnly: false, hidePasswords: false, manage: false })),
      groups: [],
      permissions: null,
    });
    const invited = await memberOf(session, org.id, member);
    const access = collections.length > 0 ? ` with access to ${collections.map((c) => `"${printable(c.name)}"`).join(', ')}` : '';
    const secretsManager = values['secrets-manager'] === true ? ' and to Secrets Manager' : '';
    print(
      `Invited ${member} to "${printable(org.name)}" as ${role}${access}${secretsManager}. ${joinAdvice(values, deps.config)}; then confirm them with "strongroom orgs confirm".`,
      {
        organizationId: org.id,
        memberId: invited.id,
        email: member,
        type: role,
        status: STATUS_NAMES[invited.status] ?? invited.status,
        collections,
        accessSecretsManager: values['secrets-manager'] === true,
      },
    );
    return ExitCode.Ok;
  },
};

export const confirmMemberCommand: OrgsSubcommand = {
  options: { email: { type: 'string' }, org: { type: 'string' }, member: { type: 'string' } },
  async run({ values, login, print }) {
    const admin = emailOption(values, 'email');
    const email = emailOption(values, 'member');
    const organization = organizationOption('orgs', values);
    const session = await login(admin);
    const org = await organization(session);
    const member = await memberOf(session, org.id, email);
    const result = { organizationId: org.id, memberId: member.id, email, status: 'confirmed' };
    if (member.status === CONFIRMED) {
      print(`${email} is already a confirmed member of "${printable(org.name)}".`, result);
      return ExitCode.Ok;
    }
    if (member.status !== ACCEPTED || member.userId === null) {
      throw new CommandFailure(`${email} is ${STATUS_NAMES[member.status] ?? `in status ${member.status}`}, not accepted: a member is confirmed after accepting the invitation.`, ExitCode.Refused);
    }
    // The member's own public key, from the server; the organization key is wrapped to it here.
    const { publicKey } = await session.request<{ publicKey: string | null }>('GET', `/api/users/${member.userId}/public-key`);
    if (!publicKey) throw new CommandFailure(`${email} has no public key yet (they have not finished setting up their account).`, ExitCode.Refused);
    const key = rsaWrap(await session.organizationKey(org.id), publicKey);
    await session.request('POST', `/api/organizations/${org.id}/users/${member.id}/confirm`, { key });
    print(`Confirmed ${email} in "${printable(org.name)}": they now see its items they have access to.`, result);
    return ExitCode.Ok;
  },
};

interface MemberDetails {
  type: number;
  accessAll: boolean;
  accessSecretsManager: boolean;
  permissions?: Record<string, boolean>;
  collections: { id: string; readOnly: boolean; hidePasswords: boolean; manage: boolean }[];
  groups?: string[];
}

/** `--secrets-manager on|off`, the one change `orgs member` makes. */
function switchOf(values: OptionValues): boolean {
  const value = text(values, 'secrets-manager');
  if (value === undefined) throw usage('--secrets-manager on|off is required.');
  if (value !== 'on' && value !== 'off') throw new CommandFailure(`--secrets-manager: expected on or off, got "${printable(value)}".`, ExitCode.Usage);
  return value === 'on';
}

export const updateMemberCommand: OrgsSubcommand = {
  options: { email: { type: 'string' }, org: { type: 'string' }, member: { type: 'string' }, 'secrets-manager': { type: 'string' } },
  async run({ values, login, print }) {
    const admin = emailOption(values, 'email');
    const email = emailOption(values, 'member');
    const wanted = switchOf(values);
    const organization = organizationOption('orgs', values);
    const session = await login(admin);
    const org = await organization(session);
    const member = await memberOf(session, org.id, email);
    const result = { organizationId: org.id, memberId: member.id, email, accessSecretsManager: wanted };
    const state = wanted ? 'has' : 'does not have';
    // The update route replaces the member's role, permissions, collections and groups, so they
    // are read first and sent back as they are: only Secrets Manager access changes.
    const details = await session.request<MemberDetails>('GET', `/api/organizations/${org.id}/users/${member.id}?includeGroups=true`);
    if (details.accessSecretsManager === wanted) {
      print(`${email} already ${state} Secrets Manager access in "${printable(org.name)}".`, result);
      return ExitCode.Ok;
    }
    await session.request('PUT', `/api/organizations/${org.id}/users/${member.id}`, {
      type: details.type,
      accessAll: details.accessAll,
      permissions: details.permissions ?? null,
      collections: details.collections,
      groups: details.groups ?? [],
      accessSecretsManager: wanted,
    });
    print(`${email} now ${state} Secrets Manager access in "${printable(org.name)}".`, result);
    return ExitCode.Ok;
  },
};
