import type { UserSession } from './client/session.js';
import { readMachineAccount, readProject, smCommand, type Project } from './sm-command.js';
import { guidOf, rightsOf, smUsageError } from './sm-options.js';
import { printable } from './output.js';
import { openName } from './sm-output.js';
import { grantSmAccessCommand } from './sm-orgs.js';
import { CommandFailure, ExitCode, text, type OptionValues } from './options.js';
import { normalizeEmail } from '../platform/auth/kdf.js';

/**
 * `sm access`: who may read or write a project's secrets. For a machine account it is set as
 * the web app's machine account "Projects" tab sets it (`PUT /api/service-accounts/{id}/granted-policies`);
 * for a member or a group as the project's "People" tab does (`PUT /api/projects/{id}/access-policies/people`).
 * Both routes replace a whole list, so the command reads the list, changes the one entry and
 * sends it back: every other grant stays as it was.
 */

type Rights = { read: boolean; write: boolean } | 'revoke';
type Grantee = { machineAccount: string } | { member: string } | { group: string };

interface Policy {
  read: boolean;
  write: boolean;
}

interface GrantedPolicies {
  grantedProjectPolicies: { accessPolicy: Policy & { grantedProjectId: string } }[];
}

interface PeoplePolicies {
  userAccessPolicies: (Policy & { organizationUserId: string })[];
  groupAccessPolicies: (Policy & { groupId: string })[];
}

interface OrganizationMember {
  email: string | null;
  status: number;
}

interface PotentialGrantee {
  id: string;
  type: string;
  email: string | null;
  name: string | null;
}

function granteeOf(values: OptionValues): Grantee {
  const given = ['machine-account', 'member', 'group'].filter((name) => text(values, name) !== undefined);
  if (given.length !== 1) throw smUsageError('Name who gets the access with one of --machine-account, --member or --group.');
  if (given[0] === 'member') return { member: normalizeEmail(text(values, 'member') ?? '') };
  if (given[0] === 'group') return { group: guidOf(values, 'group') };
  return { machineAccount: guidOf(values, 'machine-account') };
}

type Request = { granteeId: string; read: boolean; write: boolean };

/** A list read back as the requests that keep it as it is. */
function kept<T extends Policy>(list: T[], idOf: (entry: T) => string): Request[] {
  return list.map((entry) => ({ granteeId: idOf(entry), read: entry.read, write: entry.write }));
}

/** The list without `id`'s entry, with it again unless revoked. */
function replaced<T extends Policy>(list: T[], idOf: (entry: T) => string, id: string, rights: Rights): Request[] {
  const others = kept(list, idOf).filter((entry) => entry.granteeId.toLowerCase() !== id);
  return rights === 'revoke' ? others : [...others, { granteeId: id, ...rights }];
}

async function grantMachineAccount(session: UserSession, account: string, target: Project, rights: Rights): Promise<string> {
  const machineAccount = await readMachineAccount(session, account);
  if (target.organizationId !== machineAccount.organizationId) {
    throw new CommandFailure(`Project ${target.id} belongs to another organization than machine account ${account}.`, ExitCode.Refused);
  }
  const path = `/api/service-accounts/${account}/granted-policies`;
  const current = await session.request<GrantedPolicies>('GET', path);
  const policies = current.grantedProjectPolicies.map((p) => ({ ...p.accessPolicy, id: p.accessPolicy.grantedProjectId }));
  const requests = replaced(policies, (p) => p.id, target.id, rights).map(({ granteeId, ...r }) => ({ grantedId: granteeId, ...r }));
  await session.request('PUT', path, { projectGrantedPolicyRequests: requests });
  const orgKey = await session.organizationKey(machineAccount.organizationId);
  return `Machine account ${printable(openName(machineAccount.name, orgKey))} (${account})`;
}

const CONFIRMED = 2;

/**
 * Why a member is not among the project's potential grantees: only confirmed members with
 * Secrets Manager access are, so the organization's member list (when the caller may read it)
 * tells a member without that access, or not yet confirmed, from no member at all.
 */
async function memberRefusal(session: UserSession, target: Project, email: string): Promise<CommandFailure> {
  const refused = (message: string) => new CommandFailure(message, ExitCode.Refused);
  const org = target.organizationId;
  let members: OrganizationMember[];
  try {
    members = (await session.request<{ data: OrganizationMember[] }>('GET', `/api/organizations/${org}/users`)).data;
  } catch (error) {
    if (!(error instanceof CommandFailure) || error.exitCode !== ExitCode.Refused) throw error;
    return refused(`The organization of project ${target.id} has no member ${email} with Secrets Manager access.`);
  }
  const member = members.find((m) => m.email !== null && normalizeEmail(m.email) === email);
  if (member === undefined) return refused(`The organization of project ${target.id} has no member ${email}.`);
  if (member.status !== CONFIRMED) return refused(`${email} is not yet a confirmed member of the organization of project ${target.id}: confirm them first (strongroom orgs confirm --org ${org} --member ${email}).`);
  return refused(`${email} is a member of the organization of project ${target.id} but has no Secrets Manager access in it. Give it with: ${grantSmAccessCommand(org, email)}.`);
}

async function grantPeople(session: UserSession, grantee: { member: string } | { group: string }, target: Project, rights: Rights): Promise<string> {
  const candidates = await session.request<{ data: PotentialGrantee[] }>('GET', `/api/organizations/${target.organizationId}/access-policies/people/potential-grantees`);
  const found =
    'member' in grantee
      ? candidates.data.find((c) => c.type === 'user' && c.email !== null && normalizeEmail(c.email) === grantee.member)
      : candidates.data.find((c) => c.type === 'group' && c.id.toLowerCase() === grantee.group);
  if (!found) {
    if ('member' in grantee) throw await memberRefusal(session, target, grantee.member);
    throw new CommandFailure(`The organization of project ${target.id} has no group ${grantee.group}.`, ExitCode.Refused);
  }
  const path = `/api/projects/${target.id}/access-policies/people`;
  const current = await session.request<PeoplePolicies>('GET', path);
  const id = found.id.toLowerCase();
  const users = current.userAccessPolicies;
  const groups = current.groupAccessPolicies;
  await session.request('PUT', path, {
    userAccessPolicyRequests: 'member' in grantee ? replaced(users, (u) => u.organizationUserId, id, rights) : kept(users, (u) => u.organizationUserId),
    groupAccessPolicyRequests: 'group' in grantee ? replaced(groups, (g) => g.groupId, id, rights) : kept(groups, (g) => g.groupId),
  });
  return 'member' in grantee ? `Member ${printable(grantee.member)}` : `Group ${printable(found.name ?? '')} (${found.id})`;
}

export const accessCommand = smCommand({
  options: {
    'machine-account': { type: 'string' },
    member: { type: 'string' },
    group: { type: 'string' },
    project: { type: 'string' },
    read: { type: 'boolean' },
    write: { type: 'boolean' },
    revoke: { type: 'boolean' },
  },
  prepare: (values) => ({ grantee: granteeOf(values), project: guidOf(values, 'project'), rights: rightsOf(values) }),
  async run({ session, io }, { grantee, project, rights }) {
    const target = await readProject(session, project);
    const who = 'machineAccount' in grantee ? await grantMachineAccount(session, grantee.machineAccount, target, rights) : await grantPeople(session, grantee, target, rights);
    const orgKey = await session.organizationKey(target.organizationId);
    // A revoked member may still reach the project through a group or as an admin: say only what changed.
    const can = rights === 'revoke' ? 'no longer has a grant on' : rights.write ? 'can read and write' : 'can read';
    io.stdout.write(`${who} ${can} project ${printable(openName(target.name, orgKey))} (${project}).\n`);
    return ExitCode.Ok;
  },
});
