import type { Db } from '../../db/database.js';
import { NotFound } from '../../http/errors.js';
import type { ProjectService } from './projects.service.js';
import type { ServiceAccountService } from './service-accounts.service.js';
import { projectRights, secretRights, serviceAccountRights, type SmAccess, smAccessIn, type SmCaller } from './sm-access.js';
import { organizationItems, projectItems, serviceAccountCounts } from './sm-counts.repository.js';

/** Counts are for people managing Secrets Manager; machine accounts get 404, as officially. */
function refuseMachines(access: SmAccess): void {
  if (access.standing.kind === 'serviceAccount') throw new NotFound();
}

export function createCountsService(deps: { db: Db; projects: ProjectService; serviceAccounts: ServiceAccountService }) {
  const { db } = deps;

  return {
    /** What the caller can see: projects and machine accounts they read, secrets (not in the trash) they read. */
    async organization({ principal }: SmCaller, organizationId: string) {
      const access = await smAccessIn(db, principal, organizationId);
      refuseMachines(access);
      const { projects, serviceAccounts, secrets } = await organizationItems(db, organizationId);
      return {
        object: 'organizationCounts' as const,
        projects: projects.filter((p) => projectRights(access, p.id).read).length,
        secrets: secrets.filter((s) => secretRights(access, s).read).length,
        serviceAccounts: serviceAccounts.filter((a) => serviceAccountRights(access, a.id).read).length,
      };
    },

    /** Secrets in the project for readers; people and machine accounts with access only for writers (0 otherwise), as officially. */
    async project({ principal }: SmCaller, projectId: string) {
      const { project, access, rights } = await deps.projects.readable(principal, projectId);
      refuseMachines(access);
      const { secrets, policies } = await projectItems(db, project.id);
      const { write } = rights;
      return {
        object: 'projectCounts' as const,
        secrets,
        people: write ? policies.filter((p) => p.organization_user_id || p.group_id).length : 0,
        serviceAccounts: write ? policies.filter((p) => p.service_account_id).length : 0,
      };
    },

    async serviceAccount({ principal }: SmCaller, serviceAccountId: string) {
      const { account } = await deps.serviceAccounts.readable(principal, serviceAccountId);
      return { object: 'serviceAccountCounts' as const, ...(await serviceAccountCounts(db, account.id)) };
    },
  };
}

export type CountsService = ReturnType<typeof createCountsService>;
