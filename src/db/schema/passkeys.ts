import type { Bool } from './types.js';

// Log in with a passkey (migration 0028).

export interface WebAuthnCredentialsTable {
  id: string;
  user_id: string;
  name: string;
  credential_id: string;
  public_key: string;
  /** Read back as text on PostgreSQL (bigint): the authenticator's sign count is an unsigned 32-bit number. */
  counter: number | string;
  type: string;
  aa_guid: string;
  /** JSON array of the transports the authenticator named at registration, or null. */
  transports: string | null;
  supports_prf: Bool;
  /** The user key wrapped with the credential's own key pair, whose private key the PRF output wraps; all three or none. */
  encrypted_user_key: string | null;
  encrypted_public_key: string | null;
  encrypted_private_key: string | null;
  creation_date: string;
  revision_date: string;
}

export interface WebAuthnSpentChallengesTable {
  challenge_hash: string;
  expiration_date: string;
}
