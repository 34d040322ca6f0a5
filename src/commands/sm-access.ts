import { readMachineAccount, readProject, smCommand } from './sm-command.js';
import { guidOf, rightsOf } from './sm-options.js';
import { openName, printable } from './sm-output.js';
import { CommandFailure, ExitCode } from './users.js';

/**
 * `sm access`: what a machine account may do in a project, set as the web app's machine account
 * "Projects" tab sets it (`PUT /api/service-accounts/{id}/granted-policies`). That route replaces
 * the account's whole list, so the command reads the list, changes the one project and sends it
 * back: the account's other grants stay as they were.
 */

interface GrantedPolicies {
  grantedProjectPolicies: { accessPolicy: { grantedProjectId: string; read: boolean; write: boolean } }[];
}

export const accessCommand = smCommand({
  options: { 'machine-account': { type: 'string' }, project: { type: 'string' }, read: { type: 'boolean' }, write: { type: 'boolean' }, revoke: { type: 'boolean' } },
  prepare: (values) => ({ account: guidOf(values, 'machine-account'), project: guidOf(values, 'project'), rights: rightsOf(values) }),
  async run({ session, io }, { account, project, rights }) {
    const machineAccount = await readMachineAccount(session, account);
    const target = await readProject(session, project);
    if (target.organizationId !== machineAccount.organizationId) {
      throw new CommandFailure(`Project ${project} belongs to another organization than machine account ${account}.`, ExitCode.Refused);
    }
    const path = `/api/service-accounts/${account}/granted-policies`;
    const current = await session.request<GrantedPolicies>('GET', path);
    const others = current.grantedProjectPolicies.map((p) => p.accessPolicy).filter((p) => p.grantedProjectId !== project);
    const requests = others.map((p) => ({ grantedId: p.grantedProjectId, read: p.read, write: p.write }));
    if (rights !== 'revoke') requests.push({ grantedId: project, read: rights.read, write: rights.write });
    await session.request('PUT', path, { projectGrantedPolicyRequests: requests });

    const orgKey = await session.organizationKey(machineAccount.organizationId);
    const who = `Machine account ${printable(openName(machineAccount.name, orgKey))} (${account})`;
    const where = `project ${printable(openName(target.name, orgKey))} (${project})`;
    const can = rights === 'revoke' ? 'has no access to' : rights.write ? 'can read and write' : 'can read';
    io.stdout.write(`${who} ${can} ${where}.\n`);
    return ExitCode.Ok;
  },
});
