import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/**
 * Counts a change to an organization's secrets or projects, in the change's transaction: every
 * transaction that writes either table calls it. Cached answers (sm-answers.ts) are reused only
 * while the count is unchanged. Access policies and group memberships are not counted: the
 * caller's grants are part of each answer's key.
 */
export async function touchSecretsManager(db: Executor, organizationId: string): Promise<void> {
  await db
    .insertInto('sm_revisions')
    .values({ organization_id: organizationId, revision: 1 })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ revision: sql`sm_revisions.revision + 1` }))
    .execute();
}

export async function secretsManagerRevision(db: Executor, organizationId: string): Promise<number> {
  const row = await db.selectFrom('sm_revisions').select('revision').where('organization_id', '=', organizationId).executeTakeFirst();
  return row ? Number(row.revision) : 0;
}

/**
 * Moves the revision date of every machine account that reaches the given secrets or projects,
 * in the writing transaction. The machine-account sync answers `hasChanges` by comparing its last
 * sync with this date, as the official server does.
 *
 * - `secretIds`: accounts with a policy on the secret or on its current project;
 * - `projectIds`: accounts with a policy on the project or on a secret in it (they see the
 *   project's name with the secret, and the secret loses it when the project goes).
 *
 * A caller whose secret leaves a project (a move, a delete of the project) names that project:
 * the subquery only finds the secret's current one. Call before a delete, while the policies
 * and the secrets' projects that say who reached what are still there.
 */
export async function touchServiceAccountsReaching(
  db: Executor,
  targets: { secretIds?: readonly string[]; projectIds?: readonly string[] },
  now: string,
): Promise<void> {
  const secretIds = [...new Set(targets.secretIds ?? [])];
  const projectIds = [...new Set(targets.projectIds ?? [])];
  if (secretIds.length === 0 && projectIds.length === 0) return;
  await db
    .updateTable('service_accounts')
    .set({ revision_date: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('access_policies')
        .select('service_account_id')
        .where('service_account_id', 'is not', null)
        .where((w) =>
          w.or([
            ...(secretIds.length > 0
              ? [
                  w('granted_secret_id', 'in', secretIds),
                  w('granted_project_id', 'in', w.selectFrom('secrets').select('project_id').where('id', 'in', secretIds).where('project_id', 'is not', null)),
                ]
              : []),
            ...(projectIds.length > 0
              ? [w('granted_project_id', 'in', projectIds), w('granted_secret_id', 'in', w.selectFrom('secrets').select('id').where('project_id', 'in', projectIds))]
              : []),
          ]),
        ),
    )
    .execute();
}

/** Moves the revision date of the given machine accounts (their access changed). */
export async function touchServiceAccounts(db: Executor, ids: readonly string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('service_accounts').set({ revision_date: now }).where('id', 'in', [...new Set(ids)]).execute();
}
