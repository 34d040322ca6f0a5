import type { Bool } from './types.js';

// Secrets Manager: projects, secrets and their history, machine accounts, their access tokens and the access policies.

export interface ProjectsTable {
  id: string;
  organization_id: string;
  name: string;
  creation_date: string;
  revision_date: string;
}

export interface SecretsTable {
  id: string;
  organization_id: string;
  /** A secret is in at most one project. */
  project_id: string | null;
  key: string;
  value: string;
  note: string;
  creation_date: string;
  revision_date: string;
  /** Set when the secret is in the trash. */
  deleted_date: string | null;
}

export interface ServiceAccountsTable {
  id: string;
  organization_id: string;
  name: string;
  creation_date: string;
  revision_date: string;
}

export interface AccessTokensTable {
  id: string;
  service_account_id: string;
  name: string;
  client_secret_hash: string;
  /** JSON array of scopes, `["api.secrets"]`. */
  scope: string;
  encrypted_payload: string;
  key: string;
  expire_at: string | null;
  creation_date: string;
  revision_date: string;
}

/** One grantee column and one granted column are set per row. */
export interface AccessPoliciesTable {
  id: string;
  organization_user_id: string | null;
  group_id: string | null;
  service_account_id: string | null;
  granted_project_id: string | null;
  granted_service_account_id: string | null;
  granted_secret_id: string | null;
  read: Bool;
  write: Bool;
  creation_date: string;
  revision_date: string;
}

export interface SecretVersionsTable {
  id: string;
  secret_id: string;
  value: string;
  version_date: string;
  editor_service_account_id: string | null;
  editor_organization_user_id: string | null;
}

/** Counts the changes to an organization's secrets and projects; see secrets-manager/sm-revisions.ts. */
export interface SmRevisionsTable {
  organization_id: string;
  revision: number | string;
}
