import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import type { OrganizationExport } from './org-export.js';

const doc: RouteDoc = {
  summary: "Export an organization's vault",
  description:
    "Answers the organization's collections and items (in the admin views' form, with each item's collections) for the admin console's export: the whole vault to owners, admins and custom members who may import and export; to any other confirmed member, the collections they manage and the items in them (404 when they manage none). Access: a confirmed member of the organization (`orgMember`).",
};

const ExportResponse = Type.Object(
  { object: Type.Literal('organizationExport'), collections: Type.Array(Type.Object({ object: Type.Literal('collection') }, { additionalProperties: true })), ciphers: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { description: 'OrganizationExportResponseModel' },
);

export const organizationExportRoutes: FastifyPluginAsync<{ exporter: OrganizationExport; orgAccess: OrgAccess }> = async (app, { exporter, orgAccess }) => {
  app.get<{ Params: { orgId: string } }>(
    '/organizations/:orgId/export',
    { config: { access: orgAccess.member('orgId') }, schema: { tags: ['Items'], ...doc, params: OrgParams, response: { 200: ExportResponse } } },
    // The service answers JSON text (the items are written by cipherMiniDetailsJson); Fastify sends it as it is.
    async (request, reply) => reply.type('application/json; charset=utf-8').send(await exporter.export(memberCaller(request))),
  );
};
