import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { Email, emptyOk, EmptyResponse, Nullable, OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import type { PublicApiService } from './public-api.service.js';

const ExternalId = Type.String({ minLength: 1, maxLength: 300 });

/** The official ImportOrganizationUsersRequestModel (the private route's body until 2024-08). */
const PrivateImportBody = Type.Object({
  groups: Type.Optional(
    Nullable(Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), externalId: ExternalId, users: Type.Optional(Nullable(Type.Array(ExternalId))) }))),
  ),
  users: Type.Optional(Nullable(Type.Array(Type.Object({ email: Type.Optional(Nullable(Email)), externalId: ExternalId, deleted: Type.Optional(Type.Boolean()) })))),
  overwriteExisting: Type.Optional(Type.Boolean()),
  largeImport: Type.Optional(Type.Boolean()),
});

const docs = {
  importDirectory: {
    summary: 'Sync members and groups from a directory (signed in)',
    description:
      'The Directory Connector\'s sync as older releases send it, signed in as an owner or admin rather than with the organization\'s API key: the same import as `POST /public/organization/import`, in one transaction (members matched by external id or linked by email, new ones invited and mailed, those marked `deleted` removed; groups created or renamed by external id with their members; with `overwriteExisting`, members and groups with an external id the directory no longer lists removed; owners never removed), with the body\'s older field names (`users`, and a group\'s `users`). On the cloud variant more than 2000 groups or 2000 enabled users need `largeImport` ("You cannot import this much data at once."). The events name the caller as the acting user. (The official server served this route until 2024-08.) Access: a confirmed owner or admin (`orgAdmin`, the official OrganizationAdmin); anyone else gets 404.',
  },
} satisfies Record<string, RouteDoc>;

/** `POST /organizations/{orgId}/import`: the directory import of the public API, for a signed-in owner or admin. */
export const directoryImportRoutes: FastifyPluginAsyncTypebox<{ publicApi: PublicApiService; orgAccess: OrgAccess }> = async (app, { publicApi, orgAccess }) => {
  app.post(
    '/organizations/:orgId/import',
    {
      config: { access: orgAccess.admin(), bodySize: 'large', callerLimit: 'import' },
      schema: { tags: ['Members'], ...docs.importDirectory, params: OrgParams, body: PrivateImportBody, response: { 200: EmptyResponse } },
    },
    async (request, reply) => {
      const body: Static<typeof PrivateImportBody> = request.body;
      await publicApi.importDirectoryAs(
        memberCaller(request),
        {
          groups: (body.groups ?? []).map((g) => ({ name: g.name, externalId: g.externalId, memberExternalIds: g.users ?? [] })),
          members: body.users ?? [],
          overwriteExisting: body.overwriteExisting ?? false,
          largeImport: body.largeImport ?? false,
        },
      );
      return emptyOk(reply);
    },
  );
};
