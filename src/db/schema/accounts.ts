import type { Generated } from 'kysely';
import type { Bool } from './types.js';

// Accounts and the devices they log in from.

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
  /** Version-2 account keys (0026-account-keys-v2, docs/account-keys.md); all null for version-1 keys. */
  signed_public_key: string | null;
  /** As the client names it: `ed25519` or `mldsa44`. */
  signature_algorithm: string | null;
  wrapped_signing_key: string | null;
  verifying_key: string | null;
  security_state: string | null;
  security_version: number | null;
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
  /**
   * Trusted device encryption (0033-trusted-devices): the user key wrapped with the device's
   * public key, that public key wrapped with the user key, and the device's private key wrapped
   * with its device key (kept only on the device). Trusted when all three are set.
   */
  encrypted_user_key: string | null;
  encrypted_public_key: string | null;
  encrypted_private_key: string | null;
  /** Cleared by the official deactivation: the device leaves the account's list. */
  active: Generated<Bool>;
}

/**
 * A trusted emergency contact (0025-emergency-access). Type: 0 view, 1 takeover. Status: 0
 * invited, 1 accepted, 2 confirmed, 3 recovery initiated, 4 recovery approved.
 */
export interface EmergencyAccessTable {
  id: string;
  grantor_id: string;
  grantee_id: string | null;
  email: string | null;
  /** The grantor's user key wrapped with the grantee's public key; set at confirmation. */
  key_encrypted: string | null;
  type: number;
  status: number;
  wait_time_days: number;
  recovery_initiated_date: string | null;
  last_notification_date: string | null;
  creation_date: string;
  revision_date: string;
}
