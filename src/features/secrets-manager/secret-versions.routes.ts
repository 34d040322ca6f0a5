import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, IdParams, ListOf, normalizeGuid } from '../../http/schemas.js';
import { RestoreVersionBody, SecretResponse, SecretVersionResponse, VersionIdsBody } from './secrets.schemas.js';
import { SecretIdParams } from './sm-schemas.js';
import type { SecretVersionService } from './secret-versions.service.js';
import { smCaller } from './sm-access.js';

const tags = ['Secrets'];

const WHO =
  "Owners and admins reach every secret; other members and machine accounts the secrets their own, their groups' or their account's access policies grant. Access: a user token (scope api) of a confirmed member with Secrets Manager access, or a machine-account token (scope api.secrets) of the organization; anyone else gets 404.";
const HISTORY = "A secret's versions are its earlier values, each kept when a change replaced it, with who replaced it and when.";

const docs = {
  list: { summary: "List a secret's versions", description: `Answers the secret's earlier values, newest first (404 without read access to the secret). ${HISTORY} ${WHO}` },
  get: { summary: 'Read a secret version', description: `Answers one version (404 without read access to its secret). ${HISTORY} ${WHO}` },
  getByIds: {
    summary: 'Read secret versions by id',
    description: `Answers the versions (400 "No version IDs provided." for an empty list, 400 for an id listed twice; 404 when any id is missing, of a secret the caller cannot read, or of another organization). ${WHO}`,
  },
  restore: {
    summary: 'Restore a secret version',
    description: `Makes the version's value the secret's value, keeping the value it replaces as a version first when it differs, and records Secret_Edited (2102). Needs write access to the secret (404 otherwise, or when the version is of another secret). ${HISTORY} ${WHO}`,
  },
  delete: {
    summary: 'Delete secret versions',
    description: `Deletes versions, all or nothing (an id listed twice counts once): 400 "No version IDs provided." for an empty list, 404 when any id is missing or of a secret the caller cannot write. ${WHO}`,
  },
} satisfies Record<string, RouteDoc>;

/** A secret's value history. */
export const secretVersionRoutes: FastifyPluginAsyncTypebox<{ versions: SecretVersionService }> = async (app, { versions }) => {
  const config = { access: access.userOrServiceAccount };

  app.get(
    '/secrets/:secretId/versions',
    { config, schema: { tags, ...docs.list, params: SecretIdParams, response: { 200: ListOf(SecretVersionResponse) } } },
    async (request) => versions.listOfSecret(smCaller(request), normalizeGuid(request.params.secretId)),
  );

  app.get('/secret-versions/:id', { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: SecretVersionResponse } } }, async (request) =>
    versions.get(smCaller(request), normalizeGuid(request.params.id)),
  );

  app.post(
    '/secret-versions/get-by-ids',
    { config, schema: { tags, ...docs.getByIds, body: VersionIdsBody, response: { 200: ListOf(SecretVersionResponse) } } },
    async (request) => versions.getByIds(smCaller(request), request.body),
  );

  app.put(
    '/secrets/:secretId/versions/restore',
    { config, schema: { tags, ...docs.restore, params: SecretIdParams, body: RestoreVersionBody, response: { 200: SecretResponse } } },
    async (request) =>
      versions.restore(smCaller(request), normalizeGuid(request.params.secretId), normalizeGuid(request.body.versionId)),
  );

  app.post('/secret-versions/delete', { config, schema: { tags, ...docs.delete, body: VersionIdsBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await versions.delete(smCaller(request), request.body);
    return emptyOk(reply);
  });
};
