import { Type, type Static } from 'typebox';
import { EncString, Guid, ListOf, Nullable } from '../../http/schemas.js';
import { SecretAccessPoliciesRequests } from './access-policies.schemas.js';
import type { Rights } from './sm-access.js';
import type { SecretRow, SecretVersionRow } from './secrets.repository.js';

/** The official length limits of a secret's encrypted fields. */
const SecretFields = {
  key: EncString(1000),
  value: EncString(35000),
  note: EncString(10000),
  // More than one answers the official message (the service checks it), not a schema text.
  projectIds: Type.Optional(Nullable(Type.Array(Guid, { maxItems: 1000 }))),
  /** The web app's grants on the secret itself; when present they replace the secret's own policies. */
  accessPoliciesRequests: Type.Optional(Nullable(SecretAccessPoliciesRequests)),
};

export const CreateSecretBody = Type.Object(SecretFields);
export type CreateSecretBody = Static<typeof CreateSecretBody>;

/** `valueChanged`: the web app re-encrypts unchanged values on every save and says so here. */
export const UpdateSecretBody = Type.Object({ ...SecretFields, valueChanged: Type.Optional(Nullable(Type.Boolean())) });
export type UpdateSecretBody = Static<typeof UpdateSecretBody>;

/** Sent as the official clients send it (an ISO date); checked by the service to name the field. */
export const SyncQuery = Type.Object({ lastSyncedDate: Type.Optional(Type.String({ maxLength: 100 })) });

const ProjectRef = Type.Object({ id: Type.String(), name: Type.String() });

const baseFields = {
  id: Type.String(),
  organizationId: Type.String(),
  key: Type.String(),
  value: Type.String(),
  note: Type.String(),
  creationDate: Type.String(),
  revisionDate: Type.String(),
  projects: Type.Array(ProjectRef),
};

export const BaseSecretResponse = Type.Object({ object: Type.Literal('baseSecret'), ...baseFields });
export const SecretResponse = Type.Object({ object: Type.Literal('secret'), ...baseFields, read: Type.Boolean(), write: Type.Boolean() });

const SecretListItem = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  key: Type.String(),
  creationDate: Type.String(),
  revisionDate: Type.String(),
  projects: Type.Array(ProjectRef),
  read: Type.Boolean(),
  write: Type.Boolean(),
});

export const SecretListResponse = Type.Object({
  object: Type.Literal('SecretsWithProjectsList'),
  secrets: Type.Array(SecretListItem),
  projects: Type.Array(ProjectRef),
});

/** The answer of get-by-ids. */
export const BaseSecretList = ListOf(BaseSecretResponse);

export const SecretsSyncResponse = Type.Object({
  object: Type.Literal('secretsSync'),
  hasChanges: Type.Boolean(),
  secrets: Nullable(ListOf(BaseSecretResponse)),
});

export const RestoreVersionBody = Type.Object({ versionId: Guid });

/** A bare id array whose emptiness answers the official message rather than a schema text. */
export const VersionIdsBody = Type.Array(Guid, { maxItems: 1000, description: 'up to 1000 version ids' });

export const SecretVersionResponse = Type.Object({
  object: Type.Literal('secretVersion'),
  id: Type.String(),
  secretId: Type.String(),
  value: Type.String(),
  versionDate: Type.String(),
  editorServiceAccountId: Nullable(Type.String()),
  editorOrganizationUserId: Nullable(Type.String()),
});

function projectsOf(row: Pick<SecretRow, 'project_id' | 'project_name'>) {
  return row.project_id ? [{ id: row.project_id, name: row.project_name ?? '' }] : [];
}

export function toBaseSecret(row: SecretRow): Static<typeof BaseSecretResponse> {
  return {
    object: 'baseSecret',
    id: row.id,
    organizationId: row.organization_id,
    key: row.key,
    value: row.value,
    note: row.note,
    creationDate: row.creation_date,
    revisionDate: row.revision_date,
    projects: projectsOf(row),
  };
}

export function toSecretResponse(row: SecretRow, rights: Rights): Static<typeof SecretResponse> {
  return { ...toBaseSecret(row), object: 'secret', read: rights.read, write: rights.write };
}

/** The list answer: the secrets without values, and the distinct projects they are in. */
export function toSecretList(rows: readonly (Omit<SecretRow, 'value' | 'note'> & { rights: Rights })[]): Static<typeof SecretListResponse> {
  const projects = new Map<string, string>();
  const secrets = rows.map((row) => {
    if (row.project_id && !projects.has(row.project_id)) projects.set(row.project_id, row.project_name ?? '');
    return {
      id: row.id,
      organizationId: row.organization_id,
      key: row.key,
      creationDate: row.creation_date,
      revisionDate: row.revision_date,
      projects: projectsOf(row),
      read: row.rights.read,
      write: row.rights.write,
    };
  });
  return { object: 'SecretsWithProjectsList', secrets, projects: [...projects].map(([id, name]) => ({ id, name })) };
}

export function toSecretVersion(row: SecretVersionRow): Static<typeof SecretVersionResponse> {
  return {
    object: 'secretVersion',
    id: row.id,
    secretId: row.secret_id,
    value: row.value,
    versionDate: row.version_date,
    editorServiceAccountId: row.editor_service_account_id,
    editorOrganizationUserId: row.editor_organization_user_id,
  };
}
