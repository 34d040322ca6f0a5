import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { IdParams, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { ProjectBody, ProjectResponse } from './projects.schemas.js';
import type { ProjectService } from './projects.service.js';
import { smCaller } from './sm-access.js';
import { BulkDeleteResult, IdArrayBody, OrganizationIdParams } from './sm-schemas.js';

const tags = ['Projects'];

const ACCESS =
  "Access: a user token (scope api) of a confirmed member with Secrets Manager access in an organization that has it, or a machine account token (scope api.secrets) of the organization (`secretsManager`); anyone else gets 404, as for a missing id.";

const docs = {
  list: {
    summary: "List an organization's projects",
    description: `Answers the projects the caller can read, each with the caller's read and write: owners and admins all of them, members and machine accounts those their access policies (their own or their groups') grant. ${ACCESS}`,
  },
  create: {
    summary: 'Create a project',
    description: `Creates a project with an encrypted name (at most 1000 characters) and records Project_Created (2201). Owners, admins, members and machine accounts may create one; a creator who is not an admin receives read and write on it. ${ACCESS}`,
  },
  get: { summary: 'Read a project', description: `Answers one project with the caller's read and write; 404 when the caller cannot read it. ${ACCESS}` },
  update: {
    summary: 'Rename a project',
    description: `Changes a project's encrypted name and records Project_Edited (2202); needs write access to it (404 otherwise). ${ACCESS}`,
  },
  delete: {
    summary: 'Delete projects',
    description: `Deletes the projects among 1 to 1000 ids that the caller may write and answers one {id, error} per id: error null when deleted, "access denied" otherwise. Their secrets stay, without project. Records Project_Deleted (2203) for each. An id that does not exist, is of another organization or that the caller may not write answers "access denied" on its own and the others are still deleted (one call acts in one organization: a machine account's own, otherwise that of the first id found). ${ACCESS}`,
  },
} satisfies Record<string, RouteDoc>;

/** Secrets Manager projects. */
export const projectRoutes: FastifyPluginAsyncTypebox<{ projects: ProjectService }> = async (app, { projects }) => {
  const config = { access: access.userOrServiceAccount };
  const base = '/organizations/:organizationId/projects';

  app.get(base, { config, schema: { tags, ...docs.list, params: OrganizationIdParams, response: { 200: ListOf(ProjectResponse) } } }, async (request) =>
    list(await projects.list(smCaller(request), normalizeGuid(request.params.organizationId))),
  );

  app.post(base, { config, schema: { tags, ...docs.create, params: OrganizationIdParams, body: ProjectBody, response: { 200: ProjectResponse } } }, async (request) =>
    projects.create(smCaller(request), normalizeGuid(request.params.organizationId), request.body),
  );

  app.get('/projects/:id', { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: ProjectResponse } } }, async (request) =>
    projects.get(smCaller(request), normalizeGuid(request.params.id)),
  );

  app.put('/projects/:id', { config, schema: { tags, ...docs.update, params: IdParams, body: ProjectBody, response: { 200: ProjectResponse } } }, async (request) =>
    projects.update(smCaller(request), normalizeGuid(request.params.id), request.body),
  );

  app.post('/projects/delete', { config: { ...config, callerLimit: 'bulk' }, schema: { tags, ...docs.delete, body: IdArrayBody, response: { 200: ListOf(BulkDeleteResult) } } }, async (request) =>
    list(await projects.delete(smCaller(request), request.body)),
  );
};
