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

/** An SSO login between the client's authorize request and the provider's callback (0032-sso-logins). */
export interface SsoFlowsTable {
  state_hash: string;
  organization_id: string;
  client_id: string;
  redirect_uri: string;
  client_state: string | null;
  code_challenge: string;
  code_verifier: string;
  nonce: string;
  link_user_id: string | null;
  creation_date: string;
  expiration_date: string;
  used: Bool;
}

/** The authorization code an SSO login ends with, by its hash; redeemed once at the token endpoint. */
export interface SsoCodesTable {
  code_hash: string;
  user_id: string;
  organization_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  creation_date: string;
  expiration_date: string;
  used: Bool;
}
