import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { normalizeGuid } from '../../http/schemas.js';
import type { CountsService } from './sm-counts.service.js';
import { smCaller } from './sm-access.js';
import { OrganizationIdParams, ProjectIdParams, ServiceAccountIdParams } from './sm-schemas.js';

const tags = ['Secrets Manager'];

const ACCESS =
  'Access: a user token (scope api) of a confirmed member with Secrets Manager access in an organization that has it (`secretsManager`); machine accounts and anyone else get 404, as for a missing id.';

const docs = {
  organization: {
    summary: "Count an organization's Secrets Manager items",
    description: `Answers how many projects, secrets (not in the trash) and machine accounts the caller can read. ${ACCESS}`,
  },
  project: {
    summary: "Count a project's secrets and grantees",
    description: `Answers the number of secrets in the project (not in the trash), and for callers who may write it the people (members and groups) and machine accounts with access to it (0 for readers). 404 when the caller cannot read the project. ${ACCESS}`,
  },
  serviceAccount: {
    summary: "Count a machine account's projects, people and tokens",
    description: `Answers the number of projects the machine account is granted, the people (members and groups) with access to it, and its access tokens. 404 when the caller cannot read it. ${ACCESS}`,
  },
} satisfies Record<string, RouteDoc>;

const Count = Type.Integer({ minimum: 0 });
const OrganizationCounts = Type.Object({ object: Type.Literal('organizationCounts'), projects: Count, secrets: Count, serviceAccounts: Count });
const ProjectCounts = Type.Object({ object: Type.Literal('projectCounts'), secrets: Count, people: Count, serviceAccounts: Count });
const ServiceAccountCounts = Type.Object({ object: Type.Literal('serviceAccountCounts'), projects: Count, people: Count, accessTokens: Count });

/** Secrets Manager counts, as the web app shows them on its overview and tabs. */
export const smCountsRoutes: FastifyPluginAsyncTypebox<{ counts: CountsService }> = async (app, { counts }) => {
  const config = { access: access.userOrServiceAccount };

  app.get(
    '/organizations/:organizationId/sm-counts',
    { config, schema: { tags, ...docs.organization, params: OrganizationIdParams, response: { 200: OrganizationCounts } } },
    async (request) => counts.organization(smCaller(request), normalizeGuid(request.params.organizationId)),
  );

  app.get('/projects/:projectId/sm-counts', { config, schema: { tags, ...docs.project, params: ProjectIdParams, response: { 200: ProjectCounts } } }, async (request) =>
    counts.project(smCaller(request), normalizeGuid(request.params.projectId)),
  );

  app.get(
    '/service-accounts/:serviceAccountId/sm-counts',
    { config, schema: { tags, ...docs.serviceAccount, params: ServiceAccountIdParams, response: { 200: ServiceAccountCounts } } },
    async (request) => counts.serviceAccount(smCaller(request), normalizeGuid(request.params.serviceAccountId)),
  );
};
