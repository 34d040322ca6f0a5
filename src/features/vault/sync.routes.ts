import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { access, currentUser } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import type { SyncService } from './sync.service.js';
import { SyncQuery, SyncResponse, supportsSshKeys, syncBody } from './sync.schemas.js';

/** `GET /sync`: the whole vault in one answer; clients call it when the revision date moved. */
export const syncRoutes: FastifyPluginAsync<{ sync: SyncService }> = async (app, { sync }) => {
  app.get<{ Querystring: { excludeDomains: boolean } }>(
    '/sync',
    { config: { access: access.user }, schema: { tags: ['sync'], querystring: SyncQuery, response: { 200: SyncResponse } } },
    async (request, reply) => {
      const data = await sync.load(currentUser(request).userId, { withSshKeys: supportsSshKeys(clientContext(request).clientVersion) });
      const pieces = syncBody(data, { excludeDomains: request.query.excludeDomains });
      const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
      return reply
        .type('application/json; charset=utf-8')
        .header('content-length', length)
        .send(Readable.from(pieces, { objectMode: false }));
    },
  );
};
