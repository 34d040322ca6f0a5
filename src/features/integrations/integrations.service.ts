import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import { BadRequest, HttpError, NotFound } from '../../http/errors.js';
import { replayMessage } from './messages.js';
import { integrationStatus, validateConfiguration, validateIntegrationConfiguration, type IntegrationType } from './rules.js';
import type { ConfigurationBody, IntegrationBody } from './integrations.schemas.js';
import type { Transport } from './transports.js';

/** 409: the official answer to a second integration of a type. */
export class Conflict extends HttpError {
  readonly statusCode = 409;
}

type IntegrationRow = { id: string; type: number; configuration: string | null; signing_secret: string };

function integrationResponse(row: IntegrationRow) {
  return {
    id: row.id,
    type: row.type,
    configuration: row.configuration,
    status: integrationStatus(row.type, row.configuration),
    signingSecret: row.signing_secret,
    object: 'organizationIntegration' as const,
  };
}

type ConfigurationRow = { id: string; configuration: string | null; filters: string | null; creation_date: string; event_type: number | null; template: string | null };

function configurationResponse(row: ConfigurationRow) {
  return {
    id: row.id,
    configuration: row.configuration,
    filters: row.filters,
    creationDate: row.creation_date,
    eventType: row.event_type,
    template: row.template,
    object: 'organizationIntegrationConfiguration' as const,
  };
}

const blankToNull = (value: string | null | undefined) => (value === undefined || value === null || value.trim() === '' ? null : value);

/** Organization integrations and their configurations (Owner only, checked by the routes), and the dead letters. */
export function createIntegrationService({ db, transport }: { db: Db; transport: () => Transport | undefined }) {
  async function integration(organizationId: string, id: string) {
    const row = await db.selectFrom('organization_integrations').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    if (!row) throw new NotFound();
    return row;
  }

  async function configuration(integrationId: string, id: string) {
    const row = await db.selectFrom('organization_integration_configurations').selectAll().where('id', '=', id).where('organization_integration_id', '=', integrationId).executeTakeFirst();
    if (!row) throw new NotFound();
    return row;
  }

  function configurationFields(type: IntegrationType, body: ConfigurationBody) {
    const fields = {
      configuration: blankToNull(body.configuration),
      event_type: body.eventType ?? null,
      filters: blankToNull(body.filters),
      template: body.template ?? null,
    };
    validateConfiguration(type, { configuration: fields.configuration, eventType: fields.event_type, filters: fields.filters, template: fields.template });
    return fields;
  }

  return {
    async list({ membership: { organizationId } }: MemberCaller) {
      const rows = await db.selectFrom('organization_integrations').selectAll().where('organization_id', '=', organizationId).orderBy('creation_date').orderBy('id').execute();
      return rows.map(integrationResponse);
    },

    async create({ membership: { organizationId } }: MemberCaller, body: IntegrationBody) {
      const configurationText = blankToNull(body.configuration);
      validateIntegrationConfiguration(body.type, configurationText);
      const now = new Date().toISOString();
      const row = { id: randomUUID(), organization_id: organizationId, type: body.type, configuration: configurationText, signing_secret: randomBytes(32).toString('base64url'), creation_date: now, revision_date: now };
      return db.transaction().execute(async (tx) => {
        const existing = await tx.selectFrom('organization_integrations').select('id').where('organization_id', '=', organizationId).where('type', '=', body.type).executeTakeFirst();
        if (existing) throw new Conflict('An integration of this type already exists for this organization.');
        await tx.insertInto('organization_integrations').values(row).execute();
        return integrationResponse(row);
      });
    },

    async update({ membership: { organizationId } }: MemberCaller, id: string, body: IntegrationBody) {
      const current = await integration(organizationId, id);
      if (current.type !== body.type) throw BadRequest.field('type', 'Integration not found for this organization with the specified type.');
      const configurationText = blankToNull(body.configuration);
      validateIntegrationConfiguration(body.type, configurationText);
      await db.updateTable('organization_integrations').set({ configuration: configurationText, revision_date: new Date().toISOString() }).where('id', '=', id).execute();
      return integrationResponse({ ...current, configuration: configurationText });
    },

    async delete({ membership: { organizationId } }: MemberCaller, id: string) {
      await integration(organizationId, id);
      await db.deleteFrom('organization_integrations').where('id', '=', id).execute();
    },

    async listConfigurations({ membership: { organizationId } }: MemberCaller, integrationId: string) {
      await integration(organizationId, integrationId);
      const rows = await db.selectFrom('organization_integration_configurations').selectAll().where('organization_integration_id', '=', integrationId).orderBy('creation_date').orderBy('id').execute();
      return rows.map(configurationResponse);
    },

    async createConfiguration({ membership: { organizationId } }: MemberCaller, integrationId: string, body: ConfigurationBody) {
      const parent = await integration(organizationId, integrationId);
      const fields = configurationFields(parent.type, body);
      const now = new Date().toISOString();
      const row = { id: randomUUID(), organization_integration_id: integrationId, ...fields, creation_date: now, revision_date: now };
      await db.insertInto('organization_integration_configurations').values(row).execute();
      return configurationResponse(row);
    },

    async updateConfiguration({ membership: { organizationId } }: MemberCaller, integrationId: string, id: string, body: ConfigurationBody) {
      const parent = await integration(organizationId, integrationId);
      const current = await configuration(integrationId, id);
      const fields = configurationFields(parent.type, body);
      await db.updateTable('organization_integration_configurations').set({ ...fields, revision_date: new Date().toISOString() }).where('id', '=', id).execute();
      return configurationResponse({ ...current, ...fields });
    },

    async deleteConfiguration({ membership: { organizationId } }: MemberCaller, integrationId: string, id: string) {
      await integration(organizationId, integrationId);
      await configuration(integrationId, id);
      await db.deleteFrom('organization_integration_configurations').where('id', '=', id).execute();
    },

    async deadLetters({ membership: { organizationId } }: MemberCaller, integrationId?: string) {
      let query = db.selectFrom('integration_dead_letters').selectAll().where('organization_id', '=', organizationId);
      if (integrationId) query = query.where('integration_id', '=', integrationId);
      const rows = await query.orderBy('creation_date').orderBy('id').limit(10_000).execute();
      return rows.map((r) => ({
        id: r.id,
        integrationId: r.integration_id,
        configurationId: r.configuration_id,
        integrationType: r.integration_type,
        eventType: r.event_type,
        messageId: r.message_id,
        body: r.body,
        attempts: r.attempts,
        lastError: r.last_error,
        creationDate: r.creation_date,
        object: 'integrationDeadLetter' as const,
      }));
    },

    /** Queues dead letters for delivery again, with their configuration's current target; each leaves the list once queued. */
    async replay({ membership: { organizationId } }: MemberCaller, select: { id?: string; integrationId?: string | null }) {
      const queue = transport();
      if (!queue) throw new BadRequest('Forwarding is not running on this server (INTEGRATIONS_RELAY is off and no broker is set).');
      let query = db.selectFrom('integration_dead_letters').selectAll().where('organization_id', '=', organizationId);
      if (select.id) query = query.where('id', '=', select.id);
      if (select.integrationId) query = query.where('integration_id', '=', select.integrationId);
      const letters = await query.orderBy('creation_date').orderBy('id').limit(10_000).execute();
      if (select.id && letters.length === 0) throw new NotFound();
      let replayed = 0;
      let skipped = 0;
      for (const letter of letters) {
        let message;
        try {
          message = await replayMessage(db, letter);
        } catch {
          message = null;
        }
        if (!message) {
          skipped++;
          continue;
        }
        await queue.enqueue(message);
        await db.deleteFrom('integration_dead_letters').where('id', '=', letter.id).execute();
        replayed++;
      }
      if (select.id && skipped > 0) throw new BadRequest('The configuration of this dead letter no longer exists or no longer names a valid address.');
      return { replayed, skipped, object: 'integrationReplay' as const };
    },
  };
}

export type IntegrationService = ReturnType<typeof createIntegrationService>;
