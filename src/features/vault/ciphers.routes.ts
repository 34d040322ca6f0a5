import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, IdParams } from '../../http/schemas.js';
import type { CipherImport } from './cipher-import.js';
import type { CipherLifecycle } from './cipher-lifecycle.js';
import type { CipherService } from './ciphers.service.js';
import {
  CipherDetailsResponse,
  CipherIdsRequest,
  CipherListResponse,
  CipherMoveRequest,
  CipherPartialRequest,
  CipherRequest,
  CipherResponse,
  CipherResponseList,
  ImportCiphersRequest,
  listJson,
} from './ciphers.schemas.js';

export interface CipherRouteDeps {
  ciphers: CipherService;
  lifecycle: CipherLifecycle;
  importer: CipherImport;
}

const tags = ['Items'];
const config = { access: access.user };
/** Routes that act on many items at once count against the caller's bulk limit. */
const bulkConfig = { ...config, callerLimit: 'bulk' } as const;

const USER = 'Access: any signed-in user (`user`); organization items need the matching right through a collection.';
const ONE = 'An id the caller cannot see answers 404, one they lack the right for 400.';
const MANY = 'At most 500 ids; ids the caller cannot see or lacks the right for are skipped.';
const docs = {
  list: {
    summary: 'List items',
    description: `Answers the caller's own items and the organization items they reach through collections, with their own folder, favorite and archive state and their rights. ${USER}`,
  },
  get: {
    summary: 'Read an item',
    description: `Answers one item the caller owns or reaches through a collection (without its collection ids); any other id answers 404. ${USER}`,
  },
  details: {
    summary: 'Read an item with its collections',
    description: `Like \`GET /ciphers/{id}\`, in the details form that carries the ids of the collections the caller sees it in; the web vault asks for \`full-details\`. ${USER}`,
  },
  create: {
    summary: 'Create an item',
    description:
      "Creates a personal item of the caller, in one of their folders or none, after checking the shape of every encrypted field, and records Cipher_Created (1100); organization items are refused (400 naming `organizationId`): they are created with `POST /ciphers/create`. Access: any signed-in user (`user`).",
  },
  update: {
    summary: 'Replace an item',
    description: `Replaces the content of an item the caller owns or may edit, and their own folder and favorite for it, and records Cipher_Updated (1101); refused (400) in the trash, when changing its organization, or when \`lastKnownRevisionDate\` is older than the stored revision (more than a second). ${USER}`,
  },
  partial: {
    summary: "Set an item's folder and favorite",
    description: `Sets the caller's own folder and favorite for an item they can see, in any state (trash and archive too); an organization item's shared revision date does not move. ${USER}`,
  },
  move: {
    summary: 'Move items to a folder',
    description: `Files items the caller can see into one of their folders, or into none without \`folderId\`. ${MANY} ${USER}`,
  },
  archive: {
    summary: 'Archive an item',
    description: `Archives an item for the caller (archive is per user) and answers it; an archived item is no change, one in the trash is refused (400). ${ONE} ${USER}`,
  },
  archiveMany: {
    summary: 'Archive items',
    description: `Archives items for the caller and answers those it archived; items in the trash or already archived are skipped. ${MANY} ${USER}`,
  },
  unarchive: {
    summary: 'Unarchive an item',
    description: `Takes an item out of the caller's archive, in the trash or not, and answers it; an item not archived is no change. ${ONE} ${USER}`,
  },
  unarchiveMany: {
    summary: 'Unarchive items',
    description: `Takes items out of the caller's archive and answers those it changed. ${MANY} ${USER}`,
  },
  softDelete: {
    summary: 'Move an item to the trash',
    description: `Moves an item to the trash and records Cipher_SoftDeleted (1115); an item already there keeps its first deletion date. ${ONE} ${USER}`,
  },
  softDeleteMany: {
    summary: 'Move items to the trash',
    description: `Moves items to the trash and records Cipher_SoftDeleted (1115) for each; items already there are no change. ${MANY} ${USER}`,
  },
  restore: {
    summary: 'Restore an item from the trash',
    description: `Takes an item out of the trash, answers it and records Cipher_Restored (1116); an archived item returns to the archive, one not in the trash is no change. ${ONE} ${USER}`,
  },
  restoreMany: {
    summary: 'Restore items from the trash',
    description: `Takes items out of the trash, answers those it restored and records Cipher_Restored (1116) for each. ${MANY} ${USER}`,
  },
  delete: {
    summary: 'Delete an item permanently',
    description: `Deletes an item for good, in any state, and records Cipher_Deleted (1102); its audit events remain. ${ONE} ${USER}`,
  },
  deleteMany: {
    summary: 'Delete items permanently',
    description: `Deletes items for good, in any state, and records Cipher_Deleted (1102) for each. ${MANY} ${USER}`,
  },
  import: {
    summary: 'Import a vault',
    description:
      "What `bw import` sends: the folders, items and folder relationships of a personal import, created in one transaction within Bitwarden's limits (7,000 items and relationships, 2,000 folders), with Cipher_Created (1100) for each item; a folder sent with the id of one of the caller's folders is reused, and organization items are refused. Access: any signed-in user (`user`).",
  },
} satisfies Record<string, RouteDoc>;

/** The services answer items as JSON text (cipherJson, see there); Fastify sends it as it is. */
function sendJson(reply: FastifyReply, json: string) {
  return reply.type('application/json; charset=utf-8').send(json);
}

type Id = { Params: { id: string } };
type Ids = { Body: CipherIdsRequest };

/** `/ciphers`: a user's own items (the personal part of the spec's Ciphers table). */
export const cipherRoutes: FastifyPluginAsync<CipherRouteDeps> = async (app, { ciphers, lifecycle, importer }) => {
  const many = (reply: FastifyReply, items: readonly string[]) => sendJson(reply, listJson(items));
  const single = (request: { params: { id: string } }) => ({ ids: [request.params.id], single: true });
  const bulk = (request: { body: CipherIdsRequest }) => ({ ids: request.body.ids, single: false });

  app.get('/ciphers', { config, schema: { tags, ...docs.list, response: { 200: CipherListResponse } } }, async (request, reply) => {
    return many(reply, await ciphers.list(userCaller(request)));
  });

  app.get<Id>('/ciphers/:id', { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: CipherResponse } } }, async (request, reply) =>
    sendJson(reply, await ciphers.get(userCaller(request), request.params.id)),
  );

  // The web vault asks for full-details; both carry the collections.
  for (const url of ['/ciphers/:id/details', '/ciphers/:id/full-details']) {
    app.get<Id>(url, { config, schema: { tags, ...docs.details, params: IdParams, response: { 200: CipherDetailsResponse } } }, async (request, reply) =>
      sendJson(reply, await ciphers.details(userCaller(request), request.params.id)),
    );
  }

  app.post<{ Body: CipherRequest }>(
    '/ciphers',
    { config, schema: { tags, ...docs.create, body: CipherRequest, response: { 200: CipherResponse } } },
    async (request, reply) => sendJson(reply, await ciphers.create(userCaller(request), request.body)),
  );

  // Older clients replace an item, and set folder and favorite, with POST.
  for (const method of ['PUT', 'POST'] as const) {
    app.route<Id & { Body: CipherRequest }>({
      method,
      url: '/ciphers/:id',
      config,
      schema: { tags, ...(method === 'PUT' ? docs.update : olderForm(docs.update, 'PUT /ciphers/{id}')), params: IdParams, body: CipherRequest, response: { 200: CipherResponse } },
      handler: async (request, reply) =>
        sendJson(reply, await ciphers.update(userCaller(request), request.params.id, request.body)),
    });
    app.route<Id & { Body: CipherPartialRequest }>({
      method,
      url: '/ciphers/:id/partial',
      config,
      schema: { tags, ...(method === 'PUT' ? docs.partial : olderForm(docs.partial, 'PUT /ciphers/{id}/partial')), params: IdParams, body: CipherPartialRequest, response: { 200: CipherResponse } },
      handler: async (request, reply) => sendJson(reply, await ciphers.updatePartial(userCaller(request), request.params.id, request.body)),
    });
    app.route<{ Body: CipherMoveRequest }>({
      method,
      url: '/ciphers/move',
      config: bulkConfig,
      schema: { tags, ...(method === 'PUT' ? docs.move : olderForm(docs.move, 'PUT /ciphers/move')), body: CipherMoveRequest, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.move(userCaller(request), { ids: request.body.ids, single: false }, request.body.folderId ?? null);
        return reply.send();
      },
    });
  }

  for (const action of ['archive', 'unarchive'] as const) {
    app.put<Id>(
      `/ciphers/:id/${action}`,
      { config, schema: { tags, ...docs[action], params: IdParams, response: { 200: CipherResponse } } },
      async (request, reply) => sendJson(reply, (await lifecycle[action](userCaller(request), single(request)))[0] as string),
    );
    app.put<Ids>(
      `/ciphers/${action}`,
      { config: bulkConfig, schema: { tags, ...docs[`${action}Many`], body: CipherIdsRequest, response: { 200: CipherResponseList } } },
      async (request, reply) => many(reply, await lifecycle[action](userCaller(request), bulk(request))),
    );
  }

  app.put<Id>('/ciphers/:id/delete', { config, schema: { tags, ...docs.softDelete, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await lifecycle.softDelete(userCaller(request), single(request));
    return reply.send();
  });
  app.put<Ids>('/ciphers/delete', { config: bulkConfig, schema: { tags, ...docs.softDeleteMany, body: CipherIdsRequest, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await lifecycle.softDelete(userCaller(request), bulk(request));
    return reply.send();
  });

  app.put<Id>('/ciphers/:id/restore', { config, schema: { tags, ...docs.restore, params: IdParams, response: { 200: CipherResponse } } }, async (request, reply) =>
    sendJson(reply, (await lifecycle.restore(userCaller(request), single(request)))[0] as string),
  );
  app.put<Ids>('/ciphers/restore', { config: bulkConfig, schema: { tags, ...docs.restoreMany, body: CipherIdsRequest, response: { 200: CipherResponseList } } }, async (request, reply) =>
    many(reply, await lifecycle.restore(userCaller(request), bulk(request))),
  );

  // Permanent deletion; older clients use the POST forms.
  for (const [method, url] of [
    ['DELETE', '/ciphers/:id'],
    ['POST', '/ciphers/:id/delete'],
  ] as const) {
    app.route<Id>({
      method,
      url,
      config,
      schema: { tags, ...(method === 'DELETE' ? docs.delete : olderForm(docs.delete, 'DELETE /ciphers/{id}')), params: IdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.deletePermanently(userCaller(request), single(request));
        return reply.send();
      },
    });
  }
  for (const [method, url] of [
    ['DELETE', '/ciphers'],
    ['POST', '/ciphers/delete'],
  ] as const) {
    app.route<Ids>({
      method,
      url,
      config: bulkConfig,
      schema: { tags, ...(method === 'DELETE' ? docs.deleteMany : olderForm(docs.deleteMany, 'DELETE /ciphers')), body: CipherIdsRequest, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.deletePermanently(userCaller(request), bulk(request));
        return reply.send();
      },
    });
  }

  app.post<{ Body: ImportCiphersRequest }>(
    '/ciphers/import',
    { config: { ...config, bodySize: 'large', callerLimit: 'import' }, schema: { tags, ...docs.import, body: ImportCiphersRequest, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await importer.import(userCaller(request), request.body);
      return reply.send();
    },
  );
};
