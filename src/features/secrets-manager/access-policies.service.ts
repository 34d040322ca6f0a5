import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { applyChanges, checkRequests, diff, type GranteeList, replaceGrants, requireInOrganization, requireUser, serviceAccountsIn } from './access-policy-changes.js';
import {
  grantedProjectsOf,
  groupGrantees,
  memberGrantees,
  namedRowsOf,
  peoplePoliciesOn,
  projectGrantsOf,
  serviceAccountPoliciesOn,
  type GrantedColumn,
} from './access-policies.repository.js';
import type {
  PeopleAccessPoliciesBody,
  PotentialGrantee,
  ProjectServiceAccountsBody,
  SecretAccessPoliciesRequests,
  ServiceAccountGrantedPoliciesBody,
} from './access-policies.schemas.js';
import { findProject } from './projects.repository.js';
import { findSecret } from './secrets.repository.js';
import { findServiceAccount } from './service-accounts.repository.js';
import { actorOf, projectRights, secretRights, serviceAccountRights, type SmAccess, smAccessIn, type SmCaller } from './sm-access.js';
import { touchServiceAccounts } from './sm-revisions.js';

/** The user and group policies on a resource, as the web app lists them. */
async function peopleOn(db: Executor, granted: GrantedColumn, grantedId: string, currentUserId: string | null) {
  const rows = await peoplePoliciesOn(db, granted, grantedId, currentUserId);
  const userAccessPolicies = [];
  const groupAccessPolicies = [];
  for (const row of rows) {
    const rights = { read: Boolean(row.read), write: Boolean(row.write) };
    if (row.organization_user_id) {
      userAccessPolicies.push({
        object: 'userAccessPolicy' as const,
        ...rights,
        organizationUserId: row.organization_user_id,
        organizationUserName: row.user_name?.trim() ? row.user_name : (row.user_email ?? row.member_email),
        currentUser: currentUserId !== null && row.member_user_id === currentUserId,
      });
    } else if (row.group_id) {
      groupAccessPolicies.push({ object: 'groupAccessPolicy' as const, ...rights, groupId: row.group_id, groupName: row.group_name, currentUserInGroup: Boolean(row.current_user_in_group) });
    }
  }
  return { userAccessPolicies, groupAccessPolicies };
}

async function serviceAccountsOn(db: Executor, granted: 'granted_project_id' | 'granted_secret_id', grantedId: string) {
  const rows = await serviceAccountPoliciesOn(db, granted, grantedId);
  return rows.map((row) => ({
    object: 'serviceAccountProjectAccessPolicy' as const,
    read: Boolean(row.read),
    write: Boolean(row.write),
    serviceAccountId: row.id as string,
    serviceAccountName: row.name,
  }));
}

/**
 * Replaces a secret's own policies (members, groups, machine accounts) inside the secrets
 * service's transaction, when a secret is created or updated with `accessPoliciesRequests`.
 * The secrets service has already decided that the caller may write the secret. Validation is
 * the other policy routes': unique grantees, read required, grantees of the secret's
 * organization (else 404), and a machine account newly granted must be one the caller can write.
 */
export async function saveSecretAccessPolicies(
  tx: Executor,
  access: SmAccess,
  secret: { id: string; organizationId: string },
  requests: SecretAccessPoliciesRequests,
  now: string,
): Promise<void> {
  requireUser(access);
  const changes = await replaceGrants(
    tx,
    { organizationId: secret.organizationId, granted: 'granted_secret_id', grantedId: secret.id },
    [
      { field: 'accessPoliciesRequests.userAccessPolicyRequests', grantee: 'organization_user_id', requests: requests.userAccessPolicyRequests },
      { field: 'accessPoliciesRequests.groupAccessPolicyRequests', grantee: 'group_id', requests: requests.groupAccessPolicyRequests },
      { field: 'accessPoliciesRequests.serviceAccountAccessPolicyRequests', grantee: 'service_account_id', requests: requests.serviceAccountAccessPolicyRequests },
    ],
    { rule: 'read', now, mayGrant: (w) => w.grantee !== 'service_account_id' || serviceAccountRights(access, w.granteeId).write },
  );
  await touchServiceAccounts(tx, serviceAccountsIn(changes), now);
}

/** The member and group lists of a people-policy request. */
function peopleLists(body: PeopleAccessPoliciesBody): GranteeList[] {
  return [
    { field: 'userAccessPolicyRequests', grantee: 'organization_user_id', requests: body.userAccessPolicyRequests },
    { field: 'groupAccessPolicyRequests', grantee: 'group_id', requests: body.groupAccessPolicyRequests },
  ];
}

interface AccessPolicyServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
}

/** Access policies of projects, machine accounts and secrets, and who can be granted what. */
export function createAccessPolicyService({ db, clock, audit }: AccessPolicyServiceDeps) {
  /**
   * The project and a caller who may write it (people only), or 404: checked before anything in
   * the body is, so a caller who may not see the project learns nothing from a 400.
   */
  async function writableProject(principal: Principal, rawId: string) {
    const project = await findProject(db, normalizeGuid(rawId));
    if (!project) throw new NotFound();
    const access = await smAccessIn(db, principal, project.organization_id);
    const { userId } = requireUser(access);
    if (!projectRights(access, project.id).write) throw new NotFound();
    return { project, access, userId };
  }

  /** The machine account and a caller who may write it (people only), or 404, as above. */
  async function writableServiceAccount(principal: Principal, rawId: string) {
    const serviceAccount = await findServiceAccount(db, normalizeGuid(rawId));
    if (!serviceAccount) throw new NotFound();
    const access = await smAccessIn(db, principal, serviceAccount.organization_id);
    const { userId } = requireUser(access);
    if (!serviceAccountRights(access, serviceAccount.id).write) throw new NotFound();
    return { serviceAccount, access, userId };
  }

  async function grantedPolicies(access: SmAccess, serviceAccountId: string) {
    const rows = await grantedProjectsOf(db, serviceAccountId);
    return {
      object: 'ServiceAccountGrantedPoliciesPermissionDetails' as const,
      grantedProjectPolicies: rows.map((row) => ({
        object: 'grantedProjectAccessPolicyPermissionDetails' as const,
        accessPolicy: { object: 'grantedProjectAccessPolicy' as const, read: Boolean(row.read), write: Boolean(row.write), grantedProjectId: row.id, grantedProjectName: row.name },
        // Whether the caller could change this grant: write on the project and the account.
        hasPermission: projectRights(access, row.id).write && serviceAccountRights(access, serviceAccountId).write,
      })),
    };
  }

  return {
    async projectPeople({ principal }: SmCaller, projectId: string) {
      const { project, userId } = await writableProject(principal, projectId);
      return { object: 'projectPeopleAccessPolicies' as const, ...(await peopleOn(db, 'granted_project_id', project.id, userId)) };
    },

    async replaceProjectPeople({ principal }: SmCaller, projectId: string, body: PeopleAccessPoliciesBody) {
      const { project, userId } = await writableProject(principal, projectId);
      const now = clock.now().toISOString();
      await db.transaction().execute((tx) => replaceGrants(tx, { organizationId: project.organization_id, granted: 'granted_project_id', grantedId: project.id }, peopleLists(body), { rule: 'read', now }));
      return { object: 'projectPeopleAccessPolicies' as const, ...(await peopleOn(db, 'granted_project_id', project.id, userId)) };
    },

    async projectServiceAccounts({ principal }: SmCaller, projectId: string) {
      const { project } = await writableProject(principal, projectId);
      return { object: 'ProjectServiceAccountsAccessPolicies' as const, serviceAccountAccessPolicies: await serviceAccountsOn(db, 'granted_project_id', project.id) };
    },

    async replaceProjectServiceAccounts({ principal }: SmCaller, projectId: string, body: ProjectServiceAccountsBody) {
      const { project, access } = await writableProject(principal, projectId);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        const changes = await replaceGrants(
          tx,
          { organizationId: project.organization_id, granted: 'granted_project_id', grantedId: project.id },
          [{ field: 'serviceAccountAccessPolicyRequests', grantee: 'service_account_id', requests: body.serviceAccountAccessPolicyRequests }],
          // Granting needs write on the machine account; any write on the project may change or remove a grant.
          { rule: 'read', now, mayGrant: (w) => serviceAccountRights(access, w.granteeId).write },
        );
        await touchServiceAccounts(tx, serviceAccountsIn(changes), now);
      });
      return { object: 'ProjectServiceAccountsAccessPolicies' as const, serviceAccountAccessPolicies: await serviceAccountsOn(db, 'granted_project_id', project.id) };
    },

    async serviceAccountPeople({ principal }: SmCaller, serviceAccountId: string) {
      const { serviceAccount, userId } = await writableServiceAccount(principal, serviceAccountId);
      return { object: 'serviceAccountAccessPolicies' as const, ...(await peopleOn(db, 'granted_service_account_id', serviceAccount.id, userId)) };
    },

    async replaceServiceAccountPeople({ principal, client }: SmCaller, serviceAccountId: string, body: PeopleAccessPoliciesBody) {
      const { serviceAccount, access, userId } = await writableServiceAccount(principal, serviceAccountId);
      const now = clock.now().toISOString();
      const organizationId = serviceAccount.organization_id;
      await db.transaction().execute(async (tx) => {
        const changes = await replaceGrants(tx, { organizationId, granted: 'granted_service_account_id', grantedId: serviceAccount.id }, peopleLists(body), { rule: 'readWrite', now });
        const actor = actorOf(access.standing);
        const about = { organizationId, grantedServiceAccountId: serviceAccount.id, actingUserId: actor.actingUserId, serviceAccountId: actor.serviceAccountId };
        const events: AuditEvent[] = [
          ...changes.removed.map((row) =>
            row.group_id
              ? { ...about, type: EventType.ServiceAccount_GroupRemoved, groupId: row.group_id }
              : { ...about, type: EventType.ServiceAccount_UserRemoved, organizationUserId: row.organization_user_id },
          ),
          ...changes.added.map((w) =>
            w.grantee === 'group_id'
              ? { ...about, type: EventType.ServiceAccount_GroupAdded, groupId: w.granteeId }
              : { ...about, type: EventType.ServiceAccount_UserAdded, organizationUserId: w.granteeId },
          ),
        ];
        await audit.record(tx, client, events);
      });
      return { object: 'serviceAccountAccessPolicies' as const, ...(await peopleOn(db, 'granted_service_account_id', serviceAccount.id, userId)) };
    },

    async serviceAccountGrantedPolicies({ principal }: SmCaller, serviceAccountId: string) {
      const { serviceAccount, access } = await writableServiceAccount(principal, serviceAccountId);
      return grantedPolicies(access, serviceAccount.id);
    },

    async replaceServiceAccountGrantedPolicies({ principal }: SmCaller, serviceAccountId: string, body: ServiceAccountGrantedPoliciesBody) {
      const { serviceAccount, access } = await writableServiceAccount(principal, serviceAccountId);
      const projects = body.projectGrantedPolicyRequests.map((r) => ({ id: normalizeGuid(r.grantedId), read: r.read, write: r.write }));
      checkRequests('projectGrantedPolicyRequests', projects, 'read');
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await requireInOrganization(
          tx,
          'projects',
          serviceAccount.organization_id,
          projects.map((p) => p.id),
        );
        const wanted = projects.map((p) => ({
          grantee: 'service_account_id' as const,
          granteeId: serviceAccount.id,
          granted: 'granted_project_id' as const,
          grantedId: p.id,
          read: p.read,
          write: p.write,
        }));
        const changes = diff(await projectGrantsOf(tx, serviceAccount.id), wanted);
        // Every project whose grant is created, changed or removed needs the caller's write.
        const touched = [...changes.added.map((w) => w.grantedId), ...changes.changed.map((c) => c.want.grantedId), ...changes.removed.map((r) => r.granted_project_id)];
        if (touched.some((projectId) => projectId === null || !projectRights(access, projectId).write)) throw new NotFound();
        await applyChanges(tx, changes, now);
        // Its revision moves only when its grants do.
        if (touched.length > 0) await touchServiceAccounts(tx, [serviceAccount.id], now);
      });
      return grantedPolicies(access, serviceAccount.id);
    },

    async secretAccessPolicies({ principal }: SmCaller, secretId: string) {
      const secret = await findSecret(db, normalizeGuid(secretId));
      if (!secret) throw new NotFound();
      const access = await smAccessIn(db, principal, secret.organization_id);
      const { userId } = requireUser(access);
      if (!secretRights(access, secret).write) throw new NotFound();
      return {
        object: 'secretAccessPolicies' as const,
        ...(await peopleOn(db, 'granted_secret_id', secret.id, userId)),
        serviceAccountAccessPolicies: await serviceAccountsOn(db, 'granted_secret_id', secret.id),
      };
    },

    /** Members with Secrets Manager access and the organization's groups, to people only. */
    async peoplePotentialGrantees({ principal }: SmCaller, organizationId: string): Promise<PotentialGrantee[]> {
      const access = await smAccessIn(db, principal, normalizeGuid(organizationId));
      // A machine account manages no policies, so it may not enumerate the members and their emails.
      const { userId: currentUserId } = requireUser(access);
      const members = await memberGrantees(db, access.standing.organizationId);
      const groups = await groupGrantees(db, access.standing.organizationId, currentUserId);
      return [
        ...members.map((m) => ({
          object: 'potentialGrantee' as const,
          id: m.id,
          name: m.name,
          type: 'user' as const,
          email: m.email,
          currentUserInGroup: false,
          currentUser: m.user_id === currentUserId,
        })),
        ...groups.map((g) => ({
          object: 'potentialGrantee' as const,
          id: g.id,
          name: g.name,
          type: 'group' as const,
          email: null,
          currentUserInGroup: Boolean(g.current_user_in_group),
          currentUser: false,
        })),
      ];
    },

    /** The machine accounts the caller can write (and so grant access to). */
    async serviceAccountPotentialGrantees({ principal }: SmCaller, organizationId: string): Promise<PotentialGrantee[]> {
      const access = await smAccessIn(db, principal, normalizeGuid(organizationId));
      const ids = access.standing.kind === 'admin' ? 'all' : [...access.grants.serviceAccounts].filter(([id]) => serviceAccountRights(access, id).write).map(([id]) => id);
      const rows = await namedRowsOf(db, 'service_accounts', access.standing.organizationId, ids);
      return rows.map((r) => ({ object: 'potentialGrantee' as const, id: r.id, name: r.name, type: 'serviceAccount' as const, email: null, currentUserInGroup: false, currentUser: false }));
    },

    /** The projects the caller can write. */
    async projectPotentialGrantees({ principal }: SmCaller, organizationId: string): Promise<PotentialGrantee[]> {
      const access = await smAccessIn(db, principal, normalizeGuid(organizationId));
      const ids = access.standing.kind === 'admin' ? 'all' : [...access.grants.projects].filter(([, rights]) => rights.write).map(([id]) => id);
      const rows = await namedRowsOf(db, 'projects', access.standing.organizationId, ids);
      return rows.map((r) => ({ object: 'potentialGrantee' as const, id: r.id, name: r.name, type: 'project' as const, email: null, currentUserInGroup: false, currentUser: false }));
    },
  };
}

export type AccessPolicyService = ReturnType<typeof createAccessPolicyService>;
