import type { Generated } from 'kysely';
import type { Bool } from './types.js';

// The vault: folders, items, each user's view of them, the collections they are in, and the stamps sync reads changes by.

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
