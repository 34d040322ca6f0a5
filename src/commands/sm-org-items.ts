import { encryptString } from './client/crypto.js';
import { smCommand, type SmCommand } from './sm-command.js';
import { organizationOption } from './client/organization-option.js';
import { nameOf } from './sm-options.js';
import { inOrganizationSm } from './sm-orgs.js';
import { printable } from './output.js';
import { openName, printList, type ApiList } from './sm-output.js';
import { ExitCode } from './options.js';

/**
 * `sm projects create|list` and `sm machine-accounts create|list`: the two kinds of thing an
 * organization's Secrets Manager holds by name alone, made and listed through the routes the
 * web app uses, with the name encrypted (and opened) with the organization key on this machine.
 */

interface Kind {
  /** The API's collection under /api/organizations/{id}/. */
  path: 'projects' | 'service-accounts';
  noun: string;
  plural: string;
}

export const PROJECTS: Kind = { path: 'projects', noun: 'project', plural: 'projects' };
export const MACHINE_ACCOUNTS: Kind = { path: 'service-accounts', noun: 'machine account', plural: 'machine accounts' };

interface Item {
  id: string;
  name: string;
  creationDate: string;
}

export function createItemCommand(kind: Kind): SmCommand {
  return smCommand({
    options: { org: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
    prepare: (values) => ({ organization: organizationOption('sm', values), name: nameOf(values, 'name') }),
    async run({ session, values, io }, { organization, name }) {
      const found = await organization(session);
      const org = found.id;
      const orgKey = await session.organizationKey(org);
      const made = await inOrganizationSm(session.email, found, () => session.request<Item>('POST', `/api/organizations/${org}/${kind.path}`, { name: encryptString(name, orgKey) }));
      if (values.json) io.stdout.write(`${JSON.stringify({ id: made.id, organizationId: org, name }, null, 2)}\n`);
      else io.stdout.write(`Created ${kind.noun} ${printable(name)} (${made.id}).\n`);
      return ExitCode.Ok;
    },
  });
}

export function listItemsCommand(kind: Kind): SmCommand {
  return smCommand({
    options: { org: { type: 'string' }, json: { type: 'boolean' } },
    prepare: (values) => organizationOption('sm', values),
    async run({ session, values, io }, organization) {
      const found = await organization(session);
      const org = found.id;
      const orgKey = await session.organizationKey(org);
      const listed = await inOrganizationSm(session.email, found, () => session.request<ApiList<Item>>('GET', `/api/organizations/${org}/${kind.path}`));
      const rows = listed.data.map((item) => ({ id: item.id, name: openName(item.name, orgKey), creationDate: item.creationDate }));
      printList(io, values.json === true, rows, ['ID', 'NAME', 'CREATED (UTC)'], (r) => [r.id, r.name, r.creationDate.slice(0, 19).replace('T', ' ')], `No ${kind.plural}.`);
      return ExitCode.Ok;
    },
  });
}
