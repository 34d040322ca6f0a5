import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { ClientContext } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { findMembershipOfUser, insertMembership, type OrganizationRow } from '../../platform/access/memberships.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { findUserByEmail, findUserById, insertUser, touchAccountRevision, type UserRow } from '../../platform/auth/users.repository.js';
import { newUserRow } from '../accounts/registration.service.js';
import { joinPolicyError, lockOrganization, seatError } from '../members/member-rules.js';
import { updateMember } from '../members/members.repository.js';
import type { ExternalIdentity } from './oidc-claims.js';
import { findSsoLink } from './sso-login.repository.js';

/**
 * Just-in-time members, after the official AutoProvisionUserAsync: the account an SSO login
 * stands for, found through its link to the provider's identity (`sso_users`), or linked on
 * its first SSO login, or made then. Runs inside the callback's transaction, so a refusal
 * leaves nothing behind.
 */

/** A login the organization does not let in; the message is shown to the person as is. */
export class SsoRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsoRefusal';
  }
}

/** The official defaults of a new account, which sets its master password (or trusts a device) later. */
const DEFAULT_KDF = { kdf: 0, iterations: 600_000, memory: null, parallelism: null };

export interface JitInput {
  org: OrganizationRow;
  identity: ExternalIdentity;
  /** The account a `user_identifier` named (linking from a signed-in account), if any. */
  linkUser: UserRow | null;
  client: ClientContext;
  now: string;
}

async function invitationByEmail(tx: Executor, organizationId: string, email: string) {
  return tx
    .selectFrom('organization_users')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('user_id', 'is', null)
    .where(sql<string>`lower(email)`, '=', email)
    .executeTakeFirst();
}

const UNVERIFIED = (email: string) => `The identity provider says the address ${email} is not verified, so it cannot be used to join an existing account or invitation. Verify the address at the identity provider, or ask your administrator.`;

function statusRefusal(status: number, orgName: string): SsoRefusal | null {
  if ((status as OrganizationUserStatusType) === OrganizationUserStatusType.Revoked) return new SsoRefusal(`Your access to organization ${orgName} has been revoked. Please contact your administrator for assistance.`);
  return null;
}

export function createJitMembers(deps: { audit: AuditLog }) {
  /** Links the account to the provider's identity: the first SSO login (1510), or a new identity replacing a stale one (1509). */
  async function link(tx: Executor, input: JitInput, user: UserRow, memberId: string): Promise<void> {
    const { org, identity, client, now } = input;
    const stale = await tx.deleteFrom('sso_users').where('organization_id', '=', org.id).where('user_id', '=', user.id).executeTakeFirst();
    const type = Number(stale.numDeletedRows) > 0 ? EventType.OrganizationUser_ResetSsoLink : EventType.OrganizationUser_FirstSsoLogin;
    await tx.insertInto('sso_users').values({ id: randomUUID(), user_id: user.id, organization_id: org.id, external_id: identity.externalId, creation_date: now }).execute();
    await deps.audit.record(tx, client, { type, organizationId: org.id, organizationUserId: memberId, userId: user.id, actingUserId: user.id });
  }

  return {
    /** The account this SSO login logs in, made or linked as needed. */
    async resolve(tx: Executor, input: JitInput): Promise<UserRow> {
      const { org, identity, now } = input;
      // Everything is looked up under the organization's lock: two callbacks for one new person
      // then see each other's link and account instead of both inserting them.
      await lockOrganization(tx, org.id);
      const linked = await findSsoLink(tx, org.id, identity.externalId);
      if (linked) {
        const user = await findUserById(tx, linked.user_id);
        const member = user ? await findMembershipOfUser(tx, org.id, user.id) : undefined;
        if (!user || !member) throw new SsoRefusal(`Your account is no longer a member of organization ${org.name}.`);
        const refusal = statusRefusal(member.status, org.name);
        if (refusal) throw refusal;
        return user;
      }

      const email = identity.email;
      let existing: UserRow | undefined;
      if (input.linkUser) {
        existing = input.linkUser;
        // Linking from a signed-in account: the provider must answer for that same person. A
        // flow is not tied to the browser that started it, so without an email a link handed to
        // someone else would tie their identity to this account.
        if (email === null) throw new SsoRefusal(`The identity provider did not say which email address this person has, so it cannot be linked to ${existing.email}. Ask your administrator to check the SSO claim settings.`);
        if (email !== existing.email.toLowerCase()) {
          throw new SsoRefusal(`The identity provider answered for ${email}, but the account being linked is ${existing.email}. Log in at the identity provider as ${existing.email}.`);
        }
      } else {
        if (email === null) throw new SsoRefusal('Cannot find email claim: the identity provider did not say which email address this person has. Ask your administrator to check the SSO claim settings.');
        existing = await findUserByEmail(tx, email);
      }
      const membership = (existing ? await findMembershipOfUser(tx, org.id, existing.id) : undefined) ?? (email !== null ? await invitationByEmail(tx, org.id, email) : undefined);

      if (existing) {
        if (!membership) {
          throw new SsoRefusal(`${existing.email} already has an account here, but is not a member of organization ${org.name}. Ask an administrator of the organization to invite this address, then log in with SSO again.`);
        }
        const refusal = statusRefusal(membership.status, org.name);
        if (refusal) throw refusal;
        // Only the email ties this login to an account it did not sign in to: an address the
        // provider says it has not verified ties nothing.
        if (!input.linkUser && identity.emailVerified === false) throw new SsoRefusal(UNVERIFIED(email));
        if ((membership.status as OrganizationUserStatusType) === OrganizationUserStatusType.Invited) {
          // An invitation is no proof the provider's person owns the account (any admin can
          // invite any address and point SSO at a provider of their own): the account accepts
          // it itself first, as the official server asks, or links while signed in.
          if (!input.linkUser) throw new SsoRefusal(`To accept your invite to ${org.name}, you must first log in using your master password. Once your invite has been accepted, you will be able to log in using SSO.`);
          if (membership.email !== null && membership.email.toLowerCase() !== existing.email.toLowerCase()) {
            throw new SsoRefusal(`This invitation is for ${membership.email}, but the identity provider answered for ${existing.email}.`);
          }
          const policy = await joinPolicyError(tx, org, membership, existing.id, 'accept');
          if (policy) throw new SsoRefusal(policy);
          await updateMember(tx, membership.id, { status: OrganizationUserStatusType.Accepted, user_id: existing.id, email: null, revision_date: now });
          await touchAccountRevision(tx, existing.id, now);
        }
        await link(tx, input, existing, membership.id);
        return existing;
      }

      if (email === null) throw new SsoRefusal('Cannot find email claim.');
      if (membership && identity.emailVerified === false) throw new SsoRefusal(UNVERIFIED(email));
      if (!membership) {
        const full = await seatError(tx, org, 1);
        if (full) throw new SsoRefusal(`No seats available for organization ${org.name}: ${full}`);
      }
      const user: UserRow = {
        ...newUserRow({ email, name: identity.name, masterPasswordHash: '', hint: null, key: '', publicKey: null, privateKey: null, kdf: DEFAULT_KDF }, now),
        // No master password and no keys yet: the client sets them (set-password) or trusts a device.
        master_password_hash: null,
        key: null,
        // The official server marks it verified only for a verified domain; there are none here.
        email_verified: false,
      };
      await insertUser(tx, user);
      let memberId: string;
      if (membership) {
        memberId = membership.id;
        await updateMember(tx, membership.id, { status: OrganizationUserStatusType.Accepted, user_id: user.id, email: null, revision_date: now });
      } else {
        memberId = randomUUID();
        await insertMembership(tx, {
          id: memberId,
          organization_id: org.id,
          user_id: user.id,
          email: null,
          key: null,
          reset_password_key: null,
          status: OrganizationUserStatusType.Accepted,
          type: OrganizationUserType.User,
          access_all: false,
          external_id: null,
          permissions: null,
          access_secrets_manager: false,
          creation_date: now,
          revision_date: now,
          revocation_reason: null,
        });
      }
      await link(tx, input, user, memberId);
      return user;
    },
  };
}

export type JitMembers = ReturnType<typeof createJitMembers>;
