import type { Insertable } from 'kysely';
import type { AccessPoliciesTable, ProjectsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import type { ProjectRow } from './projects.schemas.js';

export async function findProject(db: Executor, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function projectsOfOrganization(db: Executor, organizationId: string): Promise<ProjectRow[]> {
  return db.selectFrom('projects').selectAll().where('organization_id', '=', organizationId).orderBy('creation_date').orderBy('id').execute();
}

export async function projectsByIds(db: Executor, ids: readonly string[]): Promise<ProjectRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('projects').selectAll().where('id', 'in', [...ids]).execute();
}

export async function insertProject(db: Executor, row: Insertable<ProjectsTable>): Promise<void> {
  await db.insertInto('projects').values(row).execute();
}

export async function renameProject(db: Executor, id: string, name: string, now: string): Promise<void> {
  await db.updateTable('projects').set({ name, revision_date: now }).where('id', '=', id).execute();
}

/** Moves the revision date of the secrets in the given projects. */
export async function touchSecretsOfProjects(db: Executor, ids: readonly string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('secrets').set({ revision_date: now }).where('project_id', 'in', [...ids]).execute();
}

/** Removes projects; their secrets stay, without project (the foreign key clears the link). */
export async function deleteProjects(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('projects').where('id', 'in', [...ids]).execute();
}

/** The read+write policy a creator who is not an admin receives on what they create. */
export async function insertCreatorPolicy(db: Executor, row: Insertable<AccessPoliciesTable>): Promise<void> {
  await db.insertInto('access_policies').values(row).execute();
}
