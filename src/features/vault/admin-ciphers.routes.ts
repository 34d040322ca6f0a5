import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, Guid, IdParams } from '../../http/schemas.js';
import type { OrgCipherImport } from './cipher-import-org.js';
import type { CipherLifecycle, Selection } from './cipher-lifecycle.js';
import type { CipherService } from './ciphers.service.js';
import { CipherMiniResponse, CipherRequest, ImportCiphersRequest, listJson } from './ciphers.schemas.js';
import { CipherMiniDetailsResponse, CipherWithCollections, CollectionIdsBody } from './org-ciphers.routes.js';
import type { OrgCipherService } from './org-ciphers.service.js';

export interface AdminCipherRouteDeps {
  ciphers: CipherService;
  lifecycle: CipherLifecycle;
  orgCiphers: OrgCipherService;
  orgImport: OrgCipherImport;
}

const tags = ['Items'];
const config = { access: access.user };
const bulkConfig = { ...config, callerLimit: 'bulk' } as const;

const ADMIN =
  'Access: any signed-in user (`user`); the operation admits confirmed owners and admins and custom members who may edit any collection, for every item when they edit every item (a custom member always, owners and admins while the organization allows admin access to all items), else items in no collection and items they may edit (or delete) through their own collections; anyone else gets 404, as for an unknown id.';
const MANY = 'All or nothing: at most 500 ids, every one an item of `organizationId` the caller may act on as its admin, else 404.';
const docs = {
  create: {
    summary: 'Create an organization item (admin console)',
    description:
      "Creates an item of `cipher.organizationId` in any of its collections, or in none, and records Cipher_Created (1100); only for members who edit every item of the organization (owners and admins while it allows admin access to all items, custom members who may edit any collection), 404 for anyone else. The caller's folder and favorite are not set. Access: any signed-in user (`user`).",
  },
  update: { summary: 'Replace an organization item (admin console)', description: `Replaces the content of an organization item and records Cipher_Updated (1101); refused (400) in the trash, when changing its organization, or when \`lastKnownRevisionDate\` is stale. ${ADMIN}` },
  collections: {
    summary: "Set an organization item's collections (admin console)",
    description: `Sets exactly the collections of an organization item, answers it with all its collections and records Cipher_UpdatedCollections (1106); an admin not let at every item may name only collections they may write to (404 otherwise). ${ADMIN}`,
  },
  softDelete: { summary: 'Move an organization item to the trash (admin console)', description: `Moves the item to the trash and records Cipher_SoftDeleted (1115). ${ADMIN}` },
  softDeleteMany: { summary: 'Move organization items to the trash (admin console)', description: `Moves items to the trash and records Cipher_SoftDeleted (1115) for each. ${MANY} ${ADMIN}` },
  delete: { summary: 'Delete an organization item permanently (admin console)', description: `Deletes the item for good and records Cipher_Deleted (1102). ${ADMIN}` },
  deleteMany: { summary: 'Delete organization items permanently (admin console)', description: `Deletes items for good and records Cipher_Deleted (1102) for each. ${MANY} ${ADMIN}` },
  restore: { summary: 'Restore an organization item (admin console)', description: `Takes the item out of the trash, answers it and records Cipher_Restored (1116). ${ADMIN}` },
  restoreMany: { summary: 'Restore organization items (admin console)', description: `Takes items out of the trash, answers those it restored and records Cipher_Restored (1116) for each. ${MANY} ${ADMIN}` },
  import: {
    summary: 'Import into an organization',
    description:
      "What the admin console's Import data sends: items, collections and which item goes in which collection (`collectionRelationships`: item index → collection index), written in one transaction, all or nothing, within Bitwarden's limits (40,000 items, 2,000 collections, 80,000 relationships); a collection sent with the id of one of the organization's collections is reused, the others are created and managed by the importer. Records Cipher_Created (1100) and Collection_Created (1300). Access: any signed-in user (`user`); the operation admits members who may import and export (owners, admins, the custom flag), or who manage every existing collection named and, for new ones, may create collections; 404 for anyone else.",
  },
} satisfies Record<string, RouteDoc>;

const AdminIdsRequest = Type.Object({ ids: Type.Array(Guid), organizationId: Guid });
type AdminIds = Static<typeof AdminIdsRequest>;
const MiniList = Type.Object({ object: Type.Literal('list'), data: Type.Array(CipherMiniResponse), continuationToken: Type.Null() });
const OrgImportRequest = Type.Object({
  ciphers: ImportCiphersRequest.properties.ciphers,
  collections: Type.Array(Type.Object({ name: ImportCiphersRequest.properties.folders.items.properties.name, id: Type.Optional(Type.Union([Guid, Type.Null()])), externalId: Type.Optional(Type.Union([Type.String({ maxLength: 300 }), Type.Null()])) })),
  collectionRelationships: Type.Array(Type.Object({ key: Type.Integer({ minimum: 0 }), value: Type.Integer({ minimum: 0 }) })),
});
const ImportQuery = Type.Object({ organizationId: Guid });

type Id = { Params: { id: string } };
const send = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);

/** The admin console's item routes (`CiphersController`'s admin forms) and the organization import. */
export const adminCipherRoutes: FastifyPluginAsync<AdminCipherRouteDeps> = async (app, { ciphers, lifecycle, orgCiphers, orgImport }) => {
  const single = (request: { params: { id: string } }): Selection => ({ ids: [request.params.id], single: true, admin: { organizationId: null } });
  const bulk = (request: { body: AdminIds }): Selection => ({ ids: request.body.ids, single: false, admin: { organizationId: request.body.organizationId } });

  app.post<{ Body: Static<typeof CipherWithCollections> }>(
    '/ciphers/admin',
    { config, schema: { tags, ...docs.create, body: CipherWithCollections, response: { 200: CipherMiniResponse } } },
    async (request, reply) => {
      const { cipher, collectionIds } = request.body;
      return send(reply, await orgCiphers.createAsAdmin(userCaller(request), { cipher, collectionIds: collectionIds ?? [] }));
    },
  );

  for (const method of ['PUT', 'POST'] as const) {
    const older = method === 'POST';
    app.route<Id & { Body: CipherRequest }>({
      method,
      url: '/ciphers/:id/admin',
      config,
      schema: { tags, ...(older ? olderForm(docs.update, 'PUT /ciphers/{id}/admin') : docs.update), params: IdParams, body: CipherRequest, response: { 200: CipherMiniResponse } },
      handler: async (request, reply) => send(reply, await ciphers.update(userCaller(request), request.params.id, request.body, true)),
    });
    app.route<Id & { Body: Static<typeof CollectionIdsBody> }>({
      method,
      url: '/ciphers/:id/collections-admin',
      config,
      schema: {
        tags,
        ...(older ? olderForm(docs.collections, 'PUT /ciphers/{id}/collections-admin') : docs.collections),
        params: IdParams,
        body: CollectionIdsBody,
        response: { 200: CipherMiniDetailsResponse },
      },
      handler: async (request, reply) => {
        return send(reply, await orgCiphers.updateCollectionsAsAdmin(userCaller(request), request.params.id, request.body.collectionIds ?? []));
      },
    });
  }

  app.put<Id>('/ciphers/:id/delete-admin', { config, schema: { tags, ...docs.softDelete, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await lifecycle.softDelete(userCaller(request), single(request));
    return reply.send();
  });
  app.put<{ Body: AdminIds }>('/ciphers/delete-admin', { config: bulkConfig, schema: { tags, ...docs.softDeleteMany, body: AdminIdsRequest, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await lifecycle.softDelete(userCaller(request), bulk(request));
    return reply.send();
  });

  // Permanent deletion; older clients use the POST forms.
  for (const [method, url] of [
    ['DELETE', '/ciphers/:id/admin'],
    ['POST', '/ciphers/:id/delete-admin'],
  ] as const) {
    app.route<Id>({
      method,
      url,
      config,
      schema: { tags, ...(method === 'DELETE' ? docs.delete : olderForm(docs.delete, 'DELETE /ciphers/{id}/admin')), params: IdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.deletePermanently(userCaller(request), single(request));
        return reply.send();
      },
    });
  }
  for (const [method, url] of [
    ['DELETE', '/ciphers/admin'],
    ['POST', '/ciphers/delete-admin'],
  ] as const) {
    app.route<{ Body: AdminIds }>({
      method,
      url,
      config: bulkConfig,
      schema: { tags, ...(method === 'DELETE' ? docs.deleteMany : olderForm(docs.deleteMany, 'DELETE /ciphers/admin')), body: AdminIdsRequest, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await lifecycle.deletePermanently(userCaller(request), bulk(request));
        return reply.send();
      },
    });
  }

  app.put<Id>('/ciphers/:id/restore-admin', { config, schema: { tags, ...docs.restore, params: IdParams, response: { 200: CipherMiniResponse } } }, async (request, reply) =>
    send(reply, (await lifecycle.restore(userCaller(request), single(request)))[0] as string),
  );
  app.put<{ Body: AdminIds }>('/ciphers/restore-admin', { config: bulkConfig, schema: { tags, ...docs.restoreMany, body: AdminIdsRequest, response: { 200: MiniList } } }, async (request, reply) => {
    return send(reply, listJson(await lifecycle.restore(userCaller(request), bulk(request))));
  });

  app.post<{ Querystring: Static<typeof ImportQuery>; Body: Static<typeof OrgImportRequest> }>(
    '/ciphers/import-organization',
    { config: { ...config, bodySize: 'large', callerLimit: 'import' }, schema: { tags, ...docs.import, querystring: ImportQuery, body: OrgImportRequest, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await orgImport.import(userCaller(request), request.query.organizationId, request.body);
      return reply.send();
    },
  );
};
