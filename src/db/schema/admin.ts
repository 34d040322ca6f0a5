// The admin console's sessions and its own log.

export interface AdminSessionsTable {
  /** SHA-256 (hex) of the session cookie's value. */
  id: string;
  csrf_token: string;
  ip_address: string | null;
  creation_date: string;
  expiration_date: string;
}

export interface AdminEventsTable {
  id: string;
  date: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  detail: string | null;
  ip_address: string | null;
}
