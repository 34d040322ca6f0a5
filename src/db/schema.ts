import type { UsersTable, DevicesTable, EmergencyAccessTable } from './schema/accounts.js';
import type { AdminSessionsTable, AdminEventsTable } from './schema/admin.js';
import type {
  ServerKeysTable,
  RefreshTokensTable,
  AuthRequestsTable,
  TwoFactorProvidersTable,
  TwoFactorRecoveryTable,
  OneTimeCodesTable,
  TwoFactorRememberTokensTable,
} from './schema/auth.js';
import type { WebAuthnCredentialsTable, WebAuthnSpentChallengesTable } from './schema/passkeys.js';
import type { SsoCodesTable, SsoConfigsTable, SsoFlowsTable, SsoUsersTable } from './schema/sso.js';
import type { WebPushKeysTable, WebPushSubscriptionsTable } from './schema/web-push.js';
import type { EventsTable, SecretReadSetsTable, SecretReadSetMembersTable } from './schema/events.js';
import type {
  OrganizationIntegrationsTable,
  OrganizationIntegrationConfigurationsTable,
  IntegrationRelayTable,
  IntegrationDeadLettersTable,
} from './schema/integrations.js';
import type { LeasesTable } from './schema/leases.js';
import type { PushOutboxTable } from './schema/push.js';
import type {
  OrganizationsTable,
  OrganizationUsersTable,
  GroupsTable,
  GroupUsersTable,
  CollectionsTable,
  CollectionUsersTable,
  CollectionGroupsTable,
  PoliciesTable,
  OrganizationApiKeysTable,
  SecurityTasksTable,
  OrganizationReportsTable,
} from './schema/organizations.js';
import type {
  ProjectsTable,
  SecretsTable,
  ServiceAccountsTable,
  AccessTokensTable,
  AccessPoliciesTable,
  SecretVersionsTable,
  SmRevisionsTable,
} from './schema/secrets-manager.js';
import type { SendsTable, SendDownloadsTable, SendAccessCodesTable } from './schema/sends.js';
import type {
  FoldersTable,
  CiphersTable,
  CipherUserSettingsTable,
  ChangeClockTable,
  OrganizationItemRemovalsTable,
  VaultRevisionsTable,
  CollectionCiphersTable,
} from './schema/vault.js';

/**
 * Row types of every table, as Kysely sees them: one module per area under schema/, assembled
 * here into the DB interface. Booleans read back as 0/1 on SQLite and true/false on PostgreSQL
 * (schema/types.ts); timestamps are ISO text.
 */
export type * from './schema/accounts.js';
export type * from './schema/auth.js';
export type * from './schema/organizations.js';
export type * from './schema/vault.js';
export type * from './schema/sends.js';
export type * from './schema/secrets-manager.js';
export type * from './schema/events.js';
export type * from './schema/integrations.js';
export type * from './schema/admin.js';
export type * from './schema/leases.js';
export type * from './schema/passkeys.js';
export type * from './schema/web-push.js';

export interface DB {
  users: UsersTable;
  devices: DevicesTable;
  emergency_access: EmergencyAccessTable;
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
  push_outbox: PushOutboxTable;
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
  webauthn_credentials: WebAuthnCredentialsTable;
  sso_configs: SsoConfigsTable;
  sso_users: SsoUsersTable;
  sso_flows: SsoFlowsTable;
  sso_codes: SsoCodesTable;
  webauthn_spent_challenges: WebAuthnSpentChallengesTable;
  send_access_codes: SendAccessCodesTable;
  web_push_keys: WebPushKeysTable;
  web_push_subscriptions: WebPushSubscriptionsTable;
}
