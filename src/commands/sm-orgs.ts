import type { ProfileOrganization } from './client/session.js';
import { printable } from './output.js';
import { CommandFailure, ExitCode } from './options.js';

/**
 * Why the server refused an organization's Secrets Manager routes to `strongroom sm`. It answers
 * "not found" alike for no membership, no Secrets Manager access and no such organization; the
 * account's own profile tells which.
 */

/** The command that gives a member Secrets Manager access, for messages that point to it. */
export function grantSmAccessCommand(orgId: string, email: string): string {
  return `strongroom orgs member --org ${orgId} --member ${email} --secrets-manager on`;
}

/**
 * Why the account cannot use the organization's Secrets Manager, or null when its profile does not
 * say. The organization is one the account is a confirmed member of: `--org` was resolved on it.
 */
function smRefusal(email: string, org: ProfileOrganization): string | null {
  const named = `organization "${printable(org.name)}" (${org.id})`;
  if (org.useSecretsManager === false) return `The ${named} does not use Secrets Manager.`;
  if (org.accessSecretsManager === false) {
    return `${email} is a member of ${named} but has no Secrets Manager access in it. An owner or admin gives it with: ${grantSmAccessCommand(org.id, email)}.`;
  }
  return null;
}

/**
 * Runs `work` on the organization's Secrets Manager routes; a refusal the account's profile
 * explains is reported in those words, any other as the server put it.
 */
export async function inOrganizationSm<T>(email: string, org: ProfileOrganization, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof CommandFailure) || error.exitCode !== ExitCode.Refused) throw error;
    const why = smRefusal(email, org);
    throw why === null ? error : new CommandFailure(why, ExitCode.Refused);
  }
}
