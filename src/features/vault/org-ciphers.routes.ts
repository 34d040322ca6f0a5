import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, Guid, IdParams } from '../../http/schemas.js';
import { CipherDetailsResponse, CipherMiniResponse, CipherRequest, CipherResponse, listJson } from './ciphers.schemas.js';
import type { OrgCipherService } from './org-ciphers.service.js';

const tags = ['Items'];
const config = { access: access.user };

const USER = 'Access: any signed-in user (`user`); the organization membership and rights are checked by the operation.';
const WRITABLE = 'collections the caller may write to (not read-only, or managed)';
const docs = {
  create: {
    summary: 'Create an organization item',
    description: `Creates an item of an organization the caller is a confirmed member of, in at least one of the ${WRITABLE}, with the caller's own folder and favorite, and records Cipher_Created (1100); the clients send \`{cipher, collectionIds}\` here for organization items. ${USER}`,
  },
  share: {
    summary: 'Share an item with an organization',
    description: `Moves one of the caller's personal items, re-encrypted with the organization key, into an organization they are a confirmed member of and into ${WRITABLE}, and records Cipher_Shared (1105); refused (400) for an organization item or a stale \`lastKnownRevisionDate\`. ${USER}`,
  },
  collections: {
    summary: "Set an item's collections",
    description: `Sets the collections of an organization item the caller may edit and see passwords of: ${WRITABLE} are set as asked, the others keep the item; records Cipher_UpdatedCollections (1106). Answers the item as the caller now sees it, or an empty 200 when they can no longer see it. ${USER}`,
  },
  collectionsV2: {
    summary: "Set an item's collections (v2 answer)",
    description: `Same change as \`PUT /ciphers/{id}/collections\`, answered as \`optionalCipherDetails\`: the item as the caller now sees it, or \`unavailable: true\` when they can no longer see it. ${USER}`,
  },
  shareMany: {
    summary: 'Move several items into an organization',
    description: `Moves up to 500 of the caller's personal items, each re-encrypted with the organization key, into the organization the first one names and into ${WRITABLE}, all or nothing, and records Cipher_Shared (1105) for each; answers the moved items (\`cipherMini\`). 400 for an organization item, a stale \`lastKnownRevisionDate\` or an item listed twice. ${USER}`,
  },
  bulkCollections: {
    summary: 'Add or remove collections on items',
    description: `Adds (or with \`removeCollections\`, removes) ${WRITABLE} on up to 500 items of one organization, all or nothing: an item the caller cannot see there answers 404, one they may not assign 400; records Cipher_UpdatedCollections (1106) per item. ${USER}`,
  },
  admin: {
    summary: 'Read an organization item (admin view)',
    description: `Answers an organization item with all its collections to confirmed members who may view all items or edit or delete any collection, or who manage a collection holding it; anyone else gets 404, as for an unknown id. ${USER}`,
  },
  organizationDetails: {
    summary: "List all of an organization's items",
    description: `Answers every item of the organization \`organizationId\` with all its collections, for confirmed members who may view all items, edit any collection, import and export, or read reports (403 for other members, 404 for non-members). \`includeMemberItems\` is accepted and has no effect. ${USER}`,
  },
  assigned: {
    summary: "List an organization's items assigned to the caller",
    description: `Answers the items of the organization \`organizationId\` in the collections the caller reaches, in the admin view's form (404 for non-members). ${USER}`,
  },
} satisfies Record<string, RouteDoc>;

const Ids = Type.Array(Guid, { maxItems: 10_000 });
export const CipherWithCollections = Type.Object({ cipher: CipherRequest, collectionIds: Type.Optional(Type.Union([Ids, Type.Null()])) });
const ShareManyBody = Type.Object({
  ciphers: Type.Array(Type.Object({ ...CipherRequest.properties, id: Guid }), { maxItems: 500 }),
  collectionIds: Ids,
});
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
const CipherMiniList = Type.Object({ object: Type.Literal('list'), data: Type.Array(CipherMiniResponse), continuationToken: Type.Null() });
const MiniList = Type.Object({ object: Type.Literal('list'), data: Type.Array(CipherMiniDetailsResponse), continuationToken: Type.Null() });
const OrgQuery = Type.Object({ organizationId: Guid, includeMemberItems: Type.Optional(Type.Boolean()) });

type Id = { Params: { id: string } };
/** The service answers items as JSON text (cipherJson); Fastify sends it as it is. */
const send = (reply: { type: (t: string) => { send: (s: string) => unknown } }, text: string) => reply.type('application/json; charset=utf-8').send(text);

/** Organization items: creation in collections, sharing, collections, and the admin views. */
export const orgCipherRoutes: FastifyPluginAsync<{ orgCiphers: OrgCipherService }> = async (app, { orgCiphers }) => {
  app.post<{ Body: Static<typeof CipherWithCollections> }>(
    '/ciphers/create',
    { config, schema: { tags, ...docs.create, body: CipherWithCollections, response: { 200: CipherResponse } } },
    async (request, reply) => {
      const { cipher, collectionIds } = request.body;
      return send(reply, await orgCiphers.create(userCaller(request), { cipher, collectionIds: collectionIds ?? [] }));
    },
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route<Id & { Body: Static<typeof CipherWithCollections> }>({
      method,
      url: '/ciphers/:id/share',
      config,
      schema: { tags, ...(method === 'PUT' ? docs.share : olderForm(docs.share, 'PUT /ciphers/{id}/share')), params: IdParams, body: CipherWithCollections, response: { 200: CipherResponse } },
      handler: async (request, reply) => {
        const { cipher, collectionIds } = request.body;
        return send(reply, await orgCiphers.share(userCaller(request), request.params.id, { cipher, collectionIds: collectionIds ?? [] }));
      },
    });
    app.route<{ Body: Static<typeof ShareManyBody> }>({
      method,
      url: '/ciphers/share',
      config: { ...config, bodySize: 'large', callerLimit: 'bulk' },
      schema: { tags, ...(method === 'PUT' ? docs.shareMany : olderForm(docs.shareMany, 'PUT /ciphers/share')), body: ShareManyBody, response: { 200: CipherMiniList } },
      handler: async (request, reply) => {
        return send(reply, listJson(await orgCiphers.shareMany(userCaller(request), request.body)));
      },
    });
    app.route<Id & { Body: Static<typeof CollectionIdsBody> }>({
      method,
      url: '/ciphers/:id/collections',
      config,
      schema: { tags, ...(method === 'PUT' ? docs.collections : olderForm(docs.collections, 'PUT /ciphers/{id}/collections')), params: IdParams, body: CollectionIdsBody, response: { 200: Type.Union([CipherDetailsResponse, EmptyResponse]) } },
      handler: async (request, reply) => {
        const item = await orgCiphers.updateCollections(userCaller(request), request.params.id, request.body.collectionIds ?? []);
        if (!item) return reply.code(200).send();
        return send(reply, item);
      },
    });
    app.route<Id & { Body: Static<typeof CollectionIdsBody> }>({
      method,
      url: '/ciphers/:id/collections_v2',
      config,
      schema: { tags, ...(method === 'PUT' ? docs.collectionsV2 : olderForm(docs.collectionsV2, 'PUT /ciphers/{id}/collections_v2')), params: IdParams, body: CollectionIdsBody, response: { 200: OptionalCipherDetailsResponse } },
      handler: async (request, reply) => {
        return send(reply, await orgCiphers.updateCollectionsV2(userCaller(request), request.params.id, request.body.collectionIds ?? []));
      },
    });
  }

  app.post<{ Body: Static<typeof BulkCollectionsBody> }>(
    '/ciphers/bulk-collections',
    { config: { ...config, callerLimit: 'bulk' }, schema: { tags, ...docs.bulkCollections, body: BulkCollectionsBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await orgCiphers.bulkCollections(userCaller(request), request.body);
      return reply.code(200).send();
    },
  );

  app.get<Id>('/ciphers/:id/admin', { config, schema: { tags, ...docs.admin, params: IdParams, response: { 200: CipherMiniDetailsResponse } } }, async (request, reply) =>
    send(reply, await orgCiphers.adminGet(userCaller(request), request.params.id)),
  );

  app.get<{ Querystring: Static<typeof OrgQuery> }>(
    '/ciphers/organization-details',
    { config, schema: { tags, ...docs.organizationDetails, querystring: OrgQuery, response: { 200: MiniList } } },
    async (request, reply) => {
      return send(reply, listJson(await orgCiphers.organizationItems(userCaller(request), request.query.organizationId)));
    },
  );

  app.get<{ Querystring: Static<typeof OrgQuery> }>(
    '/ciphers/organization-details/assigned',
    { config, schema: { tags, ...docs.assigned, querystring: OrgQuery, response: { 200: MiniList } } },
    async (request, reply) => {
      return send(reply, listJson(await orgCiphers.assignedItems(userCaller(request), request.query.organizationId)));
    },
  );
};
