import { randomUUID } from 'node:crypto';
import type { Insertable, Transaction } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { DB, ProjectsTable, SecretsTable } from '../../db/schema.js';
import { chunks } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import { projectsOfOrganization } from './projects.repository.js';
import { listSecrets } from './secrets.repository.js';
import { requireSmStanding, type SmCaller } from './sm-access.js';
import { MAX_IMPORT_PROJECTS, MAX_IMPORT_SECRETS, type ImportBody } from './sm-porting.schemas.js';
import { touchSecretsManager } from './sm-revisions.js';
import { createWorkQueue, mapInSlices, yieldToLoop } from '../../shared/work-slices.js';

/** Rows per insert statement, well under SQLite's bound-parameter limit. */
const INSERT_BATCH = 50;
type ProjectRow = Insertable<ProjectsTable> & { id: string };
type SecretRow = Insertable<SecretsTable> & { id: string };

/** Rows written per transaction: a few milliseconds of the database, between which others' requests run. */
const ROWS_PER_SLICE = 500;

/**
 * Export and import of an organization's Secrets Manager data in the official format, for
 * owners and admins with Secrets Manager access (others get 404, as the official server answers).
 */
export function createSmPortingService({ db, clock }: { db: Db; clock: Clock }) {
  const queue = createWorkQueue({ concurrency: 2, queueLimit: 32, busy: 'The server is busy with other imports. Try again in a moment.' });

  /**
   * Writes the rows ROWS_PER_SLICE to a transaction, projects first, with the event loop let go
   * between slices; should a later slice fail, the rows already written are deleted again.
   */
  async function write(organizationId: string, projectRows: readonly ProjectRow[], secretRows: readonly SecretRow[]): Promise<void> {
    const written = { projects: [] as string[], secrets: [] as string[] };
    const inSlices = async <R extends { id: string }>(rows: readonly R[], insert: (tx: Transaction<DB>, part: R[]) => Promise<unknown>, done: string[]) => {
      for (const slice of chunks(rows, ROWS_PER_SLICE)) {
        await db.transaction().execute(async (tx) => {
          for (const part of chunks(slice, INSERT_BATCH)) await insert(tx, part);
          await touchSecretsManager(tx, organizationId);
        });
        done.push(...slice.map((row) => row.id));
        await yieldToLoop();
      }
    };
    try {
      await inSlices(projectRows, (tx, part) => tx.insertInto('projects').values(part).execute(), written.projects);
      await inSlices(secretRows, (tx, part) => tx.insertInto('secrets').values(part).execute(), written.secrets);
    } catch (error) {
      await db.transaction().execute(async (tx) => {
        for (const part of chunks(written.secrets)) await tx.deleteFrom('secrets').where('id', 'in', part).execute();
        for (const part of chunks(written.projects)) await tx.deleteFrom('projects').where('id', 'in', part).execute();
        await touchSecretsManager(tx, organizationId);
      });
      throw error;
    }
  }

  async function requireAdmin(principal: Principal, organizationId: string): Promise<void> {
    const standing = await requireSmStanding(db, principal, organizationId);
    if (standing.kind !== 'admin') throw new NotFound();
  }

  return {
    async exportData({ principal }: SmCaller, rawOrganizationId: string) {
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
     * secret is in which project). No events, as the official server. Every element is checked
     * before the first is written, so bad input writes nothing; the rows are then written in
     * slices with the event loop let go between them (docs/security.md), so 6,000 secrets never
     * hold the server for everyone else, and a failure part-way undoes what was written. One
     * caller's imports run one after another.
     */
    async importData({ principal }: SmCaller, rawOrganizationId: string, body: ImportBody): Promise<void> {
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
      const secretRows = await mapInSlices(secrets, (s, i) => {
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
      const importer = principal.kind === 'user' ? principal.userId : organizationId;
      await queue(importer, () => write(organizationId, projectRows, secretRows));
    },
  };
}

export type SmPortingService = ReturnType<typeof createSmPortingService>;
