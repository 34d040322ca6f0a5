import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../http/access.js';
import { NotFound, Unauthorized } from '../../http/errors.js';
import { callerOf, type Caller } from '../../http/request-context.js';
import type { Executor } from '../../db/database.js';
import { confirmedMembership, type Membership } from '../../platform/access/org-access.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

/**
 * Who is acting in an organization's Secrets Manager, as the official server's access-client
 * types see it:
 * - `admin`: an owner or admin with Secrets Manager access; sees and manages everything;
 * - `member`: any other member with Secrets Manager access; reaches what access policies grant
 *   their membership and their groups;
 * - `serviceAccount`: a machine account of the organization; reaches what policies grant it.
 */
export type SmStanding =
  | { kind: 'admin'; organizationId: string; userId: string; organizationUserId: string }
  | { kind: 'member'; organizationId: string; userId: string; organizationUserId: string; groupIds: readonly string[] }
  | { kind: 'serviceAccount'; organizationId: string; serviceAccountId: string };

export interface Rights {
  read: boolean;
  write: boolean;
}

const NO_RIGHTS: Rights = Object.freeze({ read: false, write: false });
export const ALL_RIGHTS: Rights = Object.freeze({ read: true, write: true });

/** Highest wins: a grant through a group adds to the membership's own. */
function union(a: Rights | undefined, b: Rights): Rights {
  return a ? { read: a.read || b.read, write: a.write || b.write } : b;
}

/**
 * Who acts in Secrets Manager: a user or a machine account, as its token says. Its standing in
 * an organization (`SmStanding`) is read by the use case, which knows the organization.
 */
export type SmCaller = Caller<{ principal: Principal }>;

/** The caller of a Secrets Manager route. */
export function smCaller(request: FastifyRequest): SmCaller {
  if (!request.principal) throw new Unauthorized();
  return callerOf(request, { principal: request.principal });
}

/**
 * The caller's standing in `organizationId`'s Secrets Manager, or null when they have none
 * (not a confirmed member, no `accessSecretsManager`, an organization without Secrets Manager
 * or disabled, another organization's machine account). Callers answer null with 404.
 */
export async function smStandingOf(db: Executor, principal: Principal, organizationId: string): Promise<SmStanding | null> {
  if (principal.kind === 'serviceAccount') {
    // The token's resolver already checked that the account, its token and the organization stand.
    return principal.organizationId === organizationId ? { kind: 'serviceAccount', organizationId, serviceAccountId: principal.serviceAccountId } : null;
  }
  if (principal.kind !== 'user') return null;
  const membership = await confirmedMembership(db, organizationId, principal.userId);
  return membership ? memberStanding(db, membership) : null;
}

/** The Secrets Manager standing of a membership a use case has already read (see `smStandingOf`). */
export async function memberStanding(db: Executor, membership: Membership): Promise<SmStanding | null> {
  if (!membership.accessSecretsManager || !membership.organizationUsesSecretsManager) return null;
  const base = { organizationId: membership.organizationId, userId: membership.userId, organizationUserId: membership.id };
  if (membership.type === OrganizationUserType.Owner || membership.type === OrganizationUserType.Admin) return { kind: 'admin', ...base };
  const groups = await db.selectFrom('group_users').select('group_id').where('organization_user_id', '=', membership.id).execute();
  return { kind: 'member', ...base, groupIds: groups.map((g) => g.group_id) };
}

/** `smStandingOf`, or 404 exactly as for a resource that does not exist. */
export async function requireSmStanding(db: Executor, principal: Principal, organizationId: string): Promise<SmStanding> {
  const standing = await smStandingOf(db, principal, organizationId);
  if (!standing) throw new NotFound();
  return standing;
}

/** What the access policies naming a caller grant it, per granted resource. */
export interface Grants {
  projects: ReadonlyMap<string, Rights>;
  secrets: ReadonlyMap<string, Rights>;
  serviceAccounts: ReadonlyMap<string, Rights>;
}

const EMPTY_GRANTS: Grants = { projects: new Map(), secrets: new Map(), serviceAccounts: new Map() };

/**
 * Every policy naming the caller (their membership and groups, or the machine account), in one
 * query, whatever the number of resources. Admins need none: they reach everything.
 */
async function grantsOf(db: Executor, standing: SmStanding): Promise<Grants> {
  if (standing.kind === 'admin') return EMPTY_GRANTS;
  const rows = await db
    .selectFrom('access_policies')
    .select(['granted_project_id', 'granted_secret_id', 'granted_service_account_id', 'read', 'write'])
    .where((eb) =>
      standing.kind === 'serviceAccount'
        ? eb('service_account_id', '=', standing.serviceAccountId)
        : eb.or([
            eb('organization_user_id', '=', standing.organizationUserId),
            ...(standing.groupIds.length > 0 ? [eb('group_id', 'in', standing.groupIds)] : []),
          ]),
    )
    .execute();
  const projects = new Map<string, Rights>();
  const secrets = new Map<string, Rights>();
  const serviceAccounts = new Map<string, Rights>();
  for (const row of rows) {
    const rights = { read: Boolean(row.read), write: Boolean(row.write) };
    if (row.granted_project_id) projects.set(row.granted_project_id, union(projects.get(row.granted_project_id), rights));
    else if (row.granted_secret_id) secrets.set(row.granted_secret_id, union(secrets.get(row.granted_secret_id), rights));
    else if (row.granted_service_account_id) serviceAccounts.set(row.granted_service_account_id, union(serviceAccounts.get(row.granted_service_account_id), rights));
  }
  return { projects, secrets, serviceAccounts };
}

/** A caller's standing with the grants that decide its access, read once per request. */
export interface SmAccess {
  standing: SmStanding;
  grants: Grants;
}

export async function smAccessOf(db: Executor, standing: SmStanding): Promise<SmAccess> {
  return { standing, grants: await grantsOf(db, standing) };
}

/** The caller's standing and grants in an organization's Secrets Manager (404 without). */
export async function smAccessIn(db: Executor, principal: Principal, organizationId: string): Promise<SmAccess> {
  return smAccessOf(db, await requireSmStanding(db, principal, organizationId));
}

/**
 * The caller's access to one row addressed by id, which must give `need`: 404, exactly as for a
 * missing id, when there is no row, the caller has no standing in its organization or lacks the
 * right. Call it before any check of the request body that could answer 400, so that answer
 * cannot tell an outsider the id exists.
 */
export async function accessTo<T extends { organization_id: string }>(
  db: Executor,
  principal: Principal,
  row: T | undefined,
  rightsOf: (access: SmAccess, row: T) => Rights,
  need: keyof Rights,
): Promise<{ row: T; access: SmAccess; rights: Rights }> {
  if (!row) throw new NotFound();
  const access = await smAccessIn(db, principal, row.organization_id);
  const rights = rightsOf(access, row);
  if (!rights[need]) throw new NotFound();
  return { row, access, rights };
}

/** Access to a project: admins everything, others what a policy on it grants. */
export function projectRights(access: SmAccess, projectId: string): Rights {
  if (access.standing.kind === 'admin') return ALL_RIGHTS;
  return access.grants.projects.get(projectId) ?? NO_RIGHTS;
}

/** Access to a secret: through its project's policies and the policies on the secret itself. */
export function secretRights(access: SmAccess, secret: { id: string; project_id: string | null }): Rights {
  if (access.standing.kind === 'admin') return ALL_RIGHTS;
  const direct = access.grants.secrets.get(secret.id) ?? NO_RIGHTS;
  return secret.project_id ? union(direct, projectRights(access, secret.project_id)) : direct;
}

/**
 * What decides `secretRights` for every secret, as text: two callers with equal keys have equal
 * rights on every secret. Keys the cached answers (sm-answers.ts), so that a grant or a group
 * membership that changes moves the key, not the organization's revision.
 */
export function secretAccessKey(access: SmAccess): string {
  if (access.standing.kind === 'admin') return 'admin';
  const part = (grants: ReadonlyMap<string, Rights>) =>
    [...grants]
      .map(([id, rights]) => `${id}:${rights.read ? 'r' : ''}${rights.write ? 'w' : ''}`)
      .sort()
      .join(',');
  return `projects=${part(access.grants.projects)};secrets=${part(access.grants.secrets)}`;
}

/**
 * Access to a machine account: admins everything, members what a people policy on it grants
 * (always read and write), machine accounts nothing (they do not manage machine accounts).
 */
export function serviceAccountRights(access: SmAccess, serviceAccountId: string): Rights {
  if (access.standing.kind === 'admin') return ALL_RIGHTS;
  if (access.standing.kind === 'serviceAccount') return NO_RIGHTS;
  return access.grants.serviceAccounts.get(serviceAccountId) ?? NO_RIGHTS;
}

/** Who acted, as an audit event records it: the user, or the machine account. */
export function actorOf(standing: SmStanding): { actingUserId: string | null; serviceAccountId: string | null } {
  return standing.kind === 'serviceAccount' ? { actingUserId: null, serviceAccountId: standing.serviceAccountId } : { actingUserId: standing.userId, serviceAccountId: null };
}

/** Who changed a value, as a secret version records it: the membership, or the machine account. */
export function editorOf(standing: SmStanding): { editor_organization_user_id: string | null; editor_service_account_id: string | null } {
  return standing.kind === 'serviceAccount'
    ? { editor_organization_user_id: null, editor_service_account_id: standing.serviceAccountId }
    : { editor_organization_user_id: standing.organizationUserId, editor_service_account_id: null };
}

/**
 * The standing a bulk delete acts with, and the rows among `found` it may write. One call acts in
 * one organization: a machine account's own, otherwise that of the first requested id that
 * exists. Each id that does not exist, is of another organization, or that the caller may not
 * write is answered "access denied" on its own and the others are still processed (spec Errors
 * rule 3); the whole call never fails for one id, so the answers do not tell an outsider which
 * ids exist. Null: the caller acts nowhere.
 */
export async function bulkAccess<T extends { id: string; organization_id: string }>(
  db: Executor,
  principal: Principal,
  requested: readonly string[],
  found: readonly T[],
  rightsOf: (access: SmAccess, row: T) => Rights,
): Promise<{ access: SmAccess; writable: T[] } | null> {
  const orgOf = new Map(found.map((row) => [row.id, row.organization_id]));
  const first = requested.find((id) => orgOf.has(id));
  const organizationId = principal.kind === 'serviceAccount' ? principal.organizationId : first && orgOf.get(first);
  const standing = organizationId ? await smStandingOf(db, principal, organizationId) : null;
  if (!standing) return null;
  const access = await smAccessOf(db, standing);
  return { access, writable: found.filter((row) => row.organization_id === standing.organizationId && rightsOf(access, row).write) };
}
