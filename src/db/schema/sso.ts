import type { Bool } from './types.js';

// Single sign-on per organization (0031-sso, docs/sso.md).

/** An organization's identity provider settings. */
export interface SsoConfigsTable {
  organization_id: string;
  enabled: Bool;
  /** The official SsoConfigurationData as JSON, with `clientSecret` sealed (platform/auth/secret-box.ts). */
  data: string;
  creation_date: string;
  revision_date: string;
}

/** An account's identity at an organization's provider: `external_id` is the provider's subject. */
export interface SsoUsersTable {
  id: string;
  user_id: string;
  organization_id: string;
  external_id: string;
  creation_date: string;
}
