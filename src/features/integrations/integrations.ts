import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import { SILENT_LOG } from '../../http/request-context.js';
import type { HealthCheck } from '../health/health.service.js';
import { createDeliverer } from './delivery.js';
import { createIntegrationService } from './integrations.service.js';
import { createOutbound } from './outbound.js';
import { createRelay, type Relay } from './relay.js';
import { amqpTransport, inProcessTransport, type Transport } from './transports.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * Forwarding events to organization integrations: the routes' service, and where this instance
 * relays, the outbox relay with its transport (RabbitMQ when AMQP_URL is set, in process
 * otherwise). See docs/integrations.md.
 */
export interface IntegrationsLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export function createIntegrations({ config, database, log = SILENT_LOG }: { config: Config; database: Database; log?: IntegrationsLog }) {
  const db = database.db;
  const runRelay = config.integrationsRelay;
  const outbound = createOutbound({ allowPrivateAddresses: config.integrationsAllowPrivateAddresses, timeoutMs: config.integrationsTimeoutMs });
  const deliverer = createDeliverer({ db, outbound, policy: { maxRetries: config.integrationsMaxRetries, baseMs: config.integrationsRetryBaseMs, capMs: HOUR_MS } });
  let transport: Transport | undefined;
  let relay: Relay | undefined;

  /**
   * Background work, for a serving instance only (buildApp starts it; the operator commands,
   * which build the features too, do not): the transport (connecting to RabbitMQ and consuming)
   * and, where this instance may relay, the relay.
   */
  function start(): void {
    if (transport || !(runRelay || config.amqpUrl)) return;
    transport = config.amqpUrl ? amqpTransport({ url: config.amqpUrl, prefix: config.amqpPrefix, db, deliverer, log }) : inProcessTransport({ db, deliverer });
    if (runRelay) {
      relay = createRelay({ db, engine: database.engine, transport, pollMs: config.integrationsPollMs, log });
      relay.start();
    }
  }
  const service = createIntegrationService({ db, transport: () => transport });

  /** `/healthz/extended`: the broker's state (Degraded while it is away) and the relay's. */
  const check: HealthCheck = {
    name: 'integrations',
    critical: false,
    async probe() {
      const data = { transport: transport?.kind ?? 'off', ...(transport ? { broker: transport.state() } : {}), relay: relay?.state() ?? null, deliveries: { ...deliverer.counters } };
      if (transport?.kind === 'amqp' && !transport.state().connected) {
        throw new Error(`RabbitMQ is not connected${transport.state().lastError ? ` (${String(transport.state().lastError)})` : ''}; events wait in the outbox`);
      }
      return data;
    },
  };

  return {
    start,
    service,
    check,
    relay,
    deliverer,
    async close() {
      // The relay's batch may be waiting on in-process retries (up to an hour apart) or a
      // delivery in flight: the transport and outbound requests stop first, so the batch fails
      // at once and is sent again after the restart, instead of holding the shutdown.
      const relayStopped = relay?.stop();
      await transport?.close();
      outbound.close();
      await relayStopped;
    },
  };
}

export type Integrations = ReturnType<typeof createIntegrations>;
