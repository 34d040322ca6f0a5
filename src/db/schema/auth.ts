import type { Generated } from 'kysely';
import type { Bool } from './types.js';

// Logging in: the token signing keys, refresh tokens, login with a device, two-step login and emailed codes.

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
  /** The chain of rotations from one login: a stolen token's reuse revokes all of it. */
  family_id: string;
  /** When the token was first exchanged; null while unused. */
  used_date: string | null;
}

export interface AuthRequestsTable {
  id: string;
  user_id: string;
  /** 0 AuthenticateAndUnlock, 1 Unlock: answered by one of the user's devices; 2 AdminApproval: by the admins of `organization_id`. */
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
  /** The organization whose admins answer an AdminApproval request (0034); null for the other types. */
  organization_id: string | null;
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
