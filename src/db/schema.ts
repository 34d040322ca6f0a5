import type { Generated } from 'kysely';

/**
 * Row types of every table, as Kysely sees them. Booleans read back as 0/1 on SQLite and
 * true/false on PostgreSQL; mappers normalise them with Boolean(). Timestamps are ISO text.
 */
type Bool = boolean | number;

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  email_verified: Bool;
  /** Server-side hash of the client's master password hash (see password-hasher.ts). */
  master_password_hash: string | null;
  master_password_hint: string | null;
  /** The client's KDF salt; null means the lower-cased email. */
  master_password_salt: string | null;
  key: string | null;
  public_key: string | null;
  private_key: string | null;
  kdf: number;
  kdf_iterations: number;
  kdf_memory: number | null;
  kdf_parallelism: number | null;
  security_stamp: string;
  api_key: string;
  user_key_id: string | null;
  premium: Bool;
  culture: string;
  avatar_color: string | null;
  equivalent_domains: string | null;
  excluded_global_equivalent_domains: string | null;
  force_password_reset: Bool;
  verify_devices: Bool;
  creation_date: string;
  revision_date: string;
  account_revision_date: string;
  last_password_change_date: string | null;
  /** Set by an operator (`strongroom users disable`): the account cannot log in. */
  disabled: Generated<Bool>;
  /** Bytes the user's personal attachments take (0015-files), counted against ATTACHMENT_USER_QUOTA_MB. */
  storage_bytes: Generated<number>;
}

export interface DevicesTable {
  id: string;
  user_id: string;
  type: number;
  identifier: string;
  name: string;
  push_token: string | null;
  creation_date: string;
  revision_date: string;
}

export interface EventsTable {
  id: string;
  type: number;
  user_id: string | null;
  organization_id: string | null;
  cipher_id: string | null;
  collection_id: string | null;
  policy_id: string | null;
  group_id: string | null;
  organization_user_id: string | null;
  acting_user_id: string | null;
  secret_id: string | null;
  project_id: string | null;
  service_account_id: string | null;
  /** The machine account an event is about (service_account_id is the acting one). */
  granted_service_account_id: Generated<string | null>;
  device_type: number | null;
  ip_address: string | null;
  system_user: number | null;
  date: string;
  /** Outbox sequence: the relay forwards committed events in this order. */
  seq: Generated<number>;
  /** A read of several secrets: the event stands for one Secret_Retrieved per secret of this set (see events/read-sets.ts). */
  read_set_id: Generated<string | null>;
  /** The Send a Send_* event is about (0015-files). */
  send_id: Generated<string | null>;
}

export interface ServerKeysTable {
  purpose: string;
  kid: string;
  private_jwk: string;
  public_jwk: string;
  creation_date: string;
}

export interface RefreshTokensTable {
  token_hash: string;
  user_id: string;
  device_id: string | null;
  client_id: string;
  scope: string;
  security_stamp: string;
  creation_date: string;
  expiration_date: string;
}

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

export interface FoldersTable {
  id: string;
  user_id: string;
  /** Encrypted name (EncString). */
  name: string;
  creation_date: string;
  revision_date: string;
}

export interface CiphersTable {
  id: string;
  /** The owner of a personal item; null for an organization item. */
  user_id: string | null;
  organization_id: string | null;
  type: number;
  /** JSON document of the encrypted content (see vault/cipher-data.ts). */
  data: string;
  /** The item's own key, encrypted with the user or organization key. */
  key: string | null;
  reprompt: number;
  attachments: string | null;
  creation_date: string;
  revision_date: string;
  /** Set while the item is in the trash. */
  deleted_date: string | null;
  /** Moves with every update of the row (migrations 0019 and 0020); sync's item cache keys on it. */
  version: Generated<number>;
  /** The stamp of the item's last write (migrations 0020 and 0021); sync reads the rows changed since its cached section. */
  change: Generated<number | string>;
}

/** One user's own view of an item: folder, favorite, archive. */
export interface CipherUserSettingsTable {
  user_id: string;
  cipher_id: string;
  folder_id: string | null;
  favorite: Bool;
  archived_date: string | null;
  /** The stamp of the last write of this row (migration 0021), like a personal item's `change`. */
  change: Generated<number | string>;
}

/** SQLite's stamp counter for organization items (migration 0021); unused on PostgreSQL. */
export interface ChangeClockTable {
  id: number;
  value: number | string;
}

/** Per organization, the stamp of the last of its items deleted for good (migration 0021). */
export interface OrganizationItemRemovalsTable {
  organization_id: string;
  change: number | string;
}

/** Counts the changes to what a user's sync carries; see vault/revisions.ts. */
export interface VaultRevisionsTable {
  user_id: string;
  revision: number | string;
}

export interface CollectionCiphersTable {
  collection_id: string;
  cipher_id: string;
}

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

/** A list of secrets read together, named by its digest; see events/read-sets.ts. */
export interface SecretReadSetsTable {
  id: string;
  size: number;
  creation_date: string;
}

export interface SecretReadSetMembersTable {
  read_set_id: string;
  position: number;
  secret_id: string;
}

export interface AuthRequestsTable {
  id: string;
  user_id: string;
  /** 0 AuthenticateAndUnlock, 1 Unlock (2 AdminApproval is not offered). */
  type: number;
  request_device_identifier: string;
  request_device_type: number;
  request_ip_address: string | null;
  response_device_id: string | null;
  access_code: string;
  public_key: string;
  key: string | null;
  master_password_hash: string | null;
  /** null while pending. */
  approved: Bool | null;
  creation_date: string;
  response_date: string | null;
  /** Set when a login used it; a request is good for one login. */
  authentication_date: string | null;
}

/** A named, expiring lease: who holds it until when (see db/leases.ts: event retention, the integrations relay). */
export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: string;
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

/** An organization's integration (the official OrganizationIntegration); see features/integrations. */
export interface OrganizationIntegrationsTable {
  id: string;
  organization_id: string;
  /** IntegrationType: Slack 3, Webhook 4, HEC 5, Datadog 6, Teams 7. */
  type: number;
  configuration: string | null;
  /** HMAC key of the signature header on every delivery. */
  signing_secret: string;
  creation_date: string;
  revision_date: string;
}

export interface OrganizationIntegrationConfigurationsTable {
  id: string;
  organization_integration_id: string;
  /** Null: every event type. */
  event_type: number | null;
  configuration: string | null;
  filters: string | null;
  template: string | null;
  creation_date: string;
  revision_date: string;
}

/** The outbox relay's cursor and fleet lease. */
export interface IntegrationRelayTable {
  name: string;
  cursor_seq: number | string;
  /** PostgreSQL: the transaction id of the last event relayed (see migration 0013). */
  cursor_tx: string | null;
  lease_owner: string | null;
  lease_until: string | null;
}

/** A delivery that failed every retry, kept until an owner replays it. */
export interface IntegrationDeadLettersTable {
  id: string;
  organization_id: string;
  integration_id: string;
  configuration_id: string;
  integration_type: number;
  message_id: string;
  event_type: number;
  body: string;
  attempts: number;
  last_error: string;
  creation_date: string;
}

/** A user's two-step login provider (TwoFactorProviderType); `metadata` is its JSON settings. */
export interface TwoFactorProvidersTable {
  user_id: string;
  type: number;
  enabled: Bool;
  metadata: string;
  /** Authenticator: the last TOTP time step that logged in (each code works once). */
  last_used_step: number | string | null;
  creation_date: string;
  revision_date: string;
}

export interface TwoFactorRecoveryTable {
  user_id: string;
  code_hash: string;
  creation_date: string;
}

/** An emailed code, one per user and purpose, stored hashed. */
export interface OneTimeCodesTable {
  user_id: string;
  purpose: string;
  code_hash: string;
  /** The address the code was sent to, where the purpose needs it (email setup, email change). */
  target: string | null;
  attempts: Generated<number>;
  expiration_date: string;
  creation_date: string;
}

export interface TwoFactorRememberTokensTable {
  token_hash: string;
  user_id: string;
  device_id: string;
  security_stamp: string;
  expiration_date: string;
  creation_date: string;
}

export interface AdminSessionsTable {
  /** SHA-256 (hex) of the session cookie's value. */
  id: string;
  csrf_token: string;
  ip_address: string | null;
  creation_date: string;
  expiration_date: string;
}

export interface AdminEventsTable {
  id: string;
  date: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  detail: string | null;
  ip_address: string | null;
}

/** A text or file Send (0015-files): `data` holds the encrypted name, notes and text or file metadata. */
export interface SendsTable {
  id: string;
  user_id: string;
  type: number;
  data: string;
  key: string;
  /** Server-side hash of the client-derived Send password hash (password-hasher.ts); null without a password. */
  password_hash: string | null;
  max_access_count: number | null;
  access_count: Generated<number>;
  disabled: Bool;
  hide_email: Bool;
  creation_date: string;
  revision_date: string;
  expiration_date: string | null;
  deletion_date: string;
}

/** A Send file download URL handed out and not used yet (migration 0022): good for one download. */
export interface SendDownloadsTable {
  id: string;
  send_id: string;
  expiration_date: string;
}

export interface DB {
  users: UsersTable;
  devices: DevicesTable;
  events: EventsTable;
  server_keys: ServerKeysTable;
  refresh_tokens: RefreshTokensTable;
  organizations: OrganizationsTable;
  organization_users: OrganizationUsersTable;
  groups: GroupsTable;
  group_users: GroupUsersTable;
  collections: CollectionsTable;
  collection_users: CollectionUsersTable;
  collection_groups: CollectionGroupsTable;
  policies: PoliciesTable;
  organization_api_keys: OrganizationApiKeysTable;
  folders: FoldersTable;
  ciphers: CiphersTable;
  cipher_user_settings: CipherUserSettingsTable;
  collection_ciphers: CollectionCiphersTable;
  vault_revisions: VaultRevisionsTable;
  change_clock: ChangeClockTable;
  organization_item_removals: OrganizationItemRemovalsTable;
  projects: ProjectsTable;
  secrets: SecretsTable;
  service_accounts: ServiceAccountsTable;
  access_tokens: AccessTokensTable;
  access_policies: AccessPoliciesTable;
  secret_versions: SecretVersionsTable;
  sm_revisions: SmRevisionsTable;
  secret_read_sets: SecretReadSetsTable;
  secret_read_set_members: SecretReadSetMembersTable;
  auth_requests: AuthRequestsTable;
  leases: LeasesTable;
  security_tasks: SecurityTasksTable;
  organization_reports: OrganizationReportsTable;
  organization_integrations: OrganizationIntegrationsTable;
  organization_integration_configurations: OrganizationIntegrationConfigurationsTable;
  integration_relay: IntegrationRelayTable;
  integration_dead_letters: IntegrationDeadLettersTable;
  two_factor_providers: TwoFactorProvidersTable;
  two_factor_recovery: TwoFactorRecoveryTable;
  one_time_codes: OneTimeCodesTable;
  two_factor_remember_tokens: TwoFactorRememberTokensTable;
  admin_sessions: AdminSessionsTable;
  admin_events: AdminEventsTable;
  sends: SendsTable;
  send_downloads: SendDownloadsTable;
}
