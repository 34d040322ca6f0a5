import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { actingOf, type MemberCaller, type Membership } from '../../platform/access/org-access.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { validatePolicyData } from './policy-data.js';
import { enabledSsoDecryption, ssoDecryptionHolds } from './sso-policy.js';
import { listPolicies, findPolicy, organizationOfMember, insertPolicy, membersInOtherOrganizations, policiesOfMemberships, updatePolicy, type PolicyRow } from './policies.repository.js';
import { defaultPolicyResponse, parseData, toPolicyResponse, toPolicyUpdate, type PolicyBody, type PolicyResponse } from './policies.schemas.js';
import { PolicyType } from './policy-type.js';
import { policyPush, userPush } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';
import { leaveRevokedOrganizations, noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { revokeNonCompliant, type Revocation } from './two-factor-policy.js';
import type { Pushes } from '../../platform/push/pushes.js';
import { findOrganization, touchOrganizationMembers } from '../../platform/access/memberships.js';

/** The names the official server uses in its policy messages. */
const POLICY_NAMES: Partial<Record<PolicyType, string>> = {
  [PolicyType.SingleOrg]: 'Single organization',
  [PolicyType.RequireSso]: 'Require single sign-on authentication',
  [PolicyType.ResetPassword]: 'Account recovery administration',
  [PolicyType.MaximumVaultTimeout]: 'Vault timeout',
  [PolicyType.AutomaticUserConfirmation]: 'Automatically confirm invited users',
  [PolicyType.OrganizationUserNotification]: 'Organization user notification',
};
const nameOf = (type: PolicyType) => POLICY_NAMES[type] ?? PolicyType[type];

/** Policies that can only be on while Single organization is on. */
const REQUIRES_SINGLE_ORG: readonly PolicyType[] = [
  PolicyType.RequireSso,
  PolicyType.ResetPassword,
  PolicyType.MaximumVaultTimeout,
  PolicyType.AutomaticUserConfirmation,
  PolicyType.OrganizationUserNotification,
];

/** The identity token's MasterPasswordPolicy: PascalCase keys, left out when no policy sets them. */
export interface MasterPasswordPolicyResponse {
  Object: 'masterPasswordPolicy';
  MinComplexity?: number;
  MinLength?: number;
  RequireLower?: boolean;
  RequireUpper?: boolean;
  RequireNumbers?: boolean;
  RequireSpecial?: boolean;
  EnforceOnLogin?: boolean;
}

/**
 * The strictest master password requirements across the enabled MasterPassword policies of the
 * user's organizations (accepted or confirmed memberships; owners and admins are not exempt).
 */
export async function masterPasswordPolicyFor(db: Executor, userId: string): Promise<MasterPasswordPolicyResponse> {
  const rows = await policiesOfMemberships(db, userId, [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed], PolicyType.MasterPassword);
  const result: MasterPasswordPolicyResponse = { Object: 'masterPasswordPolicy' };
  for (const row of rows) {
    const data = parseData(row.data) ?? {};
    for (const [key, field] of [
      ['minComplexity', 'MinComplexity'],
      ['minLength', 'MinLength'],
    ] as const) {
      const value = data[key];
      if (typeof value === 'number' && (result[field] === undefined || value > result[field])) result[field] = value;
    }
    for (const [key, field] of [
      ['requireLower', 'RequireLower'],
      ['requireUpper', 'RequireUpper'],
      ['requireNumbers', 'RequireNumbers'],
      ['requireSpecial', 'RequireSpecial'],
      ['enforceOnLogin', 'EnforceOnLogin'],
    ] as const) {
      const value = data[key];
      if (typeof value === 'boolean') result[field] = (result[field] ?? false) || value;
    }
  }
  return result;
}

/**
 * Sync's `policies` (confirmed memberships) and `policiesNew` (accepted ones too, which newer
 * clients prefer, so that an organization's policies bind a member from acceptance on), in one query.
 */
export async function syncPoliciesForUser(db: Executor, userId: string): Promise<{ policies: PolicyResponse[]; policiesNew: PolicyResponse[] }> {
  const rows = await policiesOfMemberships(db, userId, [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed]);
  const policiesNew = rows.map(toPolicyResponse);
  return { policies: policiesNew.filter((_, i) => rows[i]?.member_status === OrganizationUserStatusType.Confirmed), policiesNew };
}

/** What a policy write sets: `data` undefined keeps the stored data (already validated otherwise). */
export interface PolicyWrite {
  enabled: boolean;
  data?: Record<string, unknown> | null;
  defaultUserCollectionName?: string | null;
}

/** A policy written in a transaction, and the members its switch revoked, for `announce`. */
export interface WrittenPolicy {
  row: PolicyRow;
  revoked: Revocation[];
}

/** An organization invitation link's token, membership id and email (the members' invitations sign it). */
export interface InvitationLink {
  token: string;
  organizationUserId: string;
  email: string;
}

export function createPolicyService(deps: {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  pushes: Pushes;
  /** The mobile relay's registrations: members the two-step login policy revokes leave the organization's pushes. */
  registrations?: PushRegistrations;
  /** Whether an invitation link's token is valid for its membership and email (organizations/invitations.ts). */
  invitationValid: (link: InvitationLink) => Promise<boolean>;
  /** Gives the confirmed members the data ownership policy binds their "My Items" (collections/default-user-collections.ts), passed in as the collections feature sits above this one. */
  giveDefaultCollections: (tx: Executor, organizationId: string, name: string, now: string) => Promise<string[]>;
}) {
  const { db, audit, clock } = deps;

  async function checkDependencies(executor: Executor, organizationId: string, type: PolicyType, enabling: boolean, current: PolicyRow | undefined, data: Record<string, unknown> | null): Promise<void> {
    const held = ssoDecryptionHolds(type, enabling, data, await enabledSsoDecryption(executor, organizationId));
    if (held) throw new BadRequest(held);
    const saved = await listPolicies(executor, organizationId);
    const isOn = (t: PolicyType) => saved.some((p) => p.type === (t as number) && Boolean(p.enabled));
    const wasOn = Boolean(current?.enabled);
    if (enabling && !wasOn && REQUIRES_SINGLE_ORG.includes(type) && !isOn(PolicyType.SingleOrg)) {
      throw new BadRequest(`Turn on the ${nameOf(PolicyType.SingleOrg)} policy because it is required for the ${nameOf(type)} policy.`);
    }
    if (!enabling && wasOn && type === PolicyType.SingleOrg) {
      const dependents = REQUIRES_SINGLE_ORG.filter(isOn);
      if (dependents.length === 1) throw new BadRequest(`Turn off the ${nameOf(dependents[0] as PolicyType)} policy because it requires the ${nameOf(type)} policy.`);
      if (dependents.length > 1) throw new BadRequest(`Turn off all of the policies that require the ${nameOf(type)} policy.`);
    }
  }

  /**
   * The official server revokes members who belong to other organizations when Single
   * organization is turned on; this server refuses instead, naming them, so that nobody loses
   * access as a side effect of a policy switch.
   */
  async function checkSingleOrg(executor: Executor, membership: Membership): Promise<void> {
    const emails = await membersInOtherOrganizations(
      executor,
      membership.organizationId,
      membership.userId,
      [OrganizationUserType.Owner, OrganizationUserType.Admin],
      [OrganizationUserStatusType.Invited, OrganizationUserStatusType.Revoked],
      OrganizationUserStatusType.Invited,
    );
    if (emails.length > 0) {
      throw new BadRequest(
        `These members also belong to other organizations: ${emails.join(', ')}. Remove or revoke them, or have them leave the other organizations, before turning on the ${nameOf(PolicyType.SingleOrg)} policy.`,
      );
    }
  }

  /**
   * Saves one policy of the caller's organization in the caller's transaction, as an admin's
   * save does: its dependencies checked, the row written, Policy_Updated recorded, and what
   * turning it on entails (revocations, default collections). `data` undefined keeps the stored
   * data. The answer goes to `announce` once the transaction has committed.
   */
  async function writePolicy(tx: Executor, { membership, client }: MemberCaller, type: PolicyType, update: PolicyWrite): Promise<WrittenPolicy> {
    const org = await tx.selectFrom('organizations').select(['use_policies']).where('id', '=', membership.organizationId).executeTakeFirst();
    if (!org) throw new NotFound();
    if (!org.use_policies) throw new BadRequest('This organization cannot use policies.');
    const current = await findPolicy(tx, membership.organizationId, type);
    const data = update.data === undefined ? (current?.data ? parseData(current.data) : null) : update.data;
    await checkDependencies(tx, membership.organizationId, type, update.enabled, current, data);
    if (type === PolicyType.SingleOrg && update.enabled && !current?.enabled) await checkSingleOrg(tx, membership);

    const now = clock.now().toISOString();
    const values = { enabled: update.enabled, data: data === null ? null : JSON.stringify(data), revision_date: now };
    let row: PolicyRow;
    if (current) {
      await updatePolicy(tx, current.id, values);
      row = { ...current, ...values };
    } else {
      row = { id: randomUUID(), organization_id: membership.organizationId, type, creation_date: now, ...values };
      await insertPolicy(tx, row);
    }
    await audit.record(tx, client, { type: EventType.Policy_Updated, policyId: row.id, organizationId: membership.organizationId, ...actingOf(membership) });
    let revoked: Revocation[] = [];
    // Turning Two-step login on revokes the members it binds who have no provider on, as officially.
    if (type === PolicyType.TwoFactorAuthentication && update.enabled && !current?.enabled) {
      revoked = await revokeNonCompliant(tx, audit, client, { organizationId: membership.organizationId, ...actingOf(membership) }, now);
    }
    // Turning data ownership on with a collection name gives the confirmed members it binds their "My Items", as officially.
    const name = update.defaultUserCollectionName;
    if (type === PolicyType.OrganizationDataOwnership && update.enabled && !current?.enabled && name?.trim()) {
      await deps.giveDefaultCollections(tx, membership.organizationId, name, now);
    }
    await touchOrganizationMembers(tx, [membership.organizationId], now);
    return { row, revoked };
  }

  /** Tells the clients about committed policy writes: the policy, and the members revoked. */
  function announce(written: readonly WrittenPolicy[]): void {
    deps.pushes.send(written.flatMap(({ row, revoked }) => [policyPush(row), ...revoked.map((r) => userPush(PushType.SyncOrgKeys, r.userId, clock.now()))]));
    leaveRevokedOrganizations(deps.registrations ?? noPushRegistrations, written.flatMap(({ revoked }) => revoked));
  }

  return {
    /**
     * The organization's enabled policies, to whoever holds an invitation link (the web vault
     * reads them while the invitee registers, to enforce the master password policy on the new
     * account). As the official server does, everything that does not hold answers 404: an
     * unknown organization or one that cannot use policies, a bad or expired token, a token for
     * another membership or email, a membership of another organization.
     */
    async invitedPolicies(organizationId: string, link: InvitationLink): Promise<PolicyResponse[]> {
      const org = await findOrganization(db, organizationId);
      if (!org?.use_policies) throw new NotFound();
      if (!(await deps.invitationValid(link))) throw new NotFound();
      if ((await organizationOfMember(db, link.organizationUserId)) !== organizationId) throw new NotFound();
      return (await listPolicies(db, organizationId)).filter((row) => Boolean(row.enabled)).map(toPolicyResponse);
    },

    /**
     * The organization's enabled master password policy, for any member including invited and
     * accepted ones (clients check it while joining); 404 when there is none.
     */
    async masterPasswordPolicyOf(caller: UserCaller, organizationId: string): Promise<PolicyResponse> {
      const row = await db
        .selectFrom('policies')
        .innerJoin('organizations', 'organizations.id', 'policies.organization_id')
        .innerJoin('organization_users', 'organization_users.organization_id', 'policies.organization_id')
        .selectAll('policies')
        .where('policies.organization_id', '=', organizationId)
        .where('policies.type', '=', PolicyType.MasterPassword)
        .where('policies.enabled', '=', true)
        .where('organizations.use_policies', '=', true)
        .where('organization_users.user_id', '=', caller.userId)
        .executeTakeFirst();
      if (!row) throw new NotFound();
      return toPolicyResponse(row);
    },

    async list({ membership }: MemberCaller): Promise<PolicyResponse[]> {
      return (await listPolicies(db, membership.organizationId)).map(toPolicyResponse);
    },

    async get({ membership }: MemberCaller, type: PolicyType): Promise<PolicyResponse> {
      const row = await findPolicy(db, membership.organizationId, type);
      return row ? toPolicyResponse(row) : defaultPolicyResponse(membership.organizationId, type);
    },

    async save(caller: MemberCaller, type: PolicyType, body: PolicyBody): Promise<PolicyResponse> {
      if (body.type !== undefined && body.type !== (type as number)) throw BadRequest.field('type', 'The type field must match the policy type in the path.');
      const update = toPolicyUpdate(body);
      const data = validatePolicyData(type, update.data, body.policy ? 'policy.data' : 'data');
      const written = await db.transaction().execute((tx) => writePolicy(tx, caller, type, { enabled: update.enabled, data, defaultUserCollectionName: update.defaultUserCollectionName }));
      announce([written]);
      return toPolicyResponse(written.row);
    },

    writePolicy,
    announce,
  };
}

export type PolicyService = ReturnType<typeof createPolicyService>;
