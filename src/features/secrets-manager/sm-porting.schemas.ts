import { Type, type Static } from 'typebox';
import { EncString, Guid } from '../../http/schemas.js';

/** The official import limits; over them the whole import is refused. */
export const MAX_IMPORT_PROJECTS = 1000;
export const MAX_IMPORT_SECRETS = 6000;

/**
 * Items past the limits still parse (so the answer is the official sentence, not a schema
 * message); the body size limit bounds them.
 */
const PARSE_CAP = 100_000;

const ImportProject = Type.Object({ id: Guid, name: EncString(1000) });
const ImportSecret = Type.Object({
  id: Guid,
  key: EncString(1000),
  value: EncString(35000),
  note: EncString(10000),
  projectIds: Type.Array(Guid, { maxItems: PARSE_CAP }),
});

/** An export as `GET /sm/{organizationId}/export` answers it; the ids only link secrets to projects. */
export const ImportBody = Type.Object({
  projects: Type.Optional(Type.Union([Type.Array(ImportProject, { maxItems: PARSE_CAP }), Type.Null()])),
  secrets: Type.Optional(Type.Union([Type.Array(ImportSecret, { maxItems: PARSE_CAP }), Type.Null()])),
});
export type ImportBody = Static<typeof ImportBody>;

export const ExportResponse = Type.Object({
  object: Type.Literal('SecretsManagerExportResponseModel'),
  projects: Type.Array(Type.Object({ id: Guid, name: Type.String() })),
  secrets: Type.Array(Type.Object({ id: Guid, key: Type.String(), value: Type.String(), note: Type.String(), projectIds: Type.Array(Guid) })),
});

export const PortingParams = Type.Object({ organizationId: Guid });
