import type { Generated } from 'kysely';
import type { Bool } from './types.js';

// Sends and their file downloads.

/** A text or file Send (0015-files): `data` holds the encrypted name, notes and text or file metadata. */
export interface SendsTable {
  id: string;
  user_id: string;
  type: number;
  data: string;
  key: string;
  /** Server-side hash of the client-derived Send password hash (password-hasher.ts); null without a password. */
  password_hash: string | null;
  /** The addresses of an email-verified Send (0029-send-emails), lowercased and comma-separated; null otherwise. */
  emails: string | null;
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

/** A one-time code mailed to an address of an email-verified Send (migration 0029), stored hashed. */
export interface SendAccessCodesTable {
  send_id: string;
  /** A digest of the lowercased address the code was mailed to. */
  email_digest: string;
  code_hash: string;
  attempts: Generated<number>;
  expiration_date: string;
  creation_date: string;
}
