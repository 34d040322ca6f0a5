import { finished, PassThrough, type Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { BadRequest, HttpError } from '../../http/errors.js';

/** RFC 2046 section 5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY = 70;
const CUT_OFF = 'The multipart body ends before its closing boundary: the upload is incomplete.';

/**
 * Refuses a multipart Content-Type without a usable boundary before the parser sees it: the
 * parser throws on a missing one and cannot find the parts with an empty one.
 */
export function checkBoundary(request: FastifyRequest): void {
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(request.headers['content-type'] ?? '');
  if (!match) throw new BadRequest('The multipart/form-data Content-Type has no boundary parameter.');
  const boundary = match[1] ?? match[2] ?? '';
  if (!boundary) throw new BadRequest('The multipart boundary is empty.');
  if (boundary.length > MAX_BOUNDARY) throw new BadRequest(`The multipart boundary is longer than ${MAX_BOUNDARY} characters.`);
}

/**
 * What a failure to read a multipart body answers: 400 naming the problem. Every error the parser
 * or the request stream raises is the client's (a body cut short, a malformed part, a connection
 * closed mid-upload), so none may become a 500; the server's own errors arise in the sink.
 */
export function uploadError(error: unknown): Error {
  if (error instanceof HttpError) return error;
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  switch (code) {
    case 'FST_FILES_LIMIT':
      return BadRequest.field('data', 'Send one file, in data.');
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new BadRequest('The form has too many fields.');
    case 'FST_PROTO_VIOLATION':
      return new BadRequest('A form field has a reserved name.');
    case 'FST_MP_PREMATURE_CLOSE':
    case 'ERR_STREAM_PREMATURE_CLOSE':
    case 'ECONNRESET':
      return new BadRequest('The connection closed before the upload was complete.');
  }
  if (message?.includes('nexpected end of multipart data')) return new BadRequest(CUT_OFF);
  return new BadRequest(`The multipart body could not be read: ${message ?? 'unknown error'}.`);
}

/**
 * The file's bytes for whoever stores them, with the parser's errors turned into 400s
 * (uploadError). A reader that stops early (a file over its declared size) leaves the rest of
 * the body unread: it is drained, so the client still reads the answer.
 */
export function guarded(file: Readable): Readable {
  const out = new PassThrough();
  // The error may come before the reader has started (it awaits the database first): it stays on
  // the destroyed stream, where the reader's pipeline finds it, instead of crashing the process.
  out.on('error', () => undefined);
  // `finished` also reports a file that failed before this was called (a body cut off right after
  // the part's headers), which an 'error' listener added now would never hear of.
  finished(file, (error) => {
    if (error) out.destroy(uploadError(error));
  });
  file.pipe(out);
  // After pipe's own 'close' listener, which unpipes and pauses the file.
  out.on('close', () => {
    if (!file.readableEnded) file.resume();
  });
  return out;
}

/** The one file part of a multipart upload, in `data`; fields sent before it come along. */
export async function filePart(request: FastifyRequest, maxBytes: number): Promise<UploadedFile & { fields: Record<string, string> }> {
  if (!request.isMultipart()) throw new BadRequest('Invalid content.');
  checkBoundary(request);
  let part;
  try {
    // A byte over the limit: the parser cuts a longer file short without an error, so the store's
    // own limit (never above maxBytes) must see the byte that passes it.
    part = await request.file({ limits: { files: 1, fileSize: maxBytes + 1, fields: 10, fieldSize: 20_000, parts: 11 } });
  } catch (error) {
    throw uploadError(error);
  }
  if (!part) throw BadRequest.field('data', 'The request has no file in data.');
  if (part.fieldname !== 'data') {
    part.file.resume();
    throw BadRequest.field(part.fieldname, `Unexpected file in ${part.fieldname}; the file goes in data.`);
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(part.fields)) {
    if (value && !Array.isArray(value) && value.type === 'field') fields[name] = String(value.value);
  }
  return { stream: guarded(part.file), fileName: part.filename || null, fields };
}

export interface UploadedFile {
  stream: Readable;
  /** The encrypted file name the client gave the multipart part (legacy upload). */
  fileName: string | null;
}
