import type { ColumnType, Generated } from 'kysely';
import type { Bool } from './types.js';

// Organizations, their members and groups, collections and who may use them, policies, API keys, reports and security tasks.

export interface OrganizationsTable {
  id: string;
  identifier: string | null;
  name: string;
  business_name: string | null;
  billing_email: string;
  plan_type: number;
  seats: number | null;
  max_collections: number | null;
  max_storage_gb: number | null;
  storage_bytes: Generated<number>;
  sm_seats: number | null;
  sm_service_accounts: number | null;
  use_groups: Bool;
  use_directory: Bool;
  use_events: Bool;
  use_totp: Bool;
  use_2fa: Bool;
  use_api: Bool;
  use_policies: Bool;
  use_sso: Bool;
  use_key_connector: Bool;
  use_scim: Bool;
  use_reset_password: Bool;
  use_secrets_manager: Bool;
  use_password_manager: Bool;
  use_custom_permissions: Bool;
  users_get_premium: Bool;
  self_host: Bool;
  enabled: Bool;
  limit_collection_creation: Bool;
  limit_collection_deletion: Bool;
  limit_item_deletion: Bool;
  allow_admin_access_to_all_collection_items: Bool;
  public_key: string | null;
  private_key: string | null;
  license_key: string | null;
  expiration_date: string | null;
  creation_date: string;
  revision_date: string;
}

export interface OrganizationUsersTable {
  id: string;
  organization_id: string;
  user_id: string | null;
  /** The invited address, until the invitation is accepted. */
  email: string | null;
  key: string | null;
  reset_password_key: string | null;
  status: number;
  type: number;
  access_all: Bool;
  external_id: string | null;
  permissions: string | null;
  access_secrets_manager: Bool;
  creation_date: string;
  revision_date: string;
  /** The official RevocationReason of a revoked member (0 unknown); null otherwise. */
  revocation_reason: number | null;
}

export interface GroupsTable {
  id: string;
  organization_id: string;
  name: string;
  access_all: Bool;
  external_id: string | null;
  creation_date: string;
  revision_date: string;
}

export interface GroupUsersTable {
  group_id: string;
  organization_user_id: string;
}

export interface CollectionsTable {
  id: string;
  organization_id: string;
  name: string;
  external_id: string | null;
  type: number;
  creation_date: string;
  revision_date: string;
  /** Set when a "My Items" collection's member leaves (migration 0027); optional on insert. */
  default_user_collection_email: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface CollectionAccess {
  collection_id: string;
  read_only: Bool;
  hide_passwords: Bool;
  manage: Bool;
}

export interface CollectionUsersTable extends CollectionAccess {
  organization_user_id: string;
}

export interface CollectionGroupsTable extends CollectionAccess {
  group_id: string;
}

export interface PoliciesTable {
  id: string;
  organization_id: string;
  type: number;
  enabled: Bool;
  data: string | null;
  creation_date: string;
  revision_date: string;
}

export interface OrganizationApiKeysTable {
  id: string;
  organization_id: string;
  type: number;
  api_key: string;
  revision_date: string;
}

/** The official SecurityTask: an administrator asks the members who can edit an item to update its at-risk password. */
export interface SecurityTasksTable {
  id: string;
  organization_id: string;
  cipher_id: string | null;
  type: number;
  status: number;
  creation_date: string;
  revision_date: string;
}

/** An organization's report (the official OrganizationReport); see features/reports. */
export interface OrganizationReportsTable {
  id: string;
  organization_id: string;
  report_data: string;
  content_encryption_key: string;
  summary_data: string | null;
  application_data: string | null;
  creation_date: string;
  revision_date: string;
  application_count: number | null;
  application_at_risk_count: number | null;
  critical_application_count: number | null;
  critical_application_at_risk_count: number | null;
  member_count: number | null;
  member_at_risk_count: number | null;
  critical_member_count: number | null;
  critical_member_at_risk_count: number | null;
  password_count: number | null;
  password_at_risk_count: number | null;
  critical_password_count: number | null;
  critical_password_at_risk_count: number | null;
}
