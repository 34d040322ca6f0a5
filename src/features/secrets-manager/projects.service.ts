import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { mergedIds } from '../../http/ids.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { deleteProjects, findProject, insertCreatorPolicy, insertProject, projectsByIds, projectsOfOrganization, renameProject, touchSecretsOfProjects } from './projects.repository.js';
import { toProjectResponse, type ProjectBody, type ProjectRow } from './projects.schemas.js';
import { resultsPerId } from './sm-schemas.js';
import { accessTo, actorOf, ALL_RIGHTS, bulkAccess, projectRights, requireSmStanding, type Rights, type SmAccess, smAccessIn, type SmCaller, type SmStanding } from './sm-access.js';
import { touchSecretsManager, touchServiceAccounts, touchServiceAccountsReaching } from './sm-revisions.js';

function projectEvent(standing: SmStanding, type: EventType, project: ProjectRow): AuditEvent {
  return { type, organizationId: project.organization_id, projectId: project.id, ...actorOf(standing) };
}

export function createProjectService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;

  /** The project with the caller's access to it; 404 when it is missing or they lack `need`. */
  async function projectWith(principal: Principal, id: string, need: keyof Rights): Promise<{ project: ProjectRow; access: SmAccess; rights: Rights }> {
    const { row: project, access, rights } = await accessTo(db, principal, await findProject(db, id), (a, p) => projectRights(a, p.id), need);
    return { project, access, rights };
  }

  /** The project with the caller's access to it; 404 when it is missing or they cannot read it. */
  const readable = (principal: Principal, id: string) => projectWith(principal, id, 'read');

  return {
    readable,

    async list({ principal }: SmCaller, organizationId: string) {
      const access = await smAccessIn(db, principal, organizationId);
      const projects = await projectsOfOrganization(db, organizationId);
      return projects.flatMap((p) => {
        const rights = projectRights(access, p.id);
        return rights.read ? [toProjectResponse(p, rights)] : [];
      });
    },

    async get({ principal }: SmCaller, id: string) {
      const { project, rights } = await readable(principal, id);
      return toProjectResponse(project, rights);
    },

    /**
     * Admins, members and machine accounts may create projects. A creator who is not an admin
     * receives read and write on it, as the official server grants, or could not see it.
     */
    async create({ principal, client }: SmCaller, organizationId: string, body: ProjectBody) {
      const standing = await requireSmStanding(db, principal, organizationId);
      const now = clock.now().toISOString();
      const row: ProjectRow = { id: randomUUID(), organization_id: organizationId, name: body.name, creation_date: now, revision_date: now };
      await db.transaction().execute(async (tx) => {
        await insertProject(tx, row);
        await touchSecretsManager(tx, organizationId);
        if (standing.kind !== 'admin') {
          await insertCreatorPolicy(tx, {
            id: randomUUID(),
            organization_user_id: standing.kind === 'member' ? standing.organizationUserId : null,
            service_account_id: standing.kind === 'serviceAccount' ? standing.serviceAccountId : null,
            group_id: null,
            granted_project_id: row.id,
            granted_service_account_id: null,
            granted_secret_id: null,
            read: true,
            write: true,
            creation_date: now,
            revision_date: now,
          });
        }
        if (standing.kind === 'serviceAccount') await touchServiceAccounts(tx, [standing.serviceAccountId], now);
        await audit.record(tx, client, projectEvent(standing, EventType.Project_Created, row));
      });
      return toProjectResponse(row, ALL_RIGHTS);
    },

    async update({ principal, client }: SmCaller, id: string, body: ProjectBody) {
      const { project, access } = await projectWith(principal, id, 'write');
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await renameProject(tx, project.id, body.name, now);
        await touchSecretsManager(tx, project.organization_id);
        // Machine accounts see the project's name with its secrets.
        await touchServiceAccountsReaching(tx, { projectIds: [project.id] }, now);
        await audit.record(tx, client, projectEvent(access.standing, EventType.Project_Edited, project));
      });
      return toProjectResponse({ ...project, name: body.name, revision_date: now }, ALL_RIGHTS);
    },

    /** Deletes the projects the caller may write; one result per id, as `bulkAccess` describes. */
    async delete({ principal, client }: SmCaller, ids: readonly string[]) {
      const wanted = mergedIds(ids);
      const projects = await projectsByIds(db, wanted);
      const bulk = await bulkAccess(db, principal, wanted, projects, (access, p) => projectRights(access, p.id));
      const doomed = bulk?.writable ?? [];
      if (bulk && doomed.length > 0) {
        const { standing } = bulk.access;
        const ids = doomed.map((p) => p.id);
        const now = clock.now().toISOString();
        await db.transaction().execute(async (tx) => {
          // Before the delete: its policies, which say who reached it, go with it.
          await touchServiceAccountsReaching(tx, { projectIds: ids }, now);
          // Its secrets lose their project: clients comparing revision dates must see them change.
          await touchSecretsOfProjects(tx, ids, now);
          await deleteProjects(tx, ids);
          await touchSecretsManager(tx, standing.organizationId);
          await audit.record(tx, client, doomed.map((p) => projectEvent(standing, EventType.Project_Deleted, p)));
        });
      }
      return resultsPerId(wanted, doomed);
    },
  };
}

export type ProjectService = ReturnType<typeof createProjectService>;
