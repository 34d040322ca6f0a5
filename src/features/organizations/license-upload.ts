import type { FastifyRequest } from 'fastify';
import { BadRequest } from '../../http/errors.js';
import { checkBoundary, uploadError } from '../../platform/storage/multipart.js';

/** The largest license file accepted; the JSON body's `license` has the same limit. */
export const LICENSE_MAX_BYTES = 100_000;
const FIELD_MAX_BYTES = 20_000;

const tooLarge = (error: unknown, code: string) => (error as { code?: string } | null)?.code === code;

/**
 * The web vault uploads a license as multipart/form-data: the file in `license`, the
 * organization key in `key` and the first collection's encrypted name in `collectionName`
 * (the official OrganizationCreateLicenseRequestModel, bound from a form). This turns such a
 * request into the JSON body the route validates, so both shapes meet the same schema and
 * service call. Other requests pass through untouched.
 */
export async function multipartLicenseBody(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  checkBoundary(request);
  const body: Record<string, string> = {};
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const part of request.parts({ limits: { files: 1, fileSize: LICENSE_MAX_BYTES, fields: 10, fieldSize: FIELD_MAX_BYTES, parts: 11 } })) {
      if (part.type === 'file') {
        const data = await part.toBuffer();
        if (part.fieldname !== 'license') throw BadRequest.field(part.fieldname, `Unexpected file in ${part.fieldname}; the license file goes in license.`);
        try {
          body.license = decoder.decode(data);
        } catch {
          throw BadRequest.field('license', 'The license file is not UTF-8 text.');
        }
      } else {
        if (part.valueTruncated) throw BadRequest.field(part.fieldname, `The ${part.fieldname} field is too long.`);
        body[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    if (tooLarge(error, 'FST_REQ_FILE_TOO_LARGE')) throw BadRequest.field('license', `The license file is larger than ${LICENSE_MAX_BYTES} bytes.`);
    if (tooLarge(error, 'FST_FILES_LIMIT')) throw BadRequest.field('license', 'Send one license file.');
    if (tooLarge(error, 'FST_FIELDS_LIMIT') || tooLarge(error, 'FST_PARTS_LIMIT')) throw new BadRequest('The form has too many fields.');
    throw uploadError(error);
  }
  request.body = body;
}
