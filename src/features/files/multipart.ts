import type { FastifyRequest } from 'fastify';
import { BadRequest } from '../../http/errors.js';
import type { UploadedFile } from './attachments.service.js';

/** The one file part of a multipart upload, in `data`; fields sent before it come along. */
export async function filePart(request: FastifyRequest, maxBytes: number): Promise<UploadedFile & { fields: Record<string, string> }> {
  if (!request.isMultipart()) throw new BadRequest('Invalid content.');
  const part = await request.file({ limits: { files: 1, fileSize: maxBytes, fields: 10, fieldSize: 20_000, parts: 11 } });
  if (!part) throw BadRequest.field('data', 'The request has no file in data.');
  if (part.fieldname !== 'data') {
    part.file.resume();
    throw BadRequest.field(part.fieldname, `Unexpected file in ${part.fieldname}; the file goes in data.`);
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(part.fields)) {
    if (value && !Array.isArray(value) && value.type === 'field') fields[name] = String(value.value);
  }
  return { stream: part.file, fileName: part.filename || null, fields };
}
