import { Type, type Static } from 'typebox';
import { Guid, Nullable } from '../../http/schemas.js';

const JsonText = (description: string) => Type.Optional(Nullable(Type.String({ maxLength: 20_000, description })));

export const OrgParams = Type.Object({ orgId: Guid });
export const IntegrationParams = Type.Object({ orgId: Guid, integrationId: Guid });
export const ConfigurationParams = Type.Object({ orgId: Guid, integrationId: Guid, configurationId: Guid });
export const DeadLetterParams = Type.Object({ orgId: Guid, deadLetterId: Guid });

export const IntegrationBody = Type.Object({
  type: Type.Integer({ description: 'IntegrationType: Slack 3, Webhook 4, HEC 5, Datadog 6, Teams 7.' }),
  configuration: JsonText('The integration\'s settings as JSON text (see docs/integrations.md), e.g. {"Uri":"https://…","Scheme":"Bearer","Token":"…"}.'),
});
export type IntegrationBody = Static<typeof IntegrationBody>;

export const ConfigurationBody = Type.Object({
  configuration: JsonText('Settings of this configuration as JSON text: a webhook\'s own Uri/Scheme/Token, another Slack or Teams incoming webhook; null for HEC and Datadog.'),
  eventType: Type.Optional(Nullable(Type.Integer({ description: 'The event type forwarded; null forwards every type.' }))),
  filters: JsonText('An IntegrationFilterGroup as JSON text: {"AndOperator":true,"Rules":[{"Property":"ActingUserId","Operation":0,"Value":"<guid>"}],"Groups":[]}.'),
  template: Type.Optional(Nullable(Type.String({ maxLength: 20_000, description: 'The body sent for each event, with #Property# tokens replaced from it.' }))),
});
export type ConfigurationBody = Static<typeof ConfigurationBody>;

export const IntegrationResponse = Type.Object({
  id: Guid,
  type: Type.Integer(),
  configuration: Nullable(Type.String()),
  status: Type.Integer({ description: 'OrganizationIntegrationStatus: NotApplicable 0, Invalid 1, Initiated 2, InProgress 3, Completed 4.' }),
  signingSecret: Type.String({ description: 'Strongroom: the key of the X-Strongroom-Signature header on every delivery of this integration.' }),
  object: Type.Literal('organizationIntegration'),
});

export const ConfigurationResponse = Type.Object({
  id: Guid,
  configuration: Nullable(Type.String()),
  filters: Nullable(Type.String()),
  creationDate: Type.String({ format: 'date-time' }),
  eventType: Nullable(Type.Integer()),
  template: Nullable(Type.String()),
  object: Type.Literal('organizationIntegrationConfiguration'),
});

export const DeadLetterResponse = Type.Object({
  id: Guid,
  integrationId: Guid,
  configurationId: Guid,
  integrationType: Type.Integer(),
  eventType: Type.Integer(),
  messageId: Type.String(),
  body: Type.String({ description: 'The rendered template that could not be delivered.' }),
  attempts: Type.Integer({ description: 'Tries made, the first included.' }),
  lastError: Type.String(),
  creationDate: Type.String({ format: 'date-time' }),
  object: Type.Literal('integrationDeadLetter'),
});

export const DeadLetterQuery = Type.Object({ integrationId: Type.Optional(Guid) });
export const ReplayAllBody = Type.Optional(Nullable(Type.Object({ integrationId: Type.Optional(Nullable(Guid)) })));

export const ReplayResponse = Type.Object({
  replayed: Type.Integer({ description: 'Dead letters queued for delivery again (and taken off the list).' }),
  skipped: Type.Integer({ description: 'Dead letters left on the list because their configuration no longer exists or no longer makes a target.' }),
  object: Type.Literal('integrationReplay'),
});
