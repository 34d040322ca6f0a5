import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { access } from '../../http/access.js';
import { BadRequest } from '../../http/errors.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { DownloadQuery, EmptyResponse, emptyOk, IdParams } from '../../http/schemas.js';
import { CipherMiniResponse, CipherResponse } from './ciphers.schemas.js';
import type { AttachmentService } from './attachments.service.js';
import { filePart } from '../../platform/storage/multipart.js';
import { AttachmentParams, AttachmentRequest, AttachmentResponseSchema, AttachmentUploadResponse, DeleteAttachmentResponse, ShareUploadQuery } from './attachments.schemas.js';

const tags = ['Items'];
const config = { access: access.user };
const EDIT = 'Access: any signed-in user (`user`) who owns the item or may edit it through a collection; an item they cannot see answers 404, one they may only read 400.';
const ADMIN =
  "Access: any signed-in user (`user`) who may edit the item as an organization admin: a confirmed owner or admin of its organization, or a custom member who may edit any collection, when they edit every item there (always for that custom member; owners and admins while the organization allows admin access to all collection items), the item is in no collection, or they may edit it through one of their collections. Anyone else gets 404, as for an unknown id.";
const EITHER = 'An organization admin who may edit the item as an admin (see `GET /ciphers/{id}/attachment/{attachmentId}/admin`) may too: the admin console uploads here after `adminRequest`.';
const docs = {
  begin: {
    summary: 'Start an attachment upload',
    description: `Reserves an attachment of \`fileSize\` bytes on an item (which must fit in the owner's storage left: the user's quota, or the organization's plan storage; counted once uploaded, and dropped when not uploaded within two hours of the URL or its renewal) and answers where to upload it (\`fileUploadType\` 0, Direct: \`POST /ciphers/{id}/attachment/{attachmentId}\`) with the item; records Cipher_AttachmentCreated (1103). Refused (400) past the file size limit, without storage left, or with a stale \`lastKnownRevisionDate\`. ${EDIT} With \`adminRequest: true\` (the admin console), the item is reached as an organization admin instead and answered in \`cipherMiniResponse\`: ${ADMIN}`,
  },
  legacyAdmin: {
    summary: 'Attach a file in one request (admin console)',
    description: `The older one-step upload (\`POST /ciphers/{id}/attachment\`) for an organization item reached as an organization admin; answers the item as \`cipherMini\` and records Cipher_AttachmentCreated (1103). ${ADMIN}`,
  },
  getAdmin: {
    summary: 'Get an attachment download URL (admin console)',
    description: `Answers an attachment of an organization item with a \`url\` good for one minute, for the admin console. ${ADMIN}`,
  },
  deleteAdmin: {
    summary: 'Delete an attachment (admin console)',
    description: `Deletes an attachment of an organization item and its file, gives its bytes back to the organization's storage, answers the item as \`cipherMini\` and records Cipher_AttachmentDeleted (1104). ${ADMIN}`,
  },
  share: {
    summary: 'Upload an attachment re-encrypted for a share',
    description:
      "Older clients, before sharing one of their items with an organization, upload each attachment that has no key of its own again, re-encrypted with the organization's key: multipart/form-data with the new attachment key in `key` and the file in `data` (its part's file name is the new encrypted file name). The copy waits beside the original and takes its place when the item is shared with that organization (`PUT /ciphers/{id}/share`). Refused (400) without data, past the file size limit, when the organization has no storage or not enough left for the request, for an attachment the item does not have, or when the copy's length differs from the original's (the same file re-encrypted: equal, or 32 bytes longer when the original had no MAC). Access: any signed-in user (`user`) who owns the item (a personal item) and is a confirmed member of `organizationId`; anything else answers 404.",
  },
  renew: {
    summary: 'Renew an attachment upload URL',
    description: `A new hour to upload a reserved attachment whose upload has not happened; an uploaded or unknown attachment answers 404. ${EDIT} ${EITHER}`,
  },
  upload: {
    summary: 'Upload a reserved attachment',
    description: `The encrypted bytes of an attachment reserved by \`POST /ciphers/{id}/attachment/v2\`, as multipart/form-data in \`data\`, within an hour of the reservation. They must be exactly the declared size: otherwise the upload, its file and its reservation are dropped (400) and the client starts again. ${EDIT} ${EITHER}`,
  },
  legacy: {
    summary: 'Attach a file in one request',
    description: `Older clients' one-step upload: multipart/form-data with the encrypted file in \`data\` (its part's file name is the encrypted file name) and the attachment key in \`key\` (sent before the file). The request's Content-Length is checked against the storage left before any byte is written. Answers the item; records Cipher_AttachmentCreated (1103). ${EDIT}`,
  },
  get: {
    summary: 'Get an attachment download URL',
    description:
      'Answers the attachment with a `url` to download its encrypted bytes from, good for one minute. Access: any signed-in user (`user`) who owns the item or reaches it through a collection (read is enough); any other item or attachment answers 404.',
  },
  download: {
    summary: 'Download an attachment',
    description:
      "The encrypted bytes of an attachment, streamed, for a `token` from `GET /ciphers/{id}/attachment/{attachmentId}`; an expired, altered or unknown token answers 404. Access: anyone holding a link (`anonymous`): the token is the proof, as with the official server's signed links.",
  },
  delete: {
    summary: 'Delete an attachment',
    description: `Deletes an attachment (uploaded or only reserved) and its file, gives the bytes it counted back to the owner's storage, answers the item's mini form (\`cipherMini\`, as the official server) and records Cipher_AttachmentDeleted (1104). ${EDIT}`,
  },
} satisfies Record<string, RouteDoc>;

type Params = { Params: { id: string; attachmentId: string } };
/** The item answers come from the service as JSON text (cipherJson); Fastify sends it as it is. */
const json = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);


export const attachmentRoutes: FastifyPluginAsync<{ attachments: AttachmentService; maxFileBytes: number }> = async (
  app,
  { attachments, maxFileBytes },
) => {
  // Upload bodies are read as streams here; the envelope of a file may pass the file limit a little.
  await app.register(multipart, { limits: { fileSize: maxFileBytes + 1 } });

  app.post<{ Params: { id: string }; Body: AttachmentRequest }>(
    '/ciphers/:id/attachment/v2',
    { config, schema: { tags, ...docs.begin, params: IdParams, body: AttachmentRequest, response: { 200: AttachmentUploadResponse } } },
    async (request, reply) => {
      return json(reply, await attachments.begin(userCaller(request), request.params.id, request.body));
    },
  );

  app.get<Params>(
    '/ciphers/:id/attachment/:attachmentId/renew',
    { config, schema: { tags, ...docs.renew, params: AttachmentParams, response: { 200: AttachmentUploadResponse } } },
    async (request) => attachments.renew(userCaller(request), request.params.id, request.params.attachmentId),
  );

  app.post<Params>(
    '/ciphers/:id/attachment/:attachmentId',
    { config, schema: { tags, ...docs.upload, params: AttachmentParams, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      const file = await filePart(request, maxFileBytes);
      await attachments.upload(userCaller(request), request.params.id, request.params.attachmentId, file);
      return emptyOk(reply);
    },
  );

  // The older one-request upload, as a member (answers the item) and as an admin (its mini form).
  for (const [url, doc, reach] of [
    ['/ciphers/:id/attachment', docs.legacy, 'member'],
    ['/ciphers/:id/attachment-admin', docs.legacyAdmin, 'admin'],
  ] as const) {
    app.post<{ Params: { id: string } }>(
      url,
      { config, schema: { tags, ...doc, params: IdParams, response: { 200: reach === 'admin' ? CipherMiniResponse : CipherResponse } } },
      async (request, reply) => {
        const length = declaredLength(request);
        const file = await filePart(request, maxFileBytes);
        return json(reply, await attachments.uploadLegacy(userCaller(request), request.params.id, length, file.fields.key ?? null, file, reach));
      },
    );
  }

  app.post<Params & { Querystring: { organizationId: string } }>(
    '/ciphers/:id/attachment/:attachmentId/share',
    { config, schema: { tags, ...docs.share, params: AttachmentParams, querystring: ShareUploadQuery, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      const length = declaredLength(request);
      const file = await filePart(request, maxFileBytes);
      const { id, attachmentId } = request.params;
      await attachments.uploadForShare(userCaller(request), id, attachmentId, request.query.organizationId, length, file.fields.key ?? null, file);
      return emptyOk(reply);
    },
  );

  app.get<Params>(
    '/ciphers/:id/attachment/:attachmentId/admin',
    { config, schema: { tags, ...docs.getAdmin, params: AttachmentParams, response: { 200: AttachmentResponseSchema } } },
    async (request) => attachments.downloadData(userCaller(request), request.params.id, request.params.attachmentId, 'admin'),
  );

  app.get<Params>(
    '/ciphers/:id/attachment/:attachmentId',
    { config, schema: { tags, ...docs.get, params: AttachmentParams, response: { 200: AttachmentResponseSchema } } },
    async (request) => attachments.downloadData(userCaller(request), request.params.id, request.params.attachmentId),
  );

  app.get<{ Querystring: { token: string } }>(
    '/ciphers/attachment/download',
    {
      config: { access: access.anonymous },
      schema: { tags, ...docs.download, querystring: DownloadQuery, response: { 200: { description: 'The encrypted file (application/octet-stream)' } } },
    },
    async (request, reply) => {
      const file = await attachments.download(request.query.token);
      return reply.type('application/octet-stream').header('content-length', file.size).header('cache-control', 'no-store').send(file.stream);
    },
  );

  for (const [method, url, reach] of [
    ['DELETE', '/ciphers/:id/attachment/:attachmentId', 'member'],
    ['POST', '/ciphers/:id/attachment/:attachmentId/delete', 'member'],
    ['DELETE', '/ciphers/:id/attachment/:attachmentId/admin', 'admin'],
    ['POST', '/ciphers/:id/attachment/:attachmentId/delete-admin', 'admin'],
  ] as const) {
    const doc = reach === 'admin' ? docs.deleteAdmin : docs.delete;
    const current = `DELETE /ciphers/{id}/attachment/{attachmentId}${reach === 'admin' ? '/admin' : ''}`;
    app.route<Params>({
      method,
      url,
      config,
      schema: { tags, ...(method === 'DELETE' ? doc : olderForm(doc, current)), params: AttachmentParams, response: { 200: DeleteAttachmentResponse } },
      handler: async (request, reply) => {
        return json(reply, await attachments.delete(userCaller(request), request.params.id, request.params.attachmentId, reach));
      },
    });
  }
};

/** The upload's declared size (the one-request uploads check it before reading the body). */
function declaredLength(request: FastifyRequest): number {
  const length = Number(request.headers['content-length'] ?? 0);
  if (!Number.isSafeInteger(length) || length < 1) throw new BadRequest('The upload needs a Content-Length.');
  return length;
}
