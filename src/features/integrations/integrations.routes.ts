import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import {
  ConfigurationBody,
  ConfigurationParams,
  ConfigurationResponse,
  DeadLetterParams,
  DeadLetterQuery,
  DeadLetterResponse,
  IntegrationBody,
  IntegrationParams,
  IntegrationResponse,
  OrgParams,
  ReplayAllBody,
  ReplayResponse,
} from './integrations.schemas.js';
import type { IntegrationService } from './integrations.service.js';

const tags = ['Integrations'];

const OWNER = 'Access: a confirmed Owner of the organization (`orgOwner`); anyone else gets 404, as on the official server.';
const docs = {
  list: { summary: "List an organization's integrations", description: `Answers the organization's integrations (Slack 3, Webhook 4, HEC 5, Datadog 6, Teams 7) with their settings, status and signing secret. ${OWNER}` },
  create: {
    summary: 'Create an integration',
    description: `Creates the organization's integration of a type (409 when it has one already). The configuration is JSON text: a webhook's optional {Uri, Scheme, Token}, HEC's {Uri, Scheme, Token, Service?}, Datadog's {ApiKey, Uri}, and for Slack and Teams {Uri} of an incoming webhook (Strongroom needs no OAuth app; see docs/integrations.md). ${OWNER}`,
  },
  update: { summary: 'Update an integration', description: `Replaces an integration's configuration; the type cannot change (400). ${OWNER}` },
  delete: { summary: 'Delete an integration', description: `Deletes an integration with its configurations (204). ${OWNER}` },
  listConfigurations: { summary: "List an integration's configurations", description: `Answers the configurations of one integration: event type (null for all), filters, template and own settings. ${OWNER}` },
  createConfiguration: {
    summary: 'Create an integration configuration',
    description: `Adds a configuration to an integration: which event type it forwards (null: all), filters (an IntegrationFilterGroup), the template whose #Property# tokens are replaced from each event, and its own settings (a webhook's Uri). ${OWNER}`,
  },
  updateConfiguration: { summary: 'Update an integration configuration', description: `Replaces a configuration's event type, filters, template and settings, checked as on creation. ${OWNER}` },
  deleteConfiguration: { summary: 'Delete an integration configuration', description: `Deletes one configuration of an integration. ${OWNER}` },
  deadLetters: {
    summary: 'List undeliverable events',
    description: `Strongroom: the dead-letter queue, deliveries that failed every retry (or failed for good, such as a refused address), oldest first, optionally of one integration. ${OWNER}`,
  },
  replay: {
    summary: 'Deliver a dead letter again',
    description: `Strongroom: queues one dead letter for delivery again with its configuration's current settings and takes it off the list (400 when its configuration is gone). ${OWNER}`,
  },
  replayAll: {
    summary: 'Deliver all dead letters again',
    description: `Strongroom: queues every dead letter of the organization (or of one integration) for delivery again; those whose configuration is gone stay listed. ${OWNER}`,
  },
} satisfies Record<string, RouteDoc>;

/** Organization integrations ({base_url}/organizations/{orgId}/integrations/...). */
export const integrationRoutes: FastifyPluginAsyncTypebox<{ integrations: IntegrationService; orgAccess: OrgAccess }> = async (app, { integrations, orgAccess }) => {
  const config = { access: orgAccess.owner() };
  const base = '/organizations/:orgId/integrations';

  app.get(base, { config, schema: { tags, ...docs.list, params: OrgParams, response: { 200: ListOf(IntegrationResponse) } } }, async (request) =>
    list(await integrations.list(memberCaller(request))),
  );

  app.post(base, { config, schema: { tags, ...docs.create, params: OrgParams, body: IntegrationBody, response: { 200: IntegrationResponse } } }, async (request) =>
    integrations.create(memberCaller(request), request.body),
  );

  app.put(`${base}/:integrationId`, { config, schema: { tags, ...docs.update, params: IntegrationParams, body: IntegrationBody, response: { 200: IntegrationResponse } } }, async (request) =>
    integrations.update(memberCaller(request), normalizeGuid(request.params.integrationId), request.body),
  );

  for (const [method, url] of [
    ['DELETE', `${base}/:integrationId`],
    ['POST', `${base}/:integrationId/delete`],
  ] as const) {
    app.route({
      method,
      url,
      config,
      schema: { tags, ...(method === 'DELETE' ? docs.delete : olderForm(docs.delete, 'DELETE /organizations/{orgId}/integrations/{integrationId}')), params: IntegrationParams, response: { 204: EmptyResponse } },
      handler: async (request, reply) => {
        await integrations.delete(memberCaller(request), normalizeGuid(request.params.integrationId));
        return reply.code(204).send(null);
      },
    });
  }

  const configurations = `${base}/:integrationId/configurations`;
  app.get(configurations, { config, schema: { tags, ...docs.listConfigurations, params: IntegrationParams, response: { 200: { type: 'array', items: ConfigurationResponse } } } }, async (request) =>
    integrations.listConfigurations(memberCaller(request), normalizeGuid(request.params.integrationId)),
  );

  app.post(configurations, { config, schema: { tags, ...docs.createConfiguration, params: IntegrationParams, body: ConfigurationBody, response: { 200: ConfigurationResponse } } }, async (request) =>
    integrations.createConfiguration(memberCaller(request), normalizeGuid(request.params.integrationId), request.body),
  );

  app.put(`${configurations}/:configurationId`, { config, schema: { tags, ...docs.updateConfiguration, params: ConfigurationParams, body: ConfigurationBody, response: { 200: ConfigurationResponse } } }, async (request) =>
    integrations.updateConfiguration(memberCaller(request), normalizeGuid(request.params.integrationId), normalizeGuid(request.params.configurationId), request.body),
  );

  for (const [method, url] of [
    ['DELETE', `${configurations}/:configurationId`],
    ['POST', `${configurations}/:configurationId/delete`],
  ] as const) {
    app.route({
      method,
      url,
      config,
      schema: {
        tags,
        ...(method === 'DELETE' ? docs.deleteConfiguration : olderForm(docs.deleteConfiguration, 'DELETE /organizations/{orgId}/integrations/{integrationId}/configurations/{configurationId}')),
        params: ConfigurationParams,
        response: { 200: EmptyResponse },
      },
      handler: async (request, reply) => {
        await integrations.deleteConfiguration(memberCaller(request), normalizeGuid(request.params.integrationId), normalizeGuid(request.params.configurationId));
        return emptyOk(reply);
      },
    });
  }

  app.get(`${base}/dead-letters`, { config, schema: { tags, ...docs.deadLetters, params: OrgParams, querystring: DeadLetterQuery, response: { 200: ListOf(DeadLetterResponse) } } }, async (request) =>
    list(await integrations.deadLetters(memberCaller(request), request.query.integrationId ? normalizeGuid(request.query.integrationId) : undefined)),
  );

  app.post(`${base}/dead-letters/:deadLetterId/replay`, { config, schema: { tags, ...docs.replay, params: DeadLetterParams, response: { 200: ReplayResponse } } }, async (request) =>
    integrations.replay(memberCaller(request), { id: normalizeGuid(request.params.deadLetterId) }),
  );

  app.post(`${base}/dead-letters/replay`, { config, schema: { tags, ...docs.replayAll, params: OrgParams, body: ReplayAllBody, response: { 200: ReplayResponse } } }, async (request) => {
    const integrationId = request.body?.integrationId;
    return integrations.replay(memberCaller(request), integrationId ? { integrationId: normalizeGuid(integrationId) } : {});
  });
};
