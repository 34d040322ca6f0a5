import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse } from '../../http/schemas.js';
import { smCaller } from './sm-access.js';
import { ExportResponse, ImportBody, PortingParams } from './sm-porting.schemas.js';
import type { SmPortingService } from './sm-porting.service.js';

const tags = ['Secrets Manager'];

const ADMINS =
  'Access: a user token with scope api (`secretsManager`) of an owner or admin with Secrets Manager access in an organization that has it; anyone else, machine accounts included, gets 404.';

const docs = {
  export: {
    summary: "Export an organization's Secrets Manager data",
    description: `Answers every project (id, encrypted name) and every secret outside the trash (id, encrypted key, value and note, project ids) of the organization. ${ADMINS}`,
  },
  import: {
    summary: 'Import Secrets Manager data',
    description: `Adds the projects and secrets of an export under new ids, keeping which secret is in which project, all or nothing. At most 1000 projects and 6000 secrets (else 400); a secret in more than one project, or in a project the import does not contain, is a 400; names, keys, values and notes must be encrypted strings within the official lengths (400 naming the field). ${ADMINS}`,
  },
} satisfies Record<string, RouteDoc>;

/** Secrets Manager export and import (`/sm/{organizationId}/…`). */
export const smPortingRoutes: FastifyPluginAsyncTypebox<{ porting: SmPortingService }> = async (app, { porting }) => {
  const config = { access: access.userOrServiceAccount };
  app.get('/sm/:organizationId/export', { config: { ...config, callerLimit: 'export' }, schema: { tags, ...docs.export, params: PortingParams, response: { 200: ExportResponse } } }, async (request) =>
    porting.exportData(smCaller(request), request.params.organizationId),
  );
  app.post('/sm/:organizationId/import', { config: { ...config, bodySize: 'large', callerLimit: 'import' }, schema: { tags, ...docs.import, params: PortingParams, body: ImportBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await porting.importData(smCaller(request), request.params.organizationId, request.body);
    return emptyOk(reply);
  });
};
