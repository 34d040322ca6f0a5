import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendEncoded } from '../../http/serialization.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, IdParams, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import {
  BaseSecretList,
  CreateSecretBody,
  SecretListResponse,
  SecretResponse,
  SecretsSyncResponse,
  SyncQuery,
  UpdateSecretBody,
} from './secrets.schemas.js';
import type { SecretService } from './secrets.service.js';
import { smCaller } from './sm-access.js';
import { BulkDeleteResult, IdArrayBody, IdsObjectBody, OrganizationIdParams, ProjectIdParams } from './sm-schemas.js';

const tags = ['Secrets'];

const WHO =
  'Access: a user token (scope api) of a confirmed member with Secrets Manager access in an organization that uses it, or a machine-account token (scope api.secrets) of the organization; anyone else gets 404.';
const READ = `Owners and admins reach every secret; other members and machine accounts the secrets their own, their groups' or their account's access policies grant (on the secret or its project). ${WHO}`;
const ADMINS = `Organization owners and admins with Secrets Manager access only; other members and machine accounts of the organization get 401, anyone else 404. ${WHO}`;

const docs = {
  list: {
    summary: "List an organization's secrets",
    description: `Answers the secrets the caller can read (not those in the trash), without values, each with its project and the caller's read and write rights, and the distinct projects. ${READ}`,
  },
  create: {
    summary: 'Create a secret',
    description: `Creates a secret (key, value and note encrypted by the client) in at most one project of the organization (more answers 400 "Only one project assignment is supported."), and records Secret_Created (2101). Owners and admins may create anywhere; other members and machine accounts only in a project they can write (404 otherwise, and for no project). ${WHO}`,
  },
  get: {
    summary: 'Read a secret',
    description: `Answers a secret with its value and the caller's rights (404 without read access or in the trash) and records Secret_Retrieved (2100). ${READ}`,
  },
  update: {
    summary: 'Update a secret',
    description: `Changes a secret the caller can write (404 otherwise). Absent, null or the current project leaves its project; [] takes it out (owners and admins only) and another id moves it (into a project the caller can write). When the value changes (valueChanged when sent, otherwise a different encrypted value) the replaced value is kept in the secret's history (SECRET_VERSIONS_KEPT). Records Secret_Edited (2102). ${READ}`,
  },
  listOfProject: {
    summary: "List a project's secrets",
    description: `Answers the project's secrets the caller can read, without values (404 when the caller cannot read the project). ${READ}`,
  },
  delete: {
    summary: 'Move secrets to the trash',
    description: `Moves secrets to the trash and answers one result per id: error null when moved, "access denied" for an id the caller cannot write, cannot see, that does not exist or is of another organization (one call acts in the organization of the first id found); the others are still moved. Records Secret_Deleted (2103) per secret. ${READ}`,
  },
  getByIds: {
    summary: 'Read secrets by id',
    description: `Answers the secrets with their values (404 when any id is missing, in the trash, unreadable or of another organization; 400 for an id listed twice) and records Secret_Retrieved (2100) per secret. ${READ}`,
  },
  sync: {
    summary: 'Sync secrets for a machine account',
    description: `Machine accounts only (a user gets 400 "Only service accounts can sync secrets."). Without lastSyncedDate, or when something the account reaches changed since, answers hasChanges true with every secret it can read (recording Secret_Retrieved per secret); otherwise hasChanges false and no secrets. A future date answers 400 "Last synced date must be in the past." ${WHO}`,
  },
  trash: { summary: "List an organization's trash", description: `Answers the secrets in the organization's trash, without values. ${ADMINS}` },
  emptyTrash: {
    summary: 'Delete secrets from the trash for good',
    description: `Deletes the given secrets of the trash permanently, with their history and access policies, all or nothing (404 when an id is not in this organization's trash), and records Secret_Permanently_Deleted (2104) per secret. ${ADMINS}`,
  },
  restoreTrash: {
    summary: 'Restore secrets from the trash',
    description: `Puts the given secrets of the trash back in use, all or nothing (404 when an id is not in this organization's trash), and records Secret_Restored (2105) per secret. ${ADMINS}`,
  },
} satisfies Record<string, RouteDoc>;

/** Secrets, their bulk calls, the machine-account sync and the trash. */
export const secretRoutes: FastifyPluginAsyncTypebox<{ secrets: SecretService }> = async (app, { secrets }) => {
  const config = { access: access.userOrServiceAccount };

  app.get(
    '/organizations/:organizationId/secrets',
    { config, schema: { tags, ...docs.list, params: OrganizationIdParams, response: { 200: SecretListResponse } } },
    async (request, reply) => sendEncoded(reply, await secrets.list(smCaller(request), normalizeGuid(request.params.organizationId))),
  );

  app.post(
    '/organizations/:organizationId/secrets',
    { config, schema: { tags, ...docs.create, params: OrganizationIdParams, body: CreateSecretBody, response: { 200: SecretResponse } } },
    async (request) => secrets.create(smCaller(request), normalizeGuid(request.params.organizationId), request.body),
  );

  app.get(
    '/organizations/:organizationId/secrets/sync',
    { config, schema: { tags, ...docs.sync, params: OrganizationIdParams, querystring: SyncQuery, response: { 200: SecretsSyncResponse } } },
    async (request, reply) =>
      sendEncoded(reply, await secrets.sync(smCaller(request), normalizeGuid(request.params.organizationId), request.query.lastSyncedDate)),
  );

  app.get('/secrets/:id', { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: SecretResponse } } }, async (request) =>
    secrets.get(smCaller(request), normalizeGuid(request.params.id)),
  );

  app.put('/secrets/:id', { config, schema: { tags, ...docs.update, params: IdParams, body: UpdateSecretBody, response: { 200: SecretResponse } } }, async (request) =>
    secrets.update(smCaller(request), normalizeGuid(request.params.id), request.body),
  );

  app.get(
    '/projects/:projectId/secrets',
    { config, schema: { tags, ...docs.listOfProject, params: ProjectIdParams, response: { 200: SecretListResponse } } },
    async (request, reply) => sendEncoded(reply, await secrets.listOfProject(smCaller(request), normalizeGuid(request.params.projectId))),
  );

  app.post('/secrets/delete', { config: { ...config, callerLimit: 'bulk' }, schema: { tags, ...docs.delete, body: IdArrayBody, response: { 200: ListOf(BulkDeleteResult) } } }, async (request) =>
    list(await secrets.delete(smCaller(request), request.body)),
  );

  app.post('/secrets/get-by-ids', { config, schema: { tags, ...docs.getByIds, body: IdsObjectBody, response: { 200: BaseSecretList } } }, async (request, reply) =>
    sendEncoded(reply, await secrets.getByIds(smCaller(request), request.body.ids)),
  );

  app.get(
    '/secrets/:organizationId/trash',
    { config, schema: { tags, ...docs.trash, params: OrganizationIdParams, response: { 200: SecretListResponse } } },
    async (request) => secrets.listTrash(smCaller(request), normalizeGuid(request.params.organizationId)),
  );

  app.post(
    '/secrets/:organizationId/trash/empty',
    { config, schema: { tags, ...docs.emptyTrash, params: OrganizationIdParams, body: IdArrayBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await secrets.emptyTrash(smCaller(request), normalizeGuid(request.params.organizationId), request.body);
      return emptyOk(reply);
    },
  );

  app.post(
    '/secrets/:organizationId/trash/restore',
    { config, schema: { tags, ...docs.restoreTrash, params: OrganizationIdParams, body: IdArrayBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await secrets.restoreTrash(smCaller(request), normalizeGuid(request.params.organizationId), request.body);
      return emptyOk(reply);
    },
  );
};
