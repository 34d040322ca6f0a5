import type { FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import type { AccessRule } from '../../http/access.js';
import { Forbidden, NotFound } from '../../http/errors.js';
import { isGuid } from '../../http/ids.js';
import { callerOf, type Caller } from '../../http/request-context.js';
import type { Executor } from '../../db/database.js';
import type { EventSystemUser } from '../audit/event-type.js';
import { confirmedInEnabledOrganizations } from './memberships.js';
import { OrganizationUserType, parsePermissions, rightsOf, type Permissions, type Right } from './roles.js';

/**
 * Who acts in an organization: the caller's confirmed membership, or (with `systemUser` set) the
 * organization itself through its API key, which acts as an owner with no membership and no
 * account of its own (see `organizationActor`).
 */
export interface Membership {
  /** The membership id; the empty string for the organization itself, which matches no member. */
  id: string;
  organizationId: string;
  /** The member's user id; the empty string for the organization itself, which matches no account. */
  userId: string;
  type: OrganizationUserType;
  permissions: Permissions | null;
  accessAll: boolean;
  accessSecretsManager: boolean;
  /** The organization's plan includes Secrets Manager (read with the membership, for Secrets Manager's `memberStanding`). */
  organizationUsesSecretsManager: boolean;
  rights: ReadonlySet<Right>;
  /** Set when the organization itself acts (the public API): its events name this system user and no acting user. */
  systemUser: EventSystemUser | null;
}

/**
 * The organization acting through its API key (the public API): the rights of an owner, access
 * to every collection, and no membership or account, so the rules about the caller's own
 * membership (removing or revoking oneself, joining a group) never match anyone. The official
 * server likewise treats the organization's token as an owner of it.
 */
export function organizationActor(organizationId: string, systemUser: EventSystemUser, usesSecretsManager: boolean): Membership {
  return {
    id: '',
    organizationId,
    userId: '',
    type: OrganizationUserType.Owner,
    permissions: null,
    accessAll: true,
    accessSecretsManager: false,
    organizationUsesSecretsManager: usesSecretsManager,
    rights: rightsOf(OrganizationUserType.Owner, null),
    systemUser,
  };
}

/** How an audit event names who acted: the member's user id, or the system user with no acting user. */
export function actingOf(membership: Membership): { actingUserId: string | null; systemUser: EventSystemUser | null } {
  return membership.systemUser === null ? { actingUserId: membership.userId, systemUser: null } : { actingUserId: null, systemUser: membership.systemUser };
}

declare module 'fastify' {
  interface FastifyRequest {
    membership: Membership | null;
  }
}

/** Only a Confirmed membership of an enabled organization counts: invited, accepted and revoked members have no access. */
export async function confirmedMembership(db: Executor, organizationId: string, userId: string): Promise<Membership | null> {
  // Access rules call this before the route's schema has checked the id: a NUL byte, for one,
  // would be a PostgreSQL error. Anything but a GUID names no organization.
  if (!isGuid(organizationId)) return null;
  const row = await confirmedInEnabledOrganizations(db)
    .select(['ou.id', 'ou.organization_id', 'ou.user_id', 'ou.type', 'ou.permissions', 'ou.access_all', 'ou.access_secrets_manager', 'o.use_secrets_manager'])
    .where('ou.organization_id', '=', organizationId)
    .where('ou.user_id', '=', userId)
    .executeTakeFirst();
  if (!row || !row.user_id) return null;
  const permissions = parsePermissions(row.permissions);
  return {
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    type: row.type,
    permissions,
    accessAll: Boolean(row.access_all),
    accessSecretsManager: Boolean(row.access_secrets_manager),
    organizationUsesSecretsManager: Boolean(row.use_secrets_manager),
    rights: rightsOf(row.type, permissions),
    systemUser: null,
  };
}

/** The membership an organization rule attached to this request. */
export function membershipOf(request: FastifyRequest): Membership {
  if (!request.membership) throw new NotFound();
  return request.membership;
}

/** An organization member (or the organization itself) acting through a request. */
export type MemberCaller = Caller<{ membership: Membership }>;

/** The caller of an organization route, as the membership its access rule resolved. */
export function memberCaller(request: FastifyRequest): MemberCaller {
  return callerOf(request, { membership: membershipOf(request) });
}

/**
 * Access rules for organization routes. A caller who is not a confirmed member gets 404,
 * exactly as for an organization that does not exist; a member without the right gets 403.
 */
export function createOrgAccess(db: Db) {
  function rule(name: string, rights: readonly Right[], param: string, onlyTypes?: readonly OrganizationUserType[]): AccessRule {
    return {
      name,
      principals: ['user'],
      scope: 'api',
      async authorize(request, principal) {
        if (principal.kind !== 'user') throw new NotFound();
        // `?name` reads the organization from the query string (the official GET /tasks/organization).
        const value = param.startsWith('?') ? (request.query as Record<string, unknown> | undefined)?.[param.slice(1)] : (request.params as Record<string, unknown>)[param];
        const organizationId = typeof value === 'string' ? value.toLowerCase() : '';
        const membership = organizationId ? await confirmedMembership(db, organizationId, principal.userId) : null;
        // Owners-only and admins-only routes hide the organization from everyone else, as the official server does.
        if (!membership || (onlyTypes && !onlyTypes.includes(membership.type))) throw new NotFound();
        if (rights.length > 0 && !rights.some((right) => membership.rights.has(right))) throw new Forbidden('You do not have permission to do this.');
        request.membership = membership;
      },
    };
  }
  return {
    /** Any confirmed member of the organization named by the `param` path parameter (`?name`: query parameter). */
    member: (param = 'orgId') => rule('orgMember', [], param),
    /** A confirmed member holding `right`. */
    right: (right: Right, param = 'orgId') => rule(`orgPermission(${right})`, [right], param),
    /** A confirmed member holding any of `rights`; the route decides what each one opens. */
    anyRight: (rights: readonly Right[], param = 'orgId') => rule(`orgPermission(${rights.join('|')})`, rights, param),
    /** A confirmed Owner; any other caller, member or not, gets 404 (the official integration routes). */
    owner: (param = 'orgId') => rule('orgOwner', [], param, [OrganizationUserType.Owner]),
    /** A confirmed Owner or Admin (the official OrganizationAdmin); anyone else, members included, gets 404. */
    admin: (param = 'orgId') => rule('orgAdmin', [], param, [OrganizationUserType.Owner, OrganizationUserType.Admin]),
  };
}

export type OrgAccess = ReturnType<typeof createOrgAccess>;
