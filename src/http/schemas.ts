import type { FastifyReply } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { ENC_STRING_FORMAT } from './enc-string.js';

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** A key id as clients send it (the COSE key id of a user key): 32 hex digits. */
export const KeyIdString = Type.String({ pattern: '^[0-9a-fA-F]{32}$' });

/** The address part of `Email`'s pattern, unanchored, for schemas that allow more around it. */
export const EMAIL_ADDRESS_PATTERN = '[^\\s@\\x00-\\x1f\\x7f]+@[^\\s@\\x00-\\x1f\\x7f]+';

/**
 * An email address as accounts, invitations and billing take it: one @, no spaces and no
 * control characters (a NUL or an escape in an address would reach mail headers and logs).
 */
export const Email = Type.String({ minLength: 3, maxLength: 256, pattern: `^${EMAIL_ADDRESS_PATTERN}$` });

export const GUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A GUID in any letter case; the server stores and answers lower case. */
export const Guid = Type.String({ pattern: GUID_PATTERN, description: 'GUID' });

export const IdParams = Type.Object({ id: Guid });

/** `/organizations/{orgId}/…` and `/organizations/{orgId}/…/{id}` path parameters. */
export const OrgParams = Type.Object({ orgId: Guid });
/** A device's client-made identifier in a path (`/devices/identifier/{identifier}/…`): any text, as the clients make it. */
export const DeviceIdentifierParams = Type.Object({ identifier: Type.String({ minLength: 1, maxLength: 100 }) });
export const OrgIdParams = Type.Object({ orgId: Guid, id: Guid });

/** `{ ids }` of the organization bulk commands (delete groups, collections…). */
export const BulkIdsBody = Type.Object({ ids: Type.Array(Guid, { minItems: 1, maxItems: 10_000 }) });

/** An empty 200 answer, as the official server gives for most commands. */
export const EmptyResponse = Type.Null({ description: 'Empty body' });

/** Sends the empty 200 of EmptyResponse (clients read no body; `null` would be one). */
export function emptyOk(reply: FastifyReply): FastifyReply {
  return reply.status(200).send();
}

export const ErrorResponse = Type.Object(
  {
    message: Type.String(),
    validationErrors: Type.Union([Type.Record(Type.String(), Type.Array(Type.String())), Type.Null()]),
    exceptionMessage: Type.Null(),
    exceptionStackTrace: Type.Null(),
    innerExceptionMessage: Type.Null(),
    object: Type.Literal('error'),
  },
  { description: 'Error (Bitwarden ErrorResponseModel)' },
);

/** `{ object: "list", data, continuationToken }`. */
export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    continuationToken: Type.Union([Type.String(), Type.Null()]),
  });
}

export function list<T>(data: T[], continuationToken: string | null = null) {
  return { object: 'list' as const, data, continuationToken };
}

export function normalizeGuid(id: string): string {
  return id.toLowerCase();
}

/** A required encrypted string (see enc-string.ts); `maxLength` counts the encrypted text. */
export function EncString(maxLength: number, options: { description?: string } = {}) {
  return Type.String({ format: ENC_STRING_FORMAT, maxLength, ...options });
}

/**
 * An encrypted string that may be null or absent. One schema with a type list rather than a
 * union, so that a malformed value is reported once, as malformed, naming the field.
 */
export function NullableEncString(maxLength: number, options: { description?: string } = {}) {
  return Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], format: ENC_STRING_FORMAT, maxLength, ...options }));
}

/** An ISO-8601 timestamp, or null. */
export const NullableDateTime = Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time' });

/** A file download link's signed token (attachments and Send files). */
export const DownloadQuery = Type.Object({ token: Type.String({ minLength: 1, maxLength: 4096 }) });
