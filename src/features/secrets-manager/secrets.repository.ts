import type { Selectable } from 'kysely';
import type { SecretsTable, SecretVersionsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

/** A secret with the name of its project (null without one). */
export type SecretRow = Selectable<SecretsTable> & { project_name: string | null };
/** A secret as lists show it: no value, no note. */
export type SecretSummaryRow = Omit<SecretRow, 'value' | 'note'>;
export type SecretVersionRow = Selectable<SecretVersionsTable>;
/** A version with the secret it belongs to, as access decisions need it. */
export type VersionWithSecretRow = SecretVersionRow & { organization_id: string; project_id: string | null };

/** Which secrets a query reaches: in use (the default) or in the trash. */
type Place = 'active' | 'trash';

function secretsWithProject(db: Executor) {
  return db.selectFrom('secrets').leftJoin('projects', 'projects.id', 'secrets.project_id');
}

const FULL = [
  'secrets.id',
  'secrets.organization_id',
  'secrets.project_id',
  'secrets.key',
  'secrets.value',
  'secrets.note',
  'secrets.creation_date',
  'secrets.revision_date',
  'secrets.deleted_date',
  'projects.name as project_name',
] as const;

const SUMMARY = [
  'secrets.id',
  'secrets.organization_id',
  'secrets.project_id',
  'secrets.key',
  'secrets.creation_date',
  'secrets.revision_date',
  'secrets.deleted_date',
  'projects.name as project_name',
] as const;

export async function findSecret(db: Executor, id: string): Promise<SecretRow | undefined> {
  return secretsWithProject(db).select(FULL).where('secrets.id', '=', id).where('secrets.deleted_date', 'is', null).executeTakeFirst();
}

/** The organization of a secret in use, if there is one. */
export async function organizationOfSecret(db: Executor, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('secrets').select('organization_id').where('id', '=', id).where('deleted_date', 'is', null).executeTakeFirst();
  return row?.organization_id;
}

/** Secrets in use among `ids`, whatever their organization. */
export async function findSecrets(db: Executor, ids: readonly string[]): Promise<SecretRow[]> {
  if (ids.length === 0) return [];
  return secretsWithProject(db).select(FULL).where('secrets.id', 'in', ids).where('secrets.deleted_date', 'is', null).execute();
}

/** An organization's secrets in use (or in the trash) without values, optionally of one project. */
export async function listSecretSummaries(db: Executor, organizationId: string, opts: { place?: Place; projectId?: string } = {}): Promise<SecretSummaryRow[]> {
  let query = secretsWithProject(db)
    .select(SUMMARY)
    .where('secrets.organization_id', '=', organizationId)
    .where('secrets.deleted_date', opts.place === 'trash' ? 'is not' : 'is', null);
  if (opts.projectId) query = query.where('secrets.project_id', '=', opts.projectId);
  return query.orderBy('secrets.creation_date').orderBy('secrets.id').execute();
}

/** An organization's secrets in use, with values (the machine-account sync). */
export async function listSecrets(db: Executor, organizationId: string): Promise<SecretRow[]> {
  return secretsWithProject(db)
    .select(FULL)
    .where('secrets.organization_id', '=', organizationId)
    .where('secrets.deleted_date', 'is', null)
    .orderBy('secrets.creation_date')
    .orderBy('secrets.id')
    .execute();
}

/** The ids among `ids` of the organization's secrets in the trash. */
export async function trashedSecretIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<{ id: string; project_id: string | null }[]> {
  return db
    .selectFrom('secrets')
    .select(['id', 'project_id'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', ids)
    .where('deleted_date', 'is not', null)
    .execute();
}

export async function insertSecret(db: Executor, row: Selectable<SecretsTable>): Promise<void> {
  await db.insertInto('secrets').values(row).execute();
}

export async function updateSecret(
  db: Executor,
  id: string,
  values: Partial<Pick<Selectable<SecretsTable>, 'key' | 'value' | 'note' | 'project_id'>> & { revision_date: string },
): Promise<void> {
  await db.updateTable('secrets').set(values).where('id', '=', id).execute();
}

/** Moves secrets to the trash (`deletedDate`) or back out of it (null). */
export async function setDeletedDate(db: Executor, ids: readonly string[], deletedDate: string | null, now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('secrets').set({ deleted_date: deletedDate, revision_date: now }).where('id', 'in', ids).execute();
}

export async function deleteSecrets(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('secrets').where('id', 'in', ids).execute();
}

export async function insertVersion(db: Executor, row: SecretVersionRow): Promise<void> {
  await db.insertInto('secret_versions').values(row).execute();
}

/** Drops the secret's versions beyond the `keep` newest. */
export async function pruneVersions(db: Executor, secretId: string, keep: number): Promise<void> {
  await db
    .deleteFrom('secret_versions')
    .where('secret_id', '=', secretId)
    .where('id', 'not in', (eb) =>
      eb.selectFrom('secret_versions').select('id').where('secret_id', '=', secretId).orderBy('version_date', 'desc').orderBy('id', 'desc').limit(keep),
    )
    .execute();
}

export async function versionsOfSecret(db: Executor, secretId: string): Promise<SecretVersionRow[]> {
  return db.selectFrom('secret_versions').selectAll().where('secret_id', '=', secretId).orderBy('version_date', 'desc').orderBy('id', 'desc').execute();
}

/** One version of one secret (the caller has checked the secret). */
export async function findVersionOf(db: Executor, secretId: string, versionId: string): Promise<SecretVersionRow | undefined> {
  return db.selectFrom('secret_versions').selectAll().where('id', '=', versionId).where('secret_id', '=', secretId).executeTakeFirst();
}

/** Versions among `ids` whose secret is in use, with that secret's organization and project. */
export async function findVersions(db: Executor, ids: readonly string[]): Promise<VersionWithSecretRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('secret_versions')
    .innerJoin('secrets', 'secrets.id', 'secret_versions.secret_id')
    .selectAll('secret_versions')
    .select(['secrets.organization_id', 'secrets.project_id'])
    .where('secret_versions.id', 'in', ids)
    .where('secrets.deleted_date', 'is', null)
    .orderBy('secret_versions.version_date', 'desc')
    .orderBy('secret_versions.id', 'desc')
    .execute();
}

export async function deleteVersions(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('secret_versions').where('id', 'in', ids).execute();
}

export async function serviceAccountRevision(db: Executor, serviceAccountId: string): Promise<string | undefined> {
  const row = await db.selectFrom('service_accounts').select('revision_date').where('id', '=', serviceAccountId).executeTakeFirst();
  return row?.revision_date;
}
