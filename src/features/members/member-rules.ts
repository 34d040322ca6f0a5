import { BadRequest } from '../../http/errors.js';
import type { Executor } from '../../db/database.js';
import type { Membership } from '../../platform/access/org-access.js';
import { PlanType } from '../organizations/plans.js';
import { canManageMemberOfType, OrganizationUserStatusType, OrganizationUserType, PERMISSION_FLAGS } from '../../platform/access/roles.js';
import { findPolicy, policiesOfMemberships } from '../policies/policies.repository.js';
import { PolicyType } from '../policies/policy-type.js';
import { countFreeOrgAdminships, membershipsOfUser } from './members.repository.js';
import { accessInputs } from '../collections/access-input.js';
import { collectionsOfOrganization, groupsOfOrganization } from '../collections/collections.repository.js';
import { permissionsJson, type CollectionAccessBody, type PermissionsBody } from './members.schemas.js';
import { type OrganizationRow, countOccupiedSeats } from '../../platform/access/memberships.js';
import { usersWithTwoFactor } from '../../platform/auth/two-factor-state.js';

export type ManageVerb = 'configure' | 'remove' | 'revoke' | 'restore';

/**
 * The role table's rule for acting on a member of a given type, with the official wording:
 * only owners touch owners, and custom user managers do not touch admins.
 */
export function manageError(actor: Membership, targetType: OrganizationUserType, verb: ManageVerb): string | null {
  if (canManageMemberOfType(actor.type, targetType)) return null;
  if (verb === 'configure') {
    return targetType === OrganizationUserType.Owner ? "Only an Owner can configure another Owner's account." : 'Custom users can not manage Admins or Owners.';
  }
  return targetType === OrganizationUserType.Owner ? `Only owners can ${verb} other owners.` : `Custom users can not ${verb} admins.`;
}

export function assertCanManage(actor: Membership, targetType: OrganizationUserType, verb: ManageVerb): void {
  const error = manageError(actor, targetType, verb);
  if (error) throw new BadRequest(error);
}

export interface Assignment {
  type: OrganizationUserType;
  permissions: string | null;
  accessAll: boolean | undefined;
  accessSecretsManager: boolean | undefined;
  /** undefined: leave as they are. */
  collections: { id: string; readOnly: boolean; hidePasswords: boolean; manage: boolean }[] | undefined;
  groups: string[] | undefined;
}

interface AssignmentInput {
  type: number;
  accessAll?: boolean | undefined;
  collections?: CollectionAccessBody[] | null | undefined;
  groups?: string[] | null | undefined;
  permissions?: PermissionsBody | null | undefined;
  accessSecretsManager?: boolean | undefined;
}

/**
 * Checks a role and access assignment from an invite or update body against the actor, the
 * organization's plan and its own collections and groups (another organization's ids are refused
 * exactly like ids that do not exist).
 */
export async function validateAssignment(db: Executor, org: OrganizationRow, actor: Membership, body: AssignmentInput, currentAccessAll = false): Promise<Assignment> {
  const type = body.type as OrganizationUserType;
  if (type === OrganizationUserType.Custom) {
    if (!body.permissions) throw BadRequest.field('permissions', 'The permissions field is required when type is 4 (Custom).');
    if (!org.use_custom_permissions) throw new BadRequest('To enable custom permissions the organization must be on an Enterprise plan.');
    if (actor.type === OrganizationUserType.Custom) {
      const beyond = PERMISSION_FLAGS.filter((flag) => body.permissions?.[flag] === true && !actor.rights.has(flag));
      if (beyond.length > 0) throw new BadRequest('Custom users can only grant the same custom permissions that they have.');
    }
  }
  const accessAll = body.accessAll;
  // Turning on access to all collections needs editAnyCollection, as it does for a group.
  if (accessAll && !currentAccessAll && !actor.rights.has('editAnyCollection')) {
    throw BadRequest.field('accessAll', 'Only members who may edit any collection can give a member access to all collections.');
  }
  let collections: Assignment['collections'];
  if (accessAll) {
    // Access to all collections makes explicit assignments meaningless.
    collections = [];
  } else if (body.collections) {
    collections = accessInputs(body.collections, 'collections');
    const known = await collectionsOfOrganization(db, org.id, collections.map((c) => c.id));
    if (known.size !== collections.length) throw BadRequest.field('collections', 'One or more collections do not exist in this organization.');
  }
  const groups = body.groups ? await validateGroups(db, org, body.groups) : undefined;
  return {
    type,
    permissions: type === OrganizationUserType.Custom ? permissionsJson(body.permissions) : null,
    accessAll,
    accessSecretsManager: body.accessSecretsManager,
    collections,
    groups,
  };
}

/**
 * A member may not put themself into a group that lacks access to all collections through the
 * member routes either (the spec's rule, which the group routes apply). Only groups the member is
 * not in yet (`before`) are checked; null when the change is allowed.
 */
export async function ownGroupsError(db: Executor, actor: Membership, memberId: string, groups: readonly string[], before: readonly string[]): Promise<string | null> {
  if (memberId !== actor.id) return null;
  const added = groups.filter((g) => !before.includes(g));
  if (added.length === 0) return null;
  const rows = await db.selectFrom('groups').select('access_all').where('id', 'in', added).execute();
  return rows.some((g) => !g.access_all) ? 'You cannot add yourself to groups.' : null;
}

/** Distinct group ids, all of them the organization's own, on a plan that has groups. */
export async function validateGroups(db: Executor, org: OrganizationRow, ids: readonly string[], field = 'groups'): Promise<string[]> {
  const groups = [...new Set(ids.map((g) => g.toLowerCase()))];
  if (groups.length > 0 && !org.use_groups) throw BadRequest.field(field, 'This organization cannot use groups.');
  const known = await groupsOfOrganization(db, org.id, groups);
  if (known.size !== groups.length) throw BadRequest.field(field, 'One or more groups do not exist in this organization.');
  return groups;
}

/**
 * Serializes the membership changes of one organization that count (seats, owners): a no-op
 * update takes the organization row's write lock until the transaction ends.
 */
export async function lockOrganization(tx: Executor, organizationId: string): Promise<void> {
  await tx.updateTable('organizations').set((eb) => ({ revision_date: eb.ref('revision_date') })).where('id', '=', organizationId).execute();
}

/** Seats are every membership except revoked ones; an organization without a seat limit has none to run out of. */
export async function seatError(db: Executor, org: OrganizationRow, adding: number): Promise<string | null> {
  if (org.seats === null || adding === 0) return null;
  const used = await countOccupiedSeats(db, org.id);
  return used + adding > org.seats ? `You have reached the maximum number of users (${org.seats}) for this organization.` : null;
}

/**
 * Whether `adding` more members with access to Secrets Manager fit its seats (`sm_seats`, null:
 * no limit). The official cloud server buys the missing seats; with no billing here to buy them
 * from, both variants refuse, self-hosted in the official self-hosted words.
 */
export async function smSeatError(db: Executor, org: OrganizationRow, adding: number, selfHosted: boolean): Promise<string | null> {
  if (org.sm_seats === null || adding === 0) return null;
  const used = await countOccupiedSeats(db, org.id, { secretsManager: true });
  if (used + adding <= org.sm_seats) return null;
  return selfHosted ? 'Cannot autoscale on a self-hosted instance.' : 'Secrets Manager seat limit has been reached.';
}

const isExempt = (type: OrganizationUserType) => type === OrganizationUserType.Owner || type === OrganizationUserType.Admin;

const MESSAGES = {
  accept: {
    freeAdmin: 'You can only be an admin of one free organization.',
    twoFactor: 'You cannot join this organization until you enable two-step login on your user account.',
    singleOrg: 'You may not join this organization until you leave or remove all other organizations.',
    otherSingleOrg: 'You cannot join this organization because you are a member of an organization which forbids it.',
  },
  confirm: {
    freeAdmin: 'User can only be an admin of one free organization.',
    twoFactor: 'User does not have two-step login enabled.',
    singleOrg: 'User is a member of another organization.',
    otherSingleOrg: 'User is a member of an organization which forbids joining another organization.',
  },
} as const;

/**
 * The organization policies that decide whether an account may join (accept) or be given
 * access (confirm, restore). Owners and admins are exempt, as in the official server.
 */
export async function joinPolicyError(
  db: Executor,
  org: OrganizationRow,
  member: { id: string; type: OrganizationUserType },
  userId: string,
  stage: 'accept' | 'confirm',
): Promise<string | null> {
  const text = MESSAGES[stage];
  if ((org.plan_type as PlanType) === PlanType.Free && isExempt(member.type) && (await countFreeOrgAdminships(db, userId, org.id, PlanType.Free)) > 0) {
    return text.freeAdmin;
  }
  if (isExempt(member.type)) return null;
  const twoFactor = await findPolicy(db, org.id, PolicyType.TwoFactorAuthentication);
  if (twoFactor && twoFactor.enabled && !(await usersWithTwoFactor(db, [userId])).has(userId)) return text.twoFactor;

  const memberships = (await membershipsOfUser(db, userId)).filter((m) => m.organization_id !== org.id);
  // Accepting counts every other membership; confirming ignores invitations the user has not taken up.
  const others = stage === 'accept' ? memberships : memberships.filter((m) => m.status !== OrganizationUserStatusType.Invited);
  const singleOrg = await findPolicy(db, org.id, PolicyType.SingleOrg);
  if (singleOrg && singleOrg.enabled && others.length > 0) return text.singleOrg;

  // Another organization's policy binds the user where they have access (accepted or confirmed,
  // not revoked) and that organization is enabled and uses policies; its owners and admins are exempt.
  const binding = [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed];
  const forbidding = new Set((await policiesOfMemberships(db, userId, binding, PolicyType.SingleOrg)).map((p) => p.organization_id));
  const blocked = memberships.some((m) => forbidding.has(m.organization_id) && !isExempt(m.type) && binding.includes(m.status));
  return blocked ? text.otherSingleOrg : null;
}
