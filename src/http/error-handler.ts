import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ENC_STRING_FORMAT } from './enc-string.js';
import { HttpError, MODEL_STATE_INVALID, ServiceUnavailable, TooManyRequests, type ValidationErrors } from './errors.js';

/**
 * One error handler per envelope. Known errors keep their status; request-shape errors from
 * Fastify (bad JSON, schema violations, oversize bodies) become 400s naming what is wrong;
 * anything else is logged with the request id and answered 500 without internal detail.
 */
export interface NormalizedError {
  statusCode: number;
  message: string;
  validationErrors: ValidationErrors | null;
  retryAfterSeconds?: number;
}

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/login/uris/0/uri` -> `login.uris[0].uri`, with the missing property for `required`. */
function fieldOf(issue: AjvIssue, context: string | undefined): string {
  const parts = issue.instancePath.split('/').filter(Boolean);
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    parts.push(issue.params.missingProperty);
  }
  const path = parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
  if (path) return path;
  return context === 'body' || !context ? '' : context;
}

const GUID_PATTERN_HINT = '[0-9a-fA-F]{8}';

function describeIssue(issue: AjvIssue, field: string): string {
  const subject = field ? `The ${field} field` : 'The request body';
  const p = issue.params;
  switch (issue.keyword) {
    case 'required':
      return `${subject} is required.`;
    case 'type':
      if (!field) return p.type === 'array' ? 'The request body is empty or not a JSON array.' : 'The request body is empty or not a JSON object.';
      return `${subject} must be of type ${String(p.type)}.`;
    case 'format':
      if (p.format === 'uuid') return `${subject} must be a GUID.`;
      if (p.format === ENC_STRING_FORMAT) return `${subject} is not a valid encrypted string (encType.data|iv|mac).`;
      return `${subject} must be a valid ${String(p.format)}.`;
    case 'pattern':
      return String(p.pattern).includes(GUID_PATTERN_HINT) ? `${subject} must be a GUID.` : `${subject} is not in the expected format.`;
    case 'maxItems':
      return `${subject} must contain at most ${String(p.limit)} items.`;
    case 'minItems':
      return `${subject} must contain at least ${String(p.limit)} items.`;
    case 'maxLength':
      return `${subject} must be at most ${String(p.limit)} characters long.`;
    case 'minLength':
      return `${subject} must be at least ${String(p.limit)} characters long.`;
    case 'enum':
      return `${subject} must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    case 'minimum':
    case 'maximum':
      return `${subject} ${issue.message ?? 'is out of range'}.`;
    default:
      return `${subject} ${issue.message ?? 'is invalid'}.`;
  }
}

export function validationErrorsOf(error: FastifyError): ValidationErrors {
  const errors: ValidationErrors = {};
  const issues = (error.validation ?? []) as unknown as AjvIssue[];
  // Unions report every branch; "anyOf" itself says only that none matched, which the branches explain.
  const useful = issues.length > 1 ? issues.filter((i) => i.keyword !== 'anyOf' && i.keyword !== 'oneOf') : issues;
  for (const issue of useful) {
    const field = fieldOf(issue, error.validationContext);
    const message = describeIssue(issue, field);
    const list = (errors[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return errors;
}

function fromFastify(error: FastifyError): NormalizedError | null {
  if (error.validation) {
    return { statusCode: 400, message: MODEL_STATE_INVALID, validationErrors: validationErrorsOf(error) };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // Bitwarden clients treat any 4xx alike; 400 with a clear message is what the API promises.
      return { statusCode: 400, message: `The request body is too large.`, validationErrors: { '': ['The request body is too large.'] } };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, message: MODEL_STATE_INVALID, validationErrors: { '': ['Body is empty.'] } };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, message: 'Unsupported content type.', validationErrors: null };
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { statusCode: 400, message: 'The request body is not valid JSON.', validationErrors: { '': [`Malformed JSON: ${error.message}`] } };
  }
  const status = error.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { statusCode: status, message: error.message, validationErrors: null };
  }
  return null;
}

export function normalizeError(error: unknown, request: FastifyRequest): NormalizedError {
  if (error instanceof HttpError) {
    return {
      statusCode: error.statusCode,
      message: error.message,
      validationErrors: error.validationErrors ?? null,
      ...((error instanceof TooManyRequests || error instanceof ServiceUnavailable) && error.retryAfterSeconds
        ? { retryAfterSeconds: error.retryAfterSeconds }
        : {}),
    };
  }
  const known = error && typeof error === 'object' ? fromFastify(error as FastifyError) : null;
  if (known) return known;
  request.log.error({ err: error }, 'unhandled error');
  return { statusCode: 500, message: 'An unhandled server error has occurred.', validationErrors: null };
}

function send(reply: FastifyReply, normalized: NormalizedError, body: unknown): FastifyReply {
  if (normalized.retryAfterSeconds) void reply.header('retry-after', String(normalized.retryAfterSeconds));
  return reply.status(normalized.statusCode).type('application/json; charset=utf-8').serializer(JSON.stringify).send(body);
}

/** Bitwarden's ErrorResponseModel, as the official clients read it. */
export function apiErrorBody(normalized: NormalizedError) {
  return {
    message: normalized.message,
    validationErrors: normalized.validationErrors,
    exceptionMessage: null,
    exceptionStackTrace: null,
    innerExceptionMessage: null,
    object: 'error',
  };
}

export async function apiErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const normalized = normalizeError(error, request);
  return send(reply, normalized, apiErrorBody(normalized));
}

/** The public API's error envelope (spec: object, message, validationErrors). */
export async function publicErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const normalized = normalizeError(error, request);
  const body: Record<string, unknown> = { object: 'error', message: normalized.message };
  if (normalized.validationErrors) body.validationErrors = normalized.validationErrors;
  return send(reply, normalized, body);
}

/** An OAuth 2.0 error from the token endpoint, with the ErrorModel the official clients read. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly errorModelMessage: string = description,
    readonly statusCode = 400,
    readonly extra: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export async function identityErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof OAuthError) {
    if (error.retryAfterSeconds) void reply.header('retry-after', String(error.retryAfterSeconds));
    return reply
      .status(error.statusCode)
      .type('application/json; charset=utf-8')
      .serializer(JSON.stringify)
      .send({
        error: error.error,
        error_description: error.description,
        ...error.extra,
        ErrorModel: { Message: error.errorModelMessage, Object: 'error' },
      });
  }
  return apiErrorHandler(error, request, reply);
}

/**
 * Fastify's `frameworkErrors` option: errors its router raises before any hook or route runs
 * (a path that is not valid percent-encoded UTF-8, FST_ERR_BAD_URL) answered with the API
 * envelope instead of Fastify's own body. A malformed path is bad input like any other.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const normalized: NormalizedError =
    error.code === 'FST_ERR_BAD_URL'
      ? { statusCode: 400, message: 'The request path is not a valid URL.', validationErrors: { '': ['The request path is not valid percent-encoded UTF-8.'] } }
      : normalizeError(error, request);
  void send(reply, normalized, apiErrorBody(normalized));
}
