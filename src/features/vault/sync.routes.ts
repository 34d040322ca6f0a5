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
    {
      config: { access: access.user },
      schema: {
        tags: ['Sync'],
        summary: 'Sync the vault',
        description:
          "Answers everything a client caches in one document: the caller's profile with their confirmed organizations, folders, the collections they reach, their items and the organization items in those collections, policies and equivalent domains (left out with `excludeDomains=true`); clients call it when the account revision date moved. SSH key items are left out for clients older than 2024.12 or that send no `Bitwarden-Client-Version`, as the official server does. Access: any signed-in user (`user`).",
        querystring: SyncQuery,
        response: { 200: SyncResponse },
      },
    },
    async (request, reply) => {
      const data = await sync.load(currentUser(request).userId, { withSshKeys: supportsSshKeys(clientContext(request).clientVersion) });
      const body = syncBody(data, { excludeDomains: request.query.excludeDomains });
      return reply
        .type('application/json; charset=utf-8')
        .header('content-length', body.length)
        .send(Readable.from(body.chunks, { objectMode: false }));
    },
  );
};
