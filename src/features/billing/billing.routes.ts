import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { IdParams, ListOf, list } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import {
  AccountSubscriptionResponse,
  BillingMetadataResponse,
  OfferedPlanResponse,
  OrganizationSubscriptionResponse,
  VNextBillingMetadataResponse,
} from './billing.schemas.js';
import type { BillingService } from './billing.service.js';

const tags = ['Billing'];
const MEMBER = 'Access: a confirmed member of the organization (`orgMember`; anyone else gets 404).';
const NO_BILLING = 'No payment is ever taken here, so every subscription, invoice and payment flag is false or empty.';
const BOTH = 'Served on both variants (the official server serves it on one), as the answer holds on either and the web vault picks the path by its own build.';

const docs = {
  metadata: {
    summary: "An organization's billing metadata",
    description: `What web vaults of 2024-04 to 2026-02 read before the Members page opens: the seats in use (every membership but revoked ones) and the subscription flags. ${NO_BILLING} ${MEMBER}`,
  },
  vnextMetadata: {
    summary: "An organization's billing metadata (vnext)",
    description: `What later web vaults read before the member dialogs open: the seats in use (every membership but revoked ones); there is no Secrets Manager standalone plan and no payment method is ever asked for. ${BOTH} ${MEMBER}`,
  },
  selfHostMetadata: {
    summary: "An organization's billing metadata (self-hosted web vault)",
    description: `The same answer as \`GET /organizations/{id}/billing/vnext/metadata\`, at the path a self-hosted web vault reads. ${BOTH} ${MEMBER}`,
  },
  plans: {
    summary: 'The plans an organization can be created on',
    description:
      'Cloud: the current plan of each product tier (Free, Families, Teams Starter, Teams and Enterprise, monthly and annual), with their seats, storage, collection limits and features, at no price. Self-hosted: an empty list, as the official self-hosted server answers; organizations come from licenses there. Access: anyone (`anonymous`).',
  },
  organizationSubscription: {
    summary: "An organization's subscription",
    description: `The organization with its plan, seats and limits, the storage its items use, and its expiry: the expiry of its license on self-hosted (with no grace period, so \`expirationWithoutGracePeriod\` is the same date), none on cloud. ${NO_BILLING} Access: a confirmed owner (\`orgOwner\`); anyone else gets 404, as the official server answers.`,
  },
  accountSubscription: {
    summary: "The caller's subscription",
    description: `The storage the caller's attachments use and their quota; there is no premium subscription or user license to report. ${NO_BILLING} Served on both variants. Access: any signed-in user (\`user\`).`,
  },
} satisfies Record<string, RouteDoc>;

/** The billing reads of the API service: metadata, plans and subscriptions. */
export const billingRoutes: FastifyPluginAsyncTypebox<{ billing: BillingService; orgAccess: OrgAccess }> = async (app, { billing, orgAccess }) => {
  const member = { config: { access: orgAccess.member('id') } };

  app.get(
    '/organizations/:id/billing/metadata',
    { ...member, schema: { tags, ...docs.metadata, params: IdParams, response: { 200: BillingMetadataResponse } } },
    async (request) => billing.metadata(memberCaller(request)),
  );

  for (const [url, doc] of [
    ['/organizations/:id/billing/vnext/metadata', docs.vnextMetadata],
    ['/organizations/:id/billing/vnext/self-host/metadata', docs.selfHostMetadata],
  ] as const) {
    app.get(url, { ...member, schema: { tags, ...doc, params: IdParams, response: { 200: VNextBillingMetadataResponse } } }, async (request) =>
      billing.vnextMetadata(memberCaller(request)),
    );
  }

  app.get('/plans', { config: { access: access.anonymous }, schema: { tags, ...docs.plans, response: { 200: ListOf(OfferedPlanResponse) } } }, async () =>
    list([...billing.plans()]),
  );

  app.get(
    '/organizations/:id/subscription',
    { config: { access: orgAccess.owner('id') }, schema: { tags, ...docs.organizationSubscription, params: IdParams, response: { 200: OrganizationSubscriptionResponse } } },
    async (request) => billing.organizationSubscription(memberCaller(request)),
  );

  app.get(
    '/accounts/subscription',
    { config: { access: access.user }, schema: { tags, ...docs.accountSubscription, response: { 200: AccountSubscriptionResponse } } },
    async (request) => billing.accountSubscription(userCaller(request)),
  );
};
