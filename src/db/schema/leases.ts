// Leases that let one instance of a fleet do a background job at a time.

/** A named, expiring lease: who holds it until when (see db/leases.ts: event retention, the integrations relay). */
export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: string;
}
