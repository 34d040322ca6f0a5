import type { FastifyPluginAsync } from 'fastify';
import { access, currentUser } from '../../http/access.js';
import { EmptyResponse, IdParams, ListOf, list } from '../../http/schemas.js';
import type { FolderService } from './folders.service.js';
import { FolderRequest, FolderResponse, toFolderResponse } from './folders.schemas.js';

const tags = ['folders'];

/** `/folders`: a user's folders. Names are encrypted; the server keeps them as given. */
export const folderRoutes: FastifyPluginAsync<{ folders: FolderService }> = async (app, { folders }) => {
  const user = { access: access.user };

  app.get('/folders', { config: user, schema: { tags, response: { 200: ListOf(FolderResponse) } } }, async (request) =>
    list((await folders.list(currentUser(request).userId)).map(toFolderResponse)),
  );

  app.get<{ Params: { id: string } }>(
    '/folders/:id',
    { config: user, schema: { tags, params: IdParams, response: { 200: FolderResponse } } },
    async (request) => toFolderResponse(await folders.get(currentUser(request).userId, request.params.id)),
  );

  app.post<{ Body: { name: string } }>(
    '/folders',
    { config: user, schema: { tags, body: FolderRequest, response: { 200: FolderResponse } } },
    async (request) => toFolderResponse(await folders.create(currentUser(request).userId, request.body.name)),
  );

  // Older clients rename with POST.
  for (const method of ['PUT', 'POST'] as const) {
    app.route<{ Params: { id: string }; Body: { name: string } }>({
      method,
      url: '/folders/:id',
      config: user,
      schema: { tags, params: IdParams, body: FolderRequest, response: { 200: FolderResponse } },
      handler: async (request) => toFolderResponse(await folders.rename(currentUser(request).userId, request.params.id, request.body.name)),
    });
  }

  // Older clients delete with POST /folders/{id}/delete.
  for (const [method, url] of [
    ['DELETE', '/folders/:id'],
    ['POST', '/folders/:id/delete'],
  ] as const) {
    app.route<{ Params: { id: string } }>({
      method,
      url,
      config: user,
      schema: { tags, params: IdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await folders.delete(currentUser(request).userId, request.params.id);
        return reply.send();
      },
    });
  }
};
