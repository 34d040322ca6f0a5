import { isGuid } from '../../http/ids.js';
import { CommandFailure, ExitCode, text, usageError, type OptionValues } from '../options.js';
import { printable } from '../output.js';
import type { ProfileOrganization, UserSession } from './session.js';

/** The organization `--org` names, found among the account's own once it has logged in. */
export type OrganizationLookup = (session: UserSession) => Promise<ProfileOrganization>;

/**
 * `--org <id|name>` of `strongroom <command>`, for every command acting in one organization. It is
 * required, so its absence is a usage error before the password is asked. Once logged in, an id
 * must be one of the account's confirmed organizations and a name must match one of theirs whole,
 * regardless of case; a name several share is refused with their ids, since guessing would act
 * on the wrong organization.
 */
export function organizationOption(command: string, values: OptionValues): OrganizationLookup {
  const wanted = text(values, 'org');
  if (wanted === undefined || wanted.trim() === '') throw usageError(command, '--org is required.');
  const byId = isGuid(wanted);
  const folded = wanted.toLowerCase();
  return async (session) => {
    const matches = (await session.organizations()).filter((o) => (byId ? o.id : o.name).toLowerCase() === folded);
    if (matches.length === 0) throw new CommandFailure(`${session.email} is in no organization ${byId ? 'with id' : 'named'} "${printable(wanted)}".`, ExitCode.Refused);
    if (matches.length > 1) throw new CommandFailure(`${matches.length} organizations are named "${printable(wanted)}": name one by id (${matches.map((o) => o.id).join(', ')}).`, ExitCode.Refused);
    return matches[0] as ProfileOrganization;
  };
}
