import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, emptyOk, Guid } from '../../http/schemas.js';
import { SecretBody } from '../organizations/organizations.schemas.js';
import type { VaultPurge } from './vault-purge.js';

const PurgeQuery = Type.Object({ organizationId: Type.Optional(Guid) });

const doc: RouteDoc = {
  summary: 'Purge a vault',
  description:
    "Deletes for good, after the caller's master password hash (`secret` or `masterPasswordHash`; a wrong or missing one answers 400 \"User verification failed.\"): without `organizationId`, every item the caller owns (trash and archive included) and all their folders, with no event, and a SyncVault push to their devices; with it, every item of that organization except those in a member's default collection, recording Organization_PurgedVault (1601) and pushing SyncVault to its members. Attachment files go and their bytes are given back to the owner's storage. Access: any signed-in user (`user`) for their own vault; an organization's needs a confirmed owner or admin, or a custom member who may edit any collection (anyone else gets 404, as for an unknown organization).",
};

/** `POST /ciphers/purge` (vault-purge.ts). */
export const vaultPurgeRoutes: FastifyPluginAsync<{ purge: VaultPurge }> = async (app, { purge }) => {
  app.post<{ Body: SecretBody; Querystring: Static<typeof PurgeQuery> }>(
    '/ciphers/purge',
    { config: { access: access.user, callerLimit: 'bulk' }, schema: { tags: ['Items'], ...doc, body: SecretBody, querystring: PurgeQuery, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await purge.purge(userCaller(request), request.body, request.query.organizationId);
      return emptyOk(reply);
    },
  );
};
