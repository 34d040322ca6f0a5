import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { NotFound } from '../../http/errors.js';
import type { ProjectService } from './projects.service.js';
import type { ServiceAccountService } from './service-accounts.service.js';
import { projectRights, secretRights, serviceAccountRights, type SmAccess, smAccessIn } from './sm-access.js';

/** Counts are for people managing Secrets Manager; machine accounts get 404, as officially. */
function refuseMachines(access: SmAccess): void {
  if (access.caller.kind === 'serviceAccount') throw new NotFound();
}

export function createCountsService(deps: { db: Db; projects: ProjectService; serviceAccounts: ServiceAccountService }) {
  const { db } = deps;

  return {
    /** What the caller can see: projects and machine accounts they read, secrets (not in the trash) they read. */
    async organization(principal: Principal, organizationId: string) {
      const access = await smAccessIn(db, principal, organizationId);
      refuseMachines(access);
      const [projects, accounts, secrets] = await Promise.all([
        db.selectFrom('projects').select('id').where('organization_id', '=', organizationId).execute(),
        db.selectFrom('service_accounts').select('id').where('organization_id', '=', organizationId).execute(),
        db.selectFrom('secrets').select(['id', 'project_id']).where('organization_id', '=', organizationId).where('deleted_date', 'is', null).execute(),
      ]);
      return {
        object: 'organizationCounts' as const,
        projects: projects.filter((p) => projectRights(access, p.id).read).length,
        secrets: secrets.filter((s) => secretRights(access, s).read).length,
        serviceAccounts: accounts.filter((a) => serviceAccountRights(access, a.id).read).length,
      };
    },

    /** Secrets in the project for readers; people and machine accounts with access only for writers (0 otherwise), as officially. */
    async project(principal: Principal, projectId: string) {
      const { project, access } = await deps.projects.readable(principal, projectId);
      refuseMachines(access);
      const [secrets, policies] = await Promise.all([
        db.selectFrom('secrets').select((eb) => eb.fn.countAll<number | string>().as('n')).where('project_id', '=', project.id).where('deleted_date', 'is', null).executeTakeFirstOrThrow(),
        db.selectFrom('access_policies').select(['organization_user_id', 'group_id', 'service_account_id']).where('granted_project_id', '=', project.id).execute(),
      ]);
      const write = projectRights(access, project.id).write;
      return {
        object: 'projectCounts' as const,
        secrets: Number(secrets.n),
        people: write ? policies.filter((p) => p.organization_user_id || p.group_id).length : 0,
        serviceAccounts: write ? policies.filter((p) => p.service_account_id).length : 0,
      };
    },

    async serviceAccount(principal: Principal, serviceAccountId: string) {
      const { account } = await deps.serviceAccounts.readable(principal, serviceAccountId);
      const [projects, people, tokens] = await Promise.all([
        db.selectFrom('access_policies').select((eb) => eb.fn.countAll<number | string>().as('n')).where('service_account_id', '=', account.id).where('granted_project_id', 'is not', null).executeTakeFirstOrThrow(),
        db.selectFrom('access_policies').select((eb) => eb.fn.countAll<number | string>().as('n')).where('granted_service_account_id', '=', account.id).executeTakeFirstOrThrow(),
        db.selectFrom('access_tokens').select((eb) => eb.fn.countAll<number | string>().as('n')).where('service_account_id', '=', account.id).executeTakeFirstOrThrow(),
      ]);
      return { object: 'serviceAccountCounts' as const, projects: Number(projects.n), people: Number(people.n), accessTokens: Number(tokens.n) };
    },
  };
}

export type CountsService = ReturnType<typeof createCountsService>;
