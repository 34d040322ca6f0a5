import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { chunks } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import { projectsOfOrganization } from './projects.repository.js';
import { listSecrets } from './secrets.repository.js';
import { requireSmCaller } from './sm-access.js';
import { MAX_IMPORT_PROJECTS, MAX_IMPORT_SECRETS, type ImportBody } from './sm-porting.schemas.js';
import { touchSecretsManager } from './sm-revisions.js';

/** Rows per insert statement, well under SQLite's bound-parameter limit. */
const INSERT_BATCH = 50;

/**
 * Export and import of an organization's Secrets Manager data in the official format, for
 * owners and admins with Secrets Manager access (others get 404, as the official server answers).
 */
export function createSmPortingService({ db, clock }: { db: Db; clock: Clock }) {
  async function requireAdmin(principal: Principal, organizationId: string): Promise<void> {
    const caller = await requireSmCaller(db, principal, organizationId);
    if (caller.kind !== 'admin') throw new NotFound();
  }

  return {
    async exportData(principal: Principal, rawOrganizationId: string) {
      const organizationId = normalizeGuid(rawOrganizationId);
      await requireAdmin(principal, organizationId);
      const projects = await projectsOfOrganization(db, organizationId);
      const secrets = await listSecrets(db, organizationId);
      return {
        object: 'SecretsManagerExportResponseModel' as const,
        projects: projects.map((p) => ({ id: p.id, name: p.name })),
        secrets: secrets.map((s) => ({ id: s.id, key: s.key, value: s.value, note: s.note, projectIds: s.project_id ? [s.project_id] : [] })),
      };
    },

    /**
     * Adds the import's projects and secrets under new ids (the import's ids only say which
     * secret is in which project), all in one transaction. No events, as the official server.
     */
    async importData(principal: Principal, rawOrganizationId: string, body: ImportBody): Promise<void> {
      const organizationId = normalizeGuid(rawOrganizationId);
      await requireAdmin(principal, organizationId);
      const projects = body.projects ?? [];
      const secrets = body.secrets ?? [];
      if (projects.length > MAX_IMPORT_PROJECTS || secrets.length > MAX_IMPORT_SECRETS) {
        throw BadRequest.field(
          projects.length > MAX_IMPORT_PROJECTS ? 'projects' : 'secrets',
          `You cannot import this much data at once, the limit is ${MAX_IMPORT_PROJECTS} projects and ${MAX_IMPORT_SECRETS} secrets.`,
        );
      }
      const newProjectIds = new Map<string, string>();
      projects.forEach((p, i) => {
        const id = normalizeGuid(p.id);
        if (newProjectIds.has(id)) throw BadRequest.field(`projects[${i}].id`, 'A project id appears twice in the import.');
        newProjectIds.set(id, randomUUID());
      });
      const now = clock.now().toISOString();
      const secretRows = secrets.map((s, i) => {
        if (s.projectIds.length > 1) throw BadRequest.field(`secrets[${i}].projectIds`, 'A secret can only be in one project at a time.');
        const [projectId] = s.projectIds;
        const newProjectId = projectId === undefined ? null : newProjectIds.get(normalizeGuid(projectId));
        if (newProjectId === undefined) throw BadRequest.field(`secrets[${i}].projectIds`, 'The project is not part of this import.');
        return { id: randomUUID(), organization_id: organizationId, project_id: newProjectId, key: s.key, value: s.value, note: s.note, creation_date: now, revision_date: now, deleted_date: null };
      });
      const projectRows = projects.map((p) => ({
        id: newProjectIds.get(normalizeGuid(p.id)) as string,
        organization_id: organizationId,
        name: p.name,
        creation_date: now,
        revision_date: now,
      }));
      await db.transaction().execute(async (tx) => {
        for (const part of chunks(projectRows, INSERT_BATCH)) await tx.insertInto('projects').values(part).execute();
        for (const part of chunks(secretRows, INSERT_BATCH)) await tx.insertInto('secrets').values(part).execute();
        await touchSecretsManager(tx, organizationId);
      });
    },
  };
}

export type SmPortingService = ReturnType<typeof createSmPortingService>;
