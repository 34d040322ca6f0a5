import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { IntegrationMessage } from './messages.js';
import type { Outbound } from './outbound.js';
import { backoffMs, type Backoff } from '../../shared/backoff.js';

export interface RetryPolicy extends Backoff {
  maxRetries: number;
}

/** What became of one try. */
export type Outcome = { kind: 'delivered' } | { kind: 'retry'; message: IntegrationMessage; delayMs: number } | { kind: 'dead'; error: string };

export interface DeliveryCounters {
  delivered: number;
  retried: number;
  deadLettered: number;
}

/**
 * The last step (the official integration handlers and listener): one try of one message;
 * a retryable failure comes back as the message to try again later, a failure that is final
 * or out of retries is parked in the dead-letter table.
 */
export function createDeliverer({ db, outbound, policy }: { db: Db; outbound: Outbound; policy: RetryPolicy }) {
  const counters: DeliveryCounters = { delivered: 0, retried: 0, deadLettered: 0 };

  async function park(message: IntegrationMessage, error: string): Promise<void> {
    await db
      .insertInto('integration_dead_letters')
      .values({
        id: randomUUID(),
        organization_id: message.organizationId,
        integration_id: message.integrationId,
        configuration_id: message.configurationId,
        integration_type: message.integrationType,
        message_id: message.messageId,
        event_type: message.eventType,
        body: message.body,
        attempts: message.attempt + 1,
        last_error: error.slice(0, 1000),
        creation_date: new Date().toISOString(),
      })
      .execute();
    counters.deadLettered++;
  }

  return {
    counters,
    async attempt(message: IntegrationMessage): Promise<Outcome> {
      let uri: URL;
      try {
        uri = new URL(message.target.uri);
      } catch {
        await park(message, 'The integration has no valid address.');
        return { kind: 'dead', error: 'The integration has no valid address.' };
      }
      const result = await outbound.send({
        type: message.integrationType,
        target: { ...message.target, uri },
        body: message.body,
        messageId: message.messageId,
        signingSecret: message.signingSecret,
      });
      if (result.ok) {
        counters.delivered++;
        return { kind: 'delivered' };
      }
      const error = result.error ?? 'failed';
      if (result.retryable && message.attempt < policy.maxRetries) {
        const delayMs = Math.max(backoffMs(policy, message.attempt), Math.min(result.retryAfterMs ?? 0, policy.capMs));
        counters.retried++;
        return { kind: 'retry', delayMs, message: { ...message, attempt: message.attempt + 1, notBefore: Date.now() + delayMs, lastError: error } };
      }
      await park(message, error);
      return { kind: 'dead', error };
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
