import type { Executor } from '../../db/database.js';
import { sql } from 'kysely';

/** The official SsoType. SAML 2.0 is not offered yet (docs/sso.md). */
export const SsoType = { OpenIdConnect: 1, Saml2: 2 } as const;

/** The official MemberDecryptionType: how a member who logged in through SSO unlocks the vault. */
export const MemberDecryptionType = { MasterPassword: 0, KeyConnector: 1, TrustedDeviceEncryption: 2 } as const;

/**
 * The official SsoConfigurationData, OpenID Connect part, with its field names. `clientSecret` is
 * as stored: sealed by the secrets key (platform/auth/secret-box.ts, purpose `ssoSecretPurpose`).
 */
export interface SsoConfigData {
  configType: number;
  memberDecryptionType: number;
  authority: string;
  clientId: string;
  clientSecret: string;
  metadataAddress?: string | null;
  /** 0 redirect (GET), 1 form post. */
  redirectBehavior?: number;
  getClaimsFromUserInfoEndpoint?: boolean;
  /** Space- or comma-separated, as the official form takes them. */
  additionalScopes?: string | null;
  additionalUserIdClaimTypes?: string | null;
  additionalEmailClaimTypes?: string | null;
  additionalNameClaimTypes?: string | null;
  acrValues?: string | null;
  expectedReturnAcrValue?: string | null;
  [field: string]: unknown;
}

export interface SsoConfig {
  organizationId: string;
  enabled: boolean;
  data: SsoConfigData;
  creationDate: string;
  revisionDate: string;
}

/** What the client secret of an organization is sealed for. */
export function ssoSecretPurpose(organizationId: string): string {
  return `sso-client-secret:${organizationId}`;
}

type Row = { organization_id: string; enabled: number | boolean; data: string; creation_date: string; revision_date: string };

function toConfig(row: Row): SsoConfig {
  return {
    organizationId: row.organization_id,
    enabled: Boolean(row.enabled),
    data: JSON.parse(row.data) as SsoConfigData,
    creationDate: row.creation_date,
    revisionDate: row.revision_date,
  };
}

export async function readSsoConfig(db: Executor, organizationId: string): Promise<SsoConfig | undefined> {
  const row = await db.selectFrom('sso_configs').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  return row ? toConfig(row) : undefined;
}

/** The configuration of the organization whose SSO identifier this is (matched case-insensitively, as officially). */
export async function readSsoConfigByIdentifier(db: Executor, identifier: string): Promise<SsoConfig | undefined> {
  const row = await db
    .selectFrom('sso_configs')
    .innerJoin('organizations', 'organizations.id', 'sso_configs.organization_id')
    .selectAll('sso_configs')
    .where(sql<string>`lower(organizations.identifier)`, '=', identifier.toLowerCase())
    .executeTakeFirst();
  return row ? toConfig(row) : undefined;
}

export async function saveSsoConfig(db: Executor, config: SsoConfig): Promise<void> {
  const row = {
    organization_id: config.organizationId,
    enabled: config.enabled,
    data: JSON.stringify(config.data),
    creation_date: config.creationDate,
    revision_date: config.revisionDate,
  };
  await db
    .insertInto('sso_configs')
    .values(row)
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ enabled: row.enabled, data: row.data, revision_date: row.revision_date }))
    .execute();
}
