import type { FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import type { AccessRule } from '../../http/access.js';
import { Forbidden, NotFound } from '../../http/errors.js';
import { isGuid } from '../../http/ids.js';
import type { Executor } from '../../db/database.js';
import type { EventSystemUser } from '../audit/event-type.js';
import { OrganizationUserStatusType, OrganizationUserType, parsePermissions, rightsOf, type Permissions, type Right } from './roles.js';

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
  /** The organization's plan includes Secrets Manager (read with the membership, for `smCaller`). */
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

/** Only a Confirmed membership counts: invited, accepted and revoked members have no access. */
export async function confirmedMembership(db: Executor, organizationId: string, userId: string): Promise<Membership | null> {
  // Access rules call this before the route's schema has checked the id: a NUL byte, for one,
  // would be a PostgreSQL error. Anything but a GUID names no organization.
  if (!isGuid(organizationId)) return null;
  const row = await db
    .selectFrom('organization_users')
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .select([
      'organization_users.id',
      'organization_users.organization_id',
      'organization_users.user_id',
      'organization_users.type',
      'organization_users.permissions',
      'organization_users.access_all',
      'organization_users.access_secrets_manager',
      'organizations.enabled',
      'organizations.use_secrets_manager',
    ])
    .where('organization_users.organization_id', '=', organizationId)
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.status', '=', OrganizationUserStatusType.Confirmed)
    .executeTakeFirst();
  if (!row || !row.user_id || !row.enabled) return null;
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

/**
 * Access rules for organization routes. A caller who is not a confirmed member gets 404,
 * exactly as for an organization that does not exist; a member without the right gets 403.
 */
export function createOrgAccess(db: Db) {
  function rule(name: string, rights: readonly Right[], param: string, ownersOnly = false): AccessRule {
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
        // Owners-only routes hide the organization from everyone else, as the official server does.
        if (!membership || (ownersOnly && membership.type !== OrganizationUserType.Owner)) throw new NotFound();
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
    owner: (param = 'orgId') => rule('orgOwner', [], param, true),
  };
}

export type OrgAccess = ReturnType<typeof createOrgAccess>;

export interface CollectionGrant {
  readOnly: boolean;
  hidePasswords: boolean;
  manage: boolean;
}

/** What access-all (and the Manager role on its collections) gives: edit, see and manage. */
export const FULL_ACCESS: CollectionGrant = Object.freeze({ readOnly: false, hidePasswords: false, manage: true });

/** Highest wins: writable if any grant is, passwords shown if any shows them, manage if any manages. */
export function highest(a: CollectionGrant | undefined, b: CollectionGrant): CollectionGrant {
  if (!a) return b;
  return { readOnly: a.readOnly && b.readOnly, hidePasswords: a.hidePasswords && b.hidePasswords, manage: a.manage || b.manage };
}

/**
 * What memberships reach through their own and their groups' collection grants: per collection,
 * the highest access among those grants; and which of the memberships are in a group with
 * access to all collections. The two readers below add what the membership itself gives.
 */
export async function directAndGroupGrants(
  db: Executor,
  memberIds: readonly string[],
): Promise<{ grants: Map<string, CollectionGrant>; inAllAccessGroup: Set<string> }> {
  const direct = db
    .selectFrom('collection_users')
    .select(['collection_id', 'read_only', 'hide_passwords', 'manage'])
    .where('organization_user_id', 'in', memberIds);
  const viaGroups = db
    .selectFrom('collection_groups')
    .innerJoin('group_users', 'group_users.group_id', 'collection_groups.group_id')
    .select(['collection_groups.collection_id', 'collection_groups.read_only', 'collection_groups.hide_passwords', 'collection_groups.manage'])
    .where('group_users.organization_user_id', 'in', memberIds);
  const grants = new Map<string, CollectionGrant>();
  for (const row of await direct.unionAll(viaGroups).execute()) {
    const grant = { readOnly: Boolean(row.read_only), hidePasswords: Boolean(row.hide_passwords), manage: Boolean(row.manage) };
    grants.set(row.collection_id, highest(grants.get(row.collection_id), grant));
  }
  const allAccess = await db
    .selectFrom('groups')
    .innerJoin('group_users', 'group_users.group_id', 'groups.id')
    .select('group_users.organization_user_id')
    .where('group_users.organization_user_id', 'in', memberIds)
    .where('groups.access_all', '=', true)
    .execute();
  return { grants, inAllAccessGroup: new Set(allAccess.map((r) => r.organization_user_id)) };
}

/** Access to all collections, from the membership or one of its groups, and the legacy Manager role, give full access. */
export function fullAccessFrom(membership: { id: string; accessAll: boolean; type: OrganizationUserType }, inAllAccessGroup: ReadonlySet<string>) {
  return {
    toAll: membership.accessAll || inAllAccessGroup.has(membership.id),
    // The legacy Manager role manages, and so edits and sees, every collection it is assigned.
    toAssigned: membership.type === OrganizationUserType.Manager,
  };
}

/** The collections one membership reaches, with its access to each (see directAndGroupGrants and fullAccessFrom). */
export async function collectionGrants(db: Executor, membership: Pick<Membership, 'id' | 'organizationId' | 'accessAll' | 'type'>): Promise<Map<string, CollectionGrant>> {
  const { grants, inAllAccessGroup } = await directAndGroupGrants(db, [membership.id]);
  const full = fullAccessFrom(membership, inAllAccessGroup);
  if (full.toAll) {
    const all = await db.selectFrom('collections').select('id').where('organization_id', '=', membership.organizationId).execute();
    return new Map(all.map(({ id }) => [id, FULL_ACCESS]));
  }
  if (full.toAssigned) for (const id of grants.keys()) grants.set(id, FULL_ACCESS);
  return grants;
}

/**
 * The users who see items in any of `collectionIds` of an organization, in one query: its
 * confirmed members (of an enabled organization) with access to all collections, from the
 * membership or one of its groups, or with a direct or group grant on one of them, as
 * collectionsForUser reaches them. Organization item pushes go to these users.
 */
export async function usersReachingCollections(db: Executor, organizationId: string, collectionIds: readonly string[]): Promise<string[]> {
  const ids = [...new Set(collectionIds)];
  const rows = await db
    .selectFrom('organization_users as ou')
    .innerJoin('organizations as o', 'o.id', 'ou.organization_id')
    .select('ou.user_id')
    .distinct()
    .where('ou.organization_id', '=', organizationId)
    .where('ou.status', '=', OrganizationUserStatusType.Confirmed)
    .where('ou.user_id', 'is not', null)
    .where('o.enabled', '=', true)
    .where((eb) => {
      const terms = [
        eb('ou.access_all', '=', true),
        eb.exists(
          eb
            .selectFrom('group_users as gu')
            .innerJoin('groups as g', 'g.id', 'gu.group_id')
            .select('gu.group_id')
            .whereRef('gu.organization_user_id', '=', 'ou.id')
            .where('g.access_all', '=', true),
        ),
      ];
      if (ids.length > 0) {
        terms.push(
          eb.exists(eb.selectFrom('collection_users as cu').select('cu.collection_id').whereRef('cu.organization_user_id', '=', 'ou.id').where('cu.collection_id', 'in', ids)),
          eb.exists(
            eb
              .selectFrom('group_users as gu2')
              .innerJoin('collection_groups as cg', 'cg.group_id', 'gu2.group_id')
              .select('cg.collection_id')
              .whereRef('gu2.organization_user_id', '=', 'ou.id')
              .where('cg.collection_id', 'in', ids),
          ),
        );
      }
      return eb.or(terms);
    })
    .orderBy('ou.user_id')
    .execute();
  return rows.flatMap((r) => (r.user_id ? [r.user_id] : []));
}
