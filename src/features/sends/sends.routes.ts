import multipart from '@fastify/multipart';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { access, bearerToken } from '../../http/access.js';
import { anonymousCaller, userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { DownloadQuery, EmptyResponse, emptyOk, IdParams, list } from '../../http/schemas.js';
import { filePart } from '../../platform/storage/multipart.js';
import type { SendAccess } from './send-access.js';
import {
  SendAccessRequest,
  SendAccessResponse,
  SendFileDownloadResponse,
  SendFileUploadResponse,
  SendListResponse,
  SendRequest,
  SendResponse,
} from './sends.schemas.js';
import type { SendService } from './sends.service.js';

const tags = ['Send'];
const config = { access: access.user };
const OWN = 'Access: any signed-in user (`user`), on their own Sends; any other id answers 404.';
const POLICIES =
  'Refused (400, with the official texts) under an organization\'s Disable Send policy, when hiding the email against its Send options policy, or against its Send controls policy (who may open Sends, the domains of their addresses, their types, how long they live); owners and admins are exempt. Dates follow the official rules (deletion within 31 days, expiration before deletion). `authType` 0 makes the Send email-verified: `emails` must list at least one address (2,500 characters at most), else a 400 naming `emails`; without `authType` (older clients) any address makes it so.';
const ANON =
  'Access: anyone with the link (`anonymous`); limited per client address (SEND_ACCESS_PER_MINUTE, 429). A missing, disabled, expired, deleted or exhausted Send answers 404.';
const TOKEN =
  'Access: anyone holding a Send access token from the identity service (`grant_type=send_access`) in `Authorization: Bearer` (checked here, so the rule is `anonymous`); limited per client address. A missing, disabled, expired, deleted or exhausted Send answers 404; a token issued before the Send\'s password was added, changed or removed, or before it became or stopped being email-verified, or for an address since taken off its list, answers 401.';

const docs = {
  list: { summary: 'List your Sends', description: `The caller's Sends, as sync carries them. ${OWN}` },
  get: { summary: 'Read a Send', description: `One of the caller's Sends. ${OWN}` },
  create: { summary: 'Create a text Send', description: `Creates a text Send (file Sends: \`POST /sends/file/v2\`) and records Send_Created_Text (2500, or 2502 with a password); the password is the client's hash, hashed again here. ${POLICIES} ${OWN}` },
  createFile: {
    summary: 'Create a file Send',
    description: `Creates a file Send with its file reserved (\`fileLength\` bytes, which must fit in the caller's storage left; counted once uploaded, and the Send dropped when its file is not uploaded within two hours of the URL or its renewal) and answers where to upload it (Direct: \`POST /sends/{id}/file/{fileId}\`); records Send_Created_File (2503, or 2505 with a password). ${POLICIES} ${OWN}`,
  },
  renew: { summary: 'Renew a Send file upload URL', description: `A new hour to upload the file of a file Send not uploaded yet. ${OWN}` },
  upload: {
    summary: "Upload a file Send's file",
    description: `The encrypted file (multipart/form-data, in \`data\`), exactly the size declared, within an hour; otherwise the Send is dropped (400) and the client starts again. ${OWN}`,
  },
  update: { summary: 'Edit a Send', description: `Replaces a Send's settings and content (not its type or file) and records Send_Edited_Text/File (2506/2507). ${POLICIES} ${OWN}` },
  removeAuth: {
    summary: "Remove a Send's password or addresses",
    description: `Removes the password or the addresses of a Send, which then opens to anyone with the link, and records Send_Edited_Text/File (2506/2507); refused (400) where a Send controls policy requires a password or email verification, or Disable Send applies. ${OWN}`,
  },
  delete: { summary: 'Delete a Send', description: `Deletes a Send and its file, and records Send_Deleted_Text/File (2508/2509). ${OWN}` },
  accessLegacy: {
    summary: 'Open a Send (password in the body)',
    description: `Older clients' access: the Send as recipients see it, with the client's password hash in \`password\` when it has one (401 without, 400 wrong); an email-verified Send is refused (400: it opens only with a token from the identity service); a text Send counts an access and records Send_Accessed_Text (2510). ${ANON}`,
  },
  fileLegacy: {
    summary: "Get a Send file's download URL (password in the body)",
    description: `Older clients' file access: a URL good for one download within a minute; counts an access and records Send_Accessed_File (2511). An email-verified Send is refused (400). ${ANON}`,
  },
  access: { summary: 'Open a Send', description: `The Send the token names, as recipients see it; a text Send counts an access and records Send_Accessed_Text (2510). ${TOKEN}` },
  file: { summary: "Get a Send file's download URL", description: `A URL for the file of the Send the token names, good for one download within a minute; counts an access and records Send_Accessed_File (2511). ${TOKEN}` },
  download: {
    summary: 'Download a Send file',
    description:
      'The encrypted bytes of a Send file, streamed, for a URL from the file access routes, once (on any instance of a fleet). A used, expired, altered or unknown URL answers 404, and so does any URL once its Send is disabled, expired, deleted or given a maximum below the accesses already counted. Access: anyone holding the URL (`anonymous`).',
  },
} satisfies Record<string, RouteDoc>;

const FileParams = Type.Object({ id: Type.String({ pattern: '^[0-9a-fA-F-]{36}$' }), fileId: Type.String({ pattern: '^[a-z0-9]{1,64}$' }) });
const AccessParams = Type.Object({ accessId: Type.String({ minLength: 1, maxLength: 64 }) });
const AccessFileParams = Type.Object({ accessId: Type.String({ minLength: 1, maxLength: 64 }), fileId: Type.String({ pattern: '^[a-z0-9]{1,64}$' }) });
const TokenFileParams = Type.Object({ fileId: Type.String({ pattern: '^[a-z0-9]{1,64}$' }) });

type Id = { Params: { id: string } };
type FileId = { Params: { id: string; fileId: string } };
type Body = { Body: SendRequest };
type PasswordBody = { Body: { password?: string | null } | undefined };

export const sendRoutes: FastifyPluginAsync<{ sends: SendService; access: SendAccess; maxFileBytes: number }> = async (app, { sends, access: anonymous, maxFileBytes }) => {
  await app.register(multipart, { limits: { fileSize: maxFileBytes + 1 } });

  app.get('/sends', { config, schema: { tags, ...docs.list, response: { 200: SendListResponse } } }, async (request) => list(await sends.list(userCaller(request))));
  app.get<Id>('/sends/:id', { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: SendResponse } } }, async (request) =>
    sends.get(userCaller(request), request.params.id),
  );
  app.post<Body>('/sends', { config, schema: { tags, ...docs.create, body: SendRequest, response: { 200: SendResponse } } }, async (request) =>
    sends.createText(userCaller(request), request.body),
  );
  app.post<Body>('/sends/file/v2', { config, schema: { tags, ...docs.createFile, body: SendRequest, response: { 200: SendFileUploadResponse } } }, async (request) =>
    sends.createFile(userCaller(request), request.body),
  );
  app.get<FileId>('/sends/:id/file/:fileId', { config, schema: { tags, ...docs.renew, params: FileParams, response: { 200: SendFileUploadResponse } } }, async (request) =>
    sends.renewUpload(userCaller(request), request.params.id, request.params.fileId),
  );
  app.post<FileId>('/sends/:id/file/:fileId', { config, schema: { tags, ...docs.upload, params: FileParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    const { stream } = await filePart(request, maxFileBytes);
    await sends.uploadFile(userCaller(request), request.params.id, request.params.fileId, stream);
    return emptyOk(reply);
  });
  app.put<Id & Body>('/sends/:id', { config, schema: { tags, ...docs.update, params: IdParams, body: SendRequest, response: { 200: SendResponse } } }, async (request) =>
    sends.update(userCaller(request), request.params.id, request.body),
  );
  for (const url of ['/sends/:id/remove-auth', '/sends/:id/remove-password']) {
    app.put<Id>(
      url,
      { config, schema: { tags, ...(url.endsWith('auth') ? docs.removeAuth : olderForm(docs.removeAuth, 'PUT /sends/{id}/remove-auth')), params: IdParams, response: { 200: SendResponse } } },
      async (request) => sends.removeAuth(userCaller(request), request.params.id),
    );
  }
  app.delete<Id>('/sends/:id', { config, schema: { tags, ...docs.delete, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await sends.delete(userCaller(request), request.params.id);
    return emptyOk(reply);
  });

  const open = { access: access.anonymous };
  app.post<{ Params: { accessId: string } } & PasswordBody>(
    '/sends/access/:accessId',
    { config: open, schema: { tags, ...docs.accessLegacy, params: AccessParams, body: Type.Optional(SendAccessRequest), response: { 200: SendAccessResponse } } },
    async (request) => anonymous.accessLegacy(anonymousCaller(request), request.params.accessId, request.body?.password),
  );
  app.post<{ Params: { accessId: string; fileId: string } } & PasswordBody>(
    '/sends/:accessId/access/file/:fileId',
    { config: open, schema: { tags, ...docs.fileLegacy, params: AccessFileParams, body: Type.Optional(SendAccessRequest), response: { 200: SendFileDownloadResponse } } },
    async (request) => anonymous.fileLegacy(anonymousCaller(request), request.params.accessId, request.params.fileId, request.body?.password),
  );
  app.post('/sends/access', { config: open, schema: { tags, ...docs.access, response: { 200: SendAccessResponse } } }, async (request) =>
    anonymous.accessWithToken(anonymousCaller(request), bearerToken(request)),
  );
  app.post<{ Params: { fileId: string } }>(
    '/sends/access/file/:fileId',
    { config: open, schema: { tags, ...docs.file, params: TokenFileParams, response: { 200: SendFileDownloadResponse } } },
    async (request) => anonymous.fileWithToken(anonymousCaller(request), bearerToken(request), request.params.fileId),
  );
  app.get<{ Querystring: { token: string } }>(
    '/sends/file/download',
    { config: open, schema: { tags, ...docs.download, querystring: DownloadQuery, response: { 200: { description: 'The encrypted file (application/octet-stream)' } } } },
    async (request, reply) => {
      const file = await anonymous.download(request.query.token);
      return reply.type('application/octet-stream').header('content-length', file.size).header('cache-control', 'no-store').send(file.stream);
    },
  );
};
