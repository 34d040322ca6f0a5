import type { Insertable } from 'kysely';
import type { AccessTokensTable, ServiceAccountsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import type { AccessTokenRow, ServiceAccountRow } from './service-accounts.schemas.js';

export async function findServiceAccount(db: Executor, id: string): Promise<ServiceAccountRow | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function serviceAccountsOfOrganization(db: Executor, organizationId: string): Promise<ServiceAccountRow[]> {
  return db.selectFrom('service_accounts').selectAll().where('organization_id', '=', organizationId).orderBy('creation_date').orderBy('id').execute();
}

export async function serviceAccountsByIds(db: Executor, ids: readonly string[]): Promise<ServiceAccountRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('service_accounts').selectAll().where('id', 'in', [...ids]).execute();
}

export async function insertServiceAccount(db: Executor, row: Insertable<ServiceAccountsTable>): Promise<void> {
  await db.insertInto('service_accounts').values(row).execute();
}

export async function renameServiceAccount(db: Executor, id: string, name: string, now: string): Promise<void> {
  await db.updateTable('service_accounts').set({ name, revision_date: now }).where('id', '=', id).execute();
}

/** Their access tokens and the policies naming them go with them (foreign keys). */
export async function deleteServiceAccounts(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('service_accounts').where('id', 'in', [...ids]).execute();
}

/**
 * The secrets each machine account reaches (not in the trash), by a policy on the secret or
 * on its project: two queries whatever the number of accounts and secrets.
 */
export async function secretsReachedBy(db: Executor, organizationId: string, serviceAccountIds: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (serviceAccountIds.length === 0) return counts;
  const policies = await db
    .selectFrom('access_policies')
    .select(['service_account_id', 'granted_project_id', 'granted_secret_id'])
    .where('service_account_id', 'in', [...serviceAccountIds])
    .where('read', '=', true)
    .where((eb) => eb.or([eb('granted_project_id', 'is not', null), eb('granted_secret_id', 'is not', null)]))
    .execute();
  if (policies.length === 0) return counts;
  const secrets = await db.selectFrom('secrets').select(['id', 'project_id']).where('organization_id', '=', organizationId).where('deleted_date', 'is', null).execute();
  const projectOf = new Map(secrets.map((s) => [s.id, s.project_id]));
  const perProject = new Map<string, number>();
  for (const s of secrets) if (s.project_id) perProject.set(s.project_id, (perProject.get(s.project_id) ?? 0) + 1);

  const reach = new Map<string, { projects: Set<string>; secrets: Set<string> }>();
  for (const p of policies) {
    const id = p.service_account_id as string;
    const entry = reach.get(id) ?? { projects: new Set<string>(), secrets: new Set<string>() };
    if (p.granted_project_id) entry.projects.add(p.granted_project_id);
    else if (p.granted_secret_id && projectOf.has(p.granted_secret_id)) entry.secrets.add(p.granted_secret_id);
    reach.set(id, entry);
  }
  for (const [id, entry] of reach) {
    let total = 0;
    for (const project of entry.projects) total += perProject.get(project) ?? 0;
    // A secret granted directly and through its project counts once.
    for (const secret of entry.secrets) {
      const project = projectOf.get(secret);
      if (!project || !entry.projects.has(project)) total += 1;
    }
    counts.set(id, total);
  }
  return counts;
}

export async function accessTokensOf(db: Executor, serviceAccountId: string): Promise<AccessTokenRow[]> {
  return db.selectFrom('access_tokens').selectAll().where('service_account_id', '=', serviceAccountId).orderBy('creation_date').orderBy('id').execute();
}

export async function insertAccessToken(db: Executor, row: Insertable<AccessTokensTable>): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute();
}

/** Deletes the given tokens of this machine account only; other ids are ignored. */
export async function revokeAccessTokens(db: Executor, serviceAccountId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('access_tokens').where('service_account_id', '=', serviceAccountId).where('id', 'in', [...ids]).execute();
}
