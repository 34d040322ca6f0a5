import type { Generated } from 'kysely';

// The audit log and the outbox the integrations relay reads, with the read sets events of secret reads point to.

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
  /** A read of several secrets: the event stands for one Secret_Retrieved per secret of this set (see platform/audit/read-sets.ts). */
  read_set_id: Generated<string | null>;
  /** The Send a Send_* event is about (0015-files). */
  send_id: Generated<string | null>;
}

/** A list of secrets read together, named by its digest; see platform/audit/read-sets.ts. */
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
