import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { access, currentUser } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import { EmptyResponse, IdParams } from '../../http/schemas.js';
import type { CipherImport } from './cipher-import.js';
import type { CipherLifecycle } from './cipher-lifecycle.js';
import type { CipherRow } from './ciphers.repository.js';
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
  cipherJson,
  listJson,
} from './ciphers.schemas.js';

export interface CipherRouteDeps {
  ciphers: CipherService;
  lifecycle: CipherLifecycle;
  importer: CipherImport;
}

const tags = ['ciphers'];
const config = { access: access.user };

/** Cipher responses are written by cipherJson (see there); Fastify sends JSON text as it is. */
function sendJson(reply: FastifyReply, json: string) {
  return reply.type('application/json; charset=utf-8').send(json);
}
const one = (reply: FastifyReply, row: CipherRow) => sendJson(reply, cipherJson(row, 'cipher'));
const many = (reply: FastifyReply, rows: readonly CipherRow[]) => sendJson(reply, listJson(rows.map((r) => cipherJson(r, 'cipher'))));

type Id = { Params: { id: string } };
type Ids = { Body: CipherIdsRequest };

/** `/ciphers`: a user's own items (the personal part of the spec's Ciphers table). */
export const cipherRoutes: FastifyPluginAsync<CipherRouteDeps> = async (app, { ciphers, lifecycle, importer }) => {
  const single = (request: { params: { id: string } }) => ({ ids: [request.params.id], single: true });
  const bulk = (request: { body: CipherIdsRequest }) => ({ ids: request.body.ids, single: false });

  app.get('/ciphers', { config, schema: { tags, response: { 200: CipherListResponse } } }, async (request, reply) => {
    const rows = await ciphers.list(currentUser(request).userId);
    return sendJson(reply, listJson(rows.map((r) => cipherJson(r, 'cipherDetails'))));
  });

  app.get<Id>('/ciphers/:id', { config, schema: { tags, params: IdParams, response: { 200: CipherResponse } } }, async (request, reply) =>
    one(reply, await ciphers.get(currentUser(request).userId, request.params.id)),
  );

  // The web vault asks for full-details; both carry the collections.
  for (const url of ['/ciphers/:id/details', '/ciphers/:id/full-details']) {
    app.get<Id>(url, { config, schema: { tags, params: IdParams, response: { 200: CipherDetailsResponse } } }, async (request, reply) =>
      sendJson(reply, cipherJson(await ciphers.get(currentUser(request).userId, request.params.id), 'cipherDetails')),
    );
  }

  app.post<{ Body: CipherRequest }>(
    '/ciphers',
    { config, schema: { tags, body: CipherRequest, response: { 200: CipherResponse } } },
    async (request, reply) => one(reply, await ciphers.create(currentUser(request).userId, clientContext(request), request.body)),
  );

  // Older clients replace an item, and set folder and favorite, with POST.
  for (const method of ['PUT', 'POST'] as const) {
    app.route<Id & { Body: CipherRequest }>({
      method,
      url: '/ciphers/:id',
      config,
      schema: { tags, params: IdParams, body: CipherRequest, response: { 200: CipherResponse } },
      handler: async (request, reply) =>
        one(reply, await ciphers.update(currentUser(request).userId, clientContext(request), request.params.id, request.body)),
    });
    app.route<Id & { Body: CipherPartialRequest }>({
      method,
      url: '/ciphers/:id/partial',
      config,
      schema: { tags, params: IdParams, body: CipherPartialRequest, response: { 200: CipherResponse } },
      handler: async (request, reply) => one(reply, await ciphers.updatePartial(currentUser(request).userId, request.params.id, request.body)),
    });
    app.route<{ Body: CipherMoveRequest }>({
      method,
      url: '/ciphers/move',
      config,
      schema: { tags, body: CipherMoveRequest, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.move(currentUser(request).userId, { ids: request.body.ids, single: false }, request.body.folderId ?? null);
        return reply.send();
      },
    });
  }

  for (const action of ['archive', 'unarchive'] as const) {
    app.put<Id>(
      `/ciphers/:id/${action}`,
      { config, schema: { tags, params: IdParams, response: { 200: CipherResponse } } },
      async (request, reply) => one(reply, (await lifecycle[action](currentUser(request).userId, single(request)))[0] as CipherRow),
    );
    app.put<Ids>(
      `/ciphers/${action}`,
      { config, schema: { tags, body: CipherIdsRequest, response: { 200: CipherResponseList } } },
      async (request, reply) => many(reply, await lifecycle[action](currentUser(request).userId, bulk(request))),
    );
  }

  app.put<Id>('/ciphers/:id/delete', { config, schema: { tags, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await lifecycle.softDelete(currentUser(request).userId, clientContext(request), single(request));
    return reply.send();
  });
  app.put<Ids>('/ciphers/delete', { config, schema: { tags, body: CipherIdsRequest, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await lifecycle.softDelete(currentUser(request).userId, clientContext(request), bulk(request));
    return reply.send();
  });

  app.put<Id>('/ciphers/:id/restore', { config, schema: { tags, params: IdParams, response: { 200: CipherResponse } } }, async (request, reply) =>
    one(reply, (await lifecycle.restore(currentUser(request).userId, clientContext(request), single(request)))[0] as CipherRow),
  );
  app.put<Ids>('/ciphers/restore', { config, schema: { tags, body: CipherIdsRequest, response: { 200: CipherResponseList } } }, async (request, reply) =>
    many(reply, await lifecycle.restore(currentUser(request).userId, clientContext(request), bulk(request))),
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
      schema: { tags, params: IdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.deletePermanently(currentUser(request).userId, clientContext(request), single(request));
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
      config,
      schema: { tags, body: CipherIdsRequest, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.deletePermanently(currentUser(request).userId, clientContext(request), bulk(request));
        return reply.send();
      },
    });
  }

  app.post<{ Body: ImportCiphersRequest }>(
    '/ciphers/import',
    { config, schema: { tags, body: ImportCiphersRequest, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await importer.import(currentUser(request).userId, clientContext(request), request.body);
      return reply.send();
    },
  );
};
