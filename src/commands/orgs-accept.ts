import { isGuid } from '../http/ids.js';
import { normalizeEmail } from '../platform/auth/kdf.js';
import { rsaWrap } from './client/crypto.js';
import { answerFailure, type UserSession } from './client/session.js';
import { CommandFailure, ExitCode, text, type OptionValues } from './options.js';
import { printable } from './output.js';
import { emailOption, usage, type OrgsSubcommand } from './orgs-options.js';

/** Bitwarden's PolicyType.ResetPassword: account recovery, which may enrol members as they join. */
const RESET_PASSWORD_POLICY = 8;
/** An invitation token is a few hundred characters; a link carries it and three short fields. */
const MAX_INVITATION_LENGTH = 8192;

interface Invitation {
  organizationId: string;
  organizationUserId: string;
  token: string;
  /** The invited address, when the link names it. */
  email?: string;
  organizationName?: string;
}

interface Policy {
  type: number;
  enabled: boolean;
  data?: unknown;
}

function guidField(value: string | null | undefined, what: string): string {
  if (!value || !isGuid(value)) throw new CommandFailure(`The invitation link has no valid ${what}: copy the whole link from the mail.`, ExitCode.Usage);
  return value.toLowerCase();
}

/**
 * The invitation the argument names: the link the server mails (PUBLIC_URL/#/accept-organization?…),
 * or the token the mail also shows, with --org. The token is this server's signed token, whose
 * payload names the membership it opens; the server checks its signature.
 */
function invitationOf(argument: string, values: OptionValues): Invitation {
  if (argument.length > MAX_INVITATION_LENGTH) throw new CommandFailure('The invitation is too long to be a link or token this server mailed.', ExitCode.Usage);
  const query = /accept-organization\?(\S+)/.exec(argument)?.[1];
  if (query !== undefined) {
    const params = new URLSearchParams(query);
    const token = params.get('token');
    if (!token) throw new CommandFailure('The invitation link has no token: pass the whole link from the mail, in single quotes (the shell cuts it at "&").', ExitCode.Usage);
    return {
      organizationId: guidField(params.get('organizationId'), 'organizationId'),
      organizationUserId: guidField(params.get('organizationUserId'), 'organizationUserId'),
      token,
      email: params.get('email') ?? undefined,
      organizationName: params.get('organizationName') ?? undefined,
    };
  }
  const org = text(values, 'org');
  if (org === undefined) throw usage('A bare invitation token needs --org <organization id> (or pass the whole link).');
  if (!isGuid(org)) throw new CommandFailure(`--org: "${printable(org)}" is not an organization id.`, ExitCode.Usage);
  let claims: { orgUserId?: unknown; email?: unknown };
  try {
    claims = JSON.parse(Buffer.from(argument.split('.')[1] ?? '', 'base64url').toString('utf8')) as typeof claims;
  } catch {
    throw new CommandFailure('That is neither an invitation link nor an invitation token.', ExitCode.Usage);
  }
  if (typeof claims.orgUserId !== 'string' || !isGuid(claims.orgUserId)) throw new CommandFailure('That is neither an invitation link nor an invitation token.', ExitCode.Usage);
  return { organizationId: org.toLowerCase(), organizationUserId: claims.orgUserId.toLowerCase(), token: argument, email: typeof claims.email === 'string' ? claims.email : undefined };
}

/**
 * Whether joining enrols the member in account recovery: the organization's policies as the
 * invitation shows them to its holder (the web vault reads the same). An organization whose plan
 * has no policies answers 404: nothing to enrol in.
 */
async function enrolsInRecovery(session: UserSession, invitation: Invitation, email: string): Promise<boolean> {
  const query = new URLSearchParams({ token: invitation.token, email, organizationUserId: invitation.organizationUserId });
  const answer = await session.answer('GET', `/api/organizations/${invitation.organizationId}/policies/token?${query.toString()}`);
  if (answer.status === 404) return false;
  if (answer.status !== 200) throw answerFailure(answer, 'GET', `/api/organizations/${invitation.organizationId}/policies/token`);
  const policies = (answer.body as { data?: Policy[] } | null)?.data ?? [];
  const policy = policies.find((p) => p.type === RESET_PASSWORD_POLICY && p.enabled);
  const data = policy?.data;
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>).autoEnrollEnabled === true;
}

export const acceptInvitationCommand: OrgsSubcommand = {
  options: { email: { type: 'string' }, org: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, login, print }) {
    const email = emailOption(values, 'email');
    if (positionals.length !== 1) throw usage(positionals.length === 0 ? 'The invitation link (or its token) is required.' : 'Pass one invitation link, quoted.');
    const invitation = invitationOf(positionals[0] as string, values);
    if (invitation.email !== undefined && normalizeEmail(invitation.email) !== email) {
      throw new CommandFailure(`The invitation is for ${printable(invitation.email)}, not ${email}: log in as the invited account.`, ExitCode.Usage);
    }
    const session = await login(email);
    const enrol = await enrolsInRecovery(session, invitation, email);
    let resetPasswordKey: string | undefined;
    if (enrol) {
      // The user key, wrapped to the organization's public key, is what lets its admins recover
      // the account; only the organization's private key opens it.
      const { publicKey } = await session.request<{ publicKey: string | null }>('GET', `/api/organizations/${invitation.organizationId}/public-key`);
      if (!publicKey) throw new CommandFailure('The organization enrols its members in account recovery but has no key pair yet: ask its owner to finish setting it up.', ExitCode.Refused);
      resetPasswordKey = rsaWrap(session.userKey, publicKey);
    }
    await session.request('POST', `/api/organizations/${invitation.organizationId}/users/${invitation.organizationUserId}/accept`, { token: invitation.token, ...(resetPasswordKey ? { resetPasswordKey } : {}) });
    const name = invitation.organizationName === undefined ? invitation.organizationId : `"${printable(invitation.organizationName)}"`;
    const recovery = enrol ? ' As the organization requires, its admins can now recover your account (account recovery).' : '';
    print(
      `Accepted the invitation to ${name}.${recovery} An admin now confirms you ("strongroom orgs confirm"); until then you do not see its items.`,
      { organizationId: invitation.organizationId, memberId: invitation.organizationUserId, email, status: 'accepted', accountRecovery: enrol },
    );
    return ExitCode.Ok;
  },
};
