// Organization integrations and the relay that delivers events to them.

/** An organization's integration (the official OrganizationIntegration); see features/integrations. */
export interface OrganizationIntegrationsTable {
  id: string;
  organization_id: string;
  /** IntegrationType: Slack 3, Webhook 4, HEC 5, Datadog 6, Teams 7. */
  type: number;
  configuration: string | null;
  /** HMAC key of the signature header on every delivery. */
  signing_secret: string;
  creation_date: string;
  revision_date: string;
}

export interface OrganizationIntegrationConfigurationsTable {
  id: string;
  organization_integration_id: string;
  /** Null: every event type. */
  event_type: number | null;
  configuration: string | null;
  filters: string | null;
  template: string | null;
  creation_date: string;
  revision_date: string;
}

/** The outbox relay's cursor and fleet lease. */
export interface IntegrationRelayTable {
  name: string;
  cursor_seq: number | string;
  /** PostgreSQL: the transaction id of the last event relayed (see migration 0013). */
  cursor_tx: string | null;
  lease_owner: string | null;
  lease_until: string | null;
}

/** A delivery that failed every retry, kept until an owner replays it. */
export interface IntegrationDeadLettersTable {
  id: string;
  organization_id: string;
  integration_id: string;
  configuration_id: string;
  integration_type: number;
  message_id: string;
  event_type: number;
  body: string;
  attempts: number;
  last_error: string;
  creation_date: string;
}
