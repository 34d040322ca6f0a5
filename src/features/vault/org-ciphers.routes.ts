import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import { access, currentUser } from '../../http/access.js';
import { NotFound } from '../../http/errors.js';
import { clientContext } from '../../http/request-context.js';
import { EmptyResponse, Guid, IdParams } from '../../http/schemas.js';
import { CipherDetailsResponse, CipherRequest, CipherResponse, cipherJson, cipherMiniDetailsJson, listJson } from './ciphers.schemas.js';
import type { OrgCipherService } from './org-ciphers.service.js';

const tags = ['ciphers'];
const config = { access: access.user };

const Ids = Type.Array(Guid, { maxItems: 10_000 });
export const CipherWithCollections = Type.Object({ cipher: CipherRequest, collectionIds: Type.Optional(Type.Union([Ids, Type.Null()])) });
export const CollectionIdsBody = Type.Object({ collectionIds: Type.Optional(Type.Union([Ids, Type.Null()])) });
export const BulkCollectionsBody = Type.Object({
  organizationId: Guid,
  cipherIds: Ids,
  collectionIds: Ids,
  removeCollections: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
});
export const OptionalCipherDetailsResponse = Type.Object({
  object: Type.Literal('optionalCipherDetails'),
  unavailable: Type.Boolean({ description: 'The caller can no longer see the item' }),
  cipher: Type.Union([CipherDetailsResponse, Type.Null()]),
});
export const CipherMiniDetailsResponse = Type.Object(
  { object: Type.Literal('cipherMiniDetails'), id: Guid, organizationId: Guid, collectionIds: Type.Array(Guid) },
  { additionalProperties: true, description: 'An item in the admin views (CipherMiniDetailsResponseModel): content, no per-user fields' },
);
const MiniList = Type.Object({ object: Type.Literal('list'), data: Type.Array(CipherMiniDetailsResponse), continuationToken: Type.Null() });
const OrgQuery = Type.Object({ organizationId: Guid, includeMemberItems: Type.Optional(Type.Boolean()) });

type Id = { Params: { id: string } };
const send = (reply: { type: (t: string) => { send: (s: string) => unknown } }, text: string) => reply.type('application/json; charset=utf-8').send(text);

/** Organization items: creation in collections, sharing, collections, and the admin views. */
export const orgCipherRoutes: FastifyPluginAsync<{ orgCiphers: OrgCipherService }> = async (app, { orgCiphers }) => {
  app.post<{ Body: Static<typeof CipherWithCollections> }>(
    '/ciphers/create',
    { config, schema: { tags, body: CipherWithCollections, response: { 200: CipherResponse } } },
    async (request, reply) => {
      const { cipher, collectionIds } = request.body;
      const row = await orgCiphers.create(currentUser(request).userId, clientContext(request), { cipher, collectionIds: collectionIds ?? [] });
      return send(reply, cipherJson(row, 'cipher'));
    },
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route<Id & { Body: Static<typeof CipherWithCollections> }>({
      method,
      url: '/ciphers/:id/share',
      config,
      schema: { tags, params: IdParams, body: CipherWithCollections, response: { 200: CipherResponse } },
      handler: async (request, reply) => {
        const { cipher, collectionIds } = request.body;
        const row = await orgCiphers.share(currentUser(request).userId, clientContext(request), request.params.id, { cipher, collectionIds: collectionIds ?? [] });
        return send(reply, cipherJson(row, 'cipher'));
      },
    });
    app.route<Id & { Body: Static<typeof CollectionIdsBody> }>({
      method,
      url: '/ciphers/:id/collections',
      config,
      schema: { tags, params: IdParams, body: CollectionIdsBody, response: { 200: Type.Union([CipherDetailsResponse, EmptyResponse]) } },
      handler: async (request, reply) => {
        const row = await orgCiphers.updateCollections(currentUser(request).userId, clientContext(request), request.params.id, request.body.collectionIds ?? []);
        if (!row) return reply.code(200).send();
        return send(reply, cipherJson(row, 'cipherDetails'));
      },
    });
    app.route<Id & { Body: Static<typeof CollectionIdsBody> }>({
      method,
      url: '/ciphers/:id/collections_v2',
      config,
      schema: { tags, params: IdParams, body: CollectionIdsBody, response: { 200: OptionalCipherDetailsResponse } },
      handler: async (request, reply) => {
        const row = await orgCiphers.updateCollections(currentUser(request).userId, clientContext(request), request.params.id, request.body.collectionIds ?? []);
        return send(reply, `{"object":"optionalCipherDetails","unavailable":${row ? 'false' : 'true'},"cipher":${row ? cipherJson(row, 'cipherDetails') : 'null'}}`);
      },
    });
  }

  app.post<{ Body: Static<typeof BulkCollectionsBody> }>(
    '/ciphers/bulk-collections',
    { config, schema: { tags, body: BulkCollectionsBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await orgCiphers.bulkCollections(currentUser(request).userId, clientContext(request), request.body);
      return reply.code(200).send();
    },
  );

  app.get<Id>('/ciphers/:id/admin', { config, schema: { tags, params: IdParams, response: { 200: CipherMiniDetailsResponse } } }, async (request, reply) =>
    send(reply, cipherMiniDetailsJson(await orgCiphers.adminGet(currentUser(request).userId, request.params.id))),
  );

  app.get<{ Querystring: Static<typeof OrgQuery> }>(
    '/ciphers/organization-details',
    { config, schema: { tags, querystring: OrgQuery, response: { 200: MiniList } } },
    async (request, reply) => {
      const userId = currentUser(request).userId;
      const membership = await orgCiphers.membership(request.query.organizationId, userId);
      if (!membership) throw new NotFound();
      const rows = await orgCiphers.organizationItems(membership, userId);
      return send(reply, listJson(rows.map(cipherMiniDetailsJson)));
    },
  );

  app.get<{ Querystring: Static<typeof OrgQuery> }>(
    '/ciphers/organization-details/assigned',
    { config, schema: { tags, querystring: OrgQuery, response: { 200: MiniList } } },
    async (request, reply) => {
      const userId = currentUser(request).userId;
      const membership = await orgCiphers.membership(request.query.organizationId, userId);
      if (!membership) throw new NotFound();
      const rows = await orgCiphers.assignedItems(membership, userId);
      return send(reply, listJson(rows.map((r) => cipherMiniDetailsJson(r))));
    },
  );
};
