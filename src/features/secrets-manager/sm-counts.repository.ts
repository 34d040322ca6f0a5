import type { Executor } from '../../db/database.js';

const count = (n: number | string) => Number(n);

/** Every project, machine account and secret in use of an organization: what its counts filter by the caller's rights. */
export async function organizationItems(db: Executor, organizationId: string) {
  const [projects, serviceAccounts, secrets] = await Promise.all([
    db.selectFrom('projects').select('id').where('organization_id', '=', organizationId).execute(),
    db.selectFrom('service_accounts').select('id').where('organization_id', '=', organizationId).execute(),
    db.selectFrom('secrets').select(['id', 'project_id']).where('organization_id', '=', organizationId).where('deleted_date', 'is', null).execute(),
  ]);
  return { projects, serviceAccounts, secrets };
}

/** The number of secrets in use in a project, and the grantees of its policies. */
export async function projectItems(db: Executor, projectId: string) {
  const [secrets, policies] = await Promise.all([
    db.selectFrom('secrets').select((eb) => eb.fn.countAll<number | string>().as('n')).where('project_id', '=', projectId).where('deleted_date', 'is', null).executeTakeFirstOrThrow(),
    db.selectFrom('access_policies').select(['organization_user_id', 'group_id', 'service_account_id']).where('granted_project_id', '=', projectId).execute(),
  ]);
  return { secrets: count(secrets.n), policies };
}

/** The projects a machine account is granted, the people policies on it, and its access tokens. */
export async function serviceAccountCounts(db: Executor, serviceAccountId: string) {
  const [projects, people, tokens] = await Promise.all([
    db.selectFrom('access_policies').select((eb) => eb.fn.countAll<number | string>().as('n')).where('service_account_id', '=', serviceAccountId).where('granted_project_id', 'is not', null).executeTakeFirstOrThrow(),
    db.selectFrom('access_policies').select((eb) => eb.fn.countAll<number | string>().as('n')).where('granted_service_account_id', '=', serviceAccountId).executeTakeFirstOrThrow(),
    db.selectFrom('access_tokens').select((eb) => eb.fn.countAll<number | string>().as('n')).where('service_account_id', '=', serviceAccountId).executeTakeFirstOrThrow(),
  ]);
  return { projects: count(projects.n), people: count(people.n), accessTokens: count(tokens.n) };
}
