import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, Guid, IdParams, ListOf, list } from '../../http/schemas.js';
import type { FolderService } from './folders.service.js';
import { FolderRequest, FolderResponse } from './folders.schemas.js';

const tags = ['Folders'];

const USER = 'Access: any signed-in user (`user`), on their own folders only.';
const docs = {
  list: { summary: 'List folders', description: `Answers the caller's folders; names are encrypted by the client and kept as given. ${USER}` },
  get: { summary: 'Read a folder', description: `Answers one of the caller's folders; another user's folder answers 404, exactly like a missing one. ${USER}` },
  create: { summary: 'Create a folder', description: `Creates a folder with the encrypted name given and moves the caller's vault revision. ${USER}` },
  rename: { summary: 'Rename a folder', description: `Replaces the encrypted name of one of the caller's folders (404 for any other). ${USER}` },
  delete: {
    summary: 'Delete a folder',
    description: `Deletes one of the caller's folders (404 for any other); the items it held move to no folder and count as changed. ${USER}`,
  },
  deleteMany: {
    summary: 'Delete several folders',
    description: `Deletes the caller's folders among \`ids\` (other ids are passed over; an empty list is refused), all at once; their items move to no folder. ${USER}`,
  },
  deleteAll: { summary: 'Delete every folder', description: `Deletes all of the caller's folders at once; their items move to no folder. ${USER}` },
} satisfies Record<string, RouteDoc>;

const FolderIdsBody = Type.Object({ ids: Type.Array(Guid, { maxItems: 10_000 }) });

/** `/folders`: a user's folders. Names are encrypted; the server keeps them as given. */
export const folderRoutes: FastifyPluginAsync<{ folders: FolderService }> = async (app, { folders }) => {
  const user = { access: access.user };

  app.get('/folders', { config: user, schema: { tags, ...docs.list, response: { 200: ListOf(FolderResponse) } } }, async (request) =>
    list(await folders.list(userCaller(request))),
  );

  app.get<{ Params: { id: string } }>(
    '/folders/:id',
    { config: user, schema: { tags, ...docs.get, params: IdParams, response: { 200: FolderResponse } } },
    async (request) => folders.get(userCaller(request), request.params.id),
  );

  app.post<{ Body: { name: string } }>(
    '/folders',
    { config: user, schema: { tags, ...docs.create, body: FolderRequest, response: { 200: FolderResponse } } },
    async (request) => folders.create(userCaller(request), request.body.name),
  );

  // Older clients rename with POST.
  for (const method of ['PUT', 'POST'] as const) {
    app.route<{ Params: { id: string }; Body: { name: string } }>({
      method,
      url: '/folders/:id',
      config: user,
      schema: { tags, ...(method === 'PUT' ? docs.rename : olderForm(docs.rename, 'PUT /folders/{id}')), params: IdParams, body: FolderRequest, response: { 200: FolderResponse } },
      handler: async (request) => folders.rename(userCaller(request), request.params.id, request.body.name),
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
      schema: { tags, ...(method === 'DELETE' ? docs.delete : olderForm(docs.delete, 'DELETE /folders/{id}')), params: IdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await folders.delete(userCaller(request), request.params.id);
        return reply.send();
      },
    });
  }

  app.delete<{ Body: Static<typeof FolderIdsBody> }>('/folders', { config: user, schema: { tags, ...docs.deleteMany, body: FolderIdsBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await folders.deleteMany(userCaller(request), request.body.ids);
    return reply.send();
  });
  app.delete('/folders/all', { config: user, schema: { tags, ...docs.deleteAll, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await folders.deleteMany(userCaller(request), 'all');
    return reply.send();
  });
};
