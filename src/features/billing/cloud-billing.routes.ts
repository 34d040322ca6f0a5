import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { access, type AccessRule } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, IdParams, emptyOk } from '../../http/schemas.js';
import type { OrgAccess } from '../../platform/access/org-access.js';
import {
  BillingHistoryResponse,
  LegacyBillingPaymentResponse,
  LegacyBillingResponse,
  NeverPresent,
  OrganizationWarningsResponse,
  type BillingHistoryResponse as BillingHistory,
  type LegacyBillingPaymentResponse as LegacyBillingPayment,
  type LegacyBillingResponse as LegacyBilling,
  type OrganizationWarningsResponse as OrganizationWarnings,
} from './billing.schemas.js';

/**
 * The reads of the cloud build's billing pages (ENV != selfhosted, so isSelfHost() is false):
 * an organization's Subscription, Payment details and Billing history and the warning banners
 * of its admin console, an account's Payment details and Billing history. Strongroom takes no
 * payment, so each answers as the official cloud server answers a subscriber with no payment
 * records: no invoices or transactions, no payment method, address or credit, no warnings.
 * Served on cloud only: a self-hosted web vault never calls them (docs/web-vault.md).
 */
interface CloudBillingRead {
  url: string;
  /** Who may read it, as the official controller requires. */
  who: 'owner' | 'member' | 'user';
  doc: RouteDoc;
  /** The 200 body's schema; EmptyResponse where the official server writes no body (a null answer). */
  body: TSchema;
  /** The fixed answer; absent for the empty body. */
  answer?: () => unknown;
  querystring?: TSchema;
}

const tags = ['Billing'];
const CLOUD = 'Served on cloud only (the cloud build of the web vault reads it; a self-hosted one never does). No payment is ever taken here.';
const OWNER = 'Access: a confirmed owner (`orgOwner`): who may read it is the official rule (owners, and providers, which do not exist here); anyone else gets 404, as on the other organization routes.';
const MEMBER = 'Access: a confirmed member of the organization (`orgMember`; anyone else gets 404).';
const USER = 'Access: any signed-in user (`user`).';
const NO_BODY = 'An empty 200, as the official server answers a subscriber with no payment customer (the web vault reads it as null).';

const history = (): BillingHistory => ({ object: 'billingHistory', invoices: [], transactions: [] });
const legacyBilling = (): LegacyBilling => ({ object: 'billing', balance: 0, paymentSource: null, invoices: [], transactions: [] });
const legacyPayment = (): LegacyBillingPayment => ({ object: 'billingPayment', balance: 0, paymentSource: null });
const noWarnings = (): OrganizationWarnings => ({ freeTrial: null, inactiveSubscription: null, resellerRenewal: null, taxId: null });
const noRecords = (): never[] => [];

const InvoicesQuery = Type.Object({ status: Type.Optional(Type.String()), startAfter: Type.Optional(Type.String()) });
const TransactionsQuery = Type.Object({ startAfter: Type.Optional(Type.String()) });
const NoRecords = Type.Array(NeverPresent);

/**
 * The Payment details page's three reads (payment method, billing address, credit), which the
 * official server answers with an empty 200 when no payment customer stands behind them.
 */
function noCustomerReads(base: string, who: CloudBillingRead['who'], whose: string, page: string): CloudBillingRead[] {
  const access = who === 'owner' ? OWNER : USER;
  return [
    ['payment-method', 'payment method', 'no payment method'],
    ['address', 'billing address', 'no billing address'],
    ['credit', 'account credit', 'no credit'],
  ].map(([path, what, none]) => ({
    url: `${base}/${path}`,
    who,
    doc: { summary: `${whose} ${what}`, description: `${page} › Payment details: ${none}. ${NO_BODY} ${CLOUD} ${access}` },
    body: EmptyResponse,
  }));
}

const READS: CloudBillingRead[] = [
  {
    url: '/organizations/:id/billing/history',
    who: 'owner',
    doc: { summary: "An organization's billing history", description: `Billing › Billing history: no invoices and no transactions. ${CLOUD} ${OWNER}` },
    body: BillingHistoryResponse,
    answer: history,
  },
  {
    url: '/organizations/:id/billing',
    who: 'owner',
    doc: {
      summary: "An organization's billing (older Payment method page)",
      description: `What web vaults before the payment details page read: a zero balance, no payment source, no invoices or transactions. ${CLOUD} ${OWNER}`,
    },
    body: LegacyBillingResponse,
    answer: legacyBilling,
  },
  ...noCustomerReads('/organizations/:id/billing/vnext', 'owner', "An organization's", 'Billing'),
  {
    url: '/organizations/:id/billing/vnext/warnings',
    who: 'member',
    doc: {
      summary: "An organization's billing warnings",
      description: `The banners of the admin console (free trial ending, inactive subscription, reseller renewal, tax id): none, as for an organization with no subscription. ${CLOUD} ${MEMBER}`,
    },
    body: OrganizationWarningsResponse,
    answer: noWarnings,
  },
  {
    url: '/accounts/billing/history',
    who: 'user',
    doc: { summary: "The caller's billing history", description: `Settings › Billing history: no invoices and no transactions. ${CLOUD} ${USER}` },
    body: BillingHistoryResponse,
    answer: history,
  },
  {
    url: '/accounts/billing/invoices',
    who: 'user',
    doc: { summary: "The caller's invoices", description: `Settings › Billing history, a page at a time: always an empty array (\`status\` and \`startAfter\` change nothing). ${CLOUD} ${USER}` },
    body: NoRecords,
    answer: noRecords,
    querystring: InvoicesQuery,
  },
  {
    url: '/accounts/billing/transactions',
    who: 'user',
    doc: { summary: "The caller's transactions", description: `Settings › Billing history, a page at a time: always an empty array. ${CLOUD} ${USER}` },
    body: NoRecords,
    answer: noRecords,
    querystring: TransactionsQuery,
  },
  {
    url: '/accounts/billing/payment-method',
    who: 'user',
    doc: {
      summary: "The caller's payment method (older Payment method page)",
      description: `What web vaults before the payment details page read: a zero balance and no payment source. ${CLOUD} ${USER}`,
    },
    body: LegacyBillingPaymentResponse,
    answer: legacyPayment,
  },
  ...noCustomerReads('/account/billing/vnext', 'user', "The caller's", 'Settings'),
];

/** The cloud billing pages' reads; registered only when the deployment is cloud. */
export const cloudBillingRoutes: FastifyPluginAsyncTypebox<{ orgAccess: OrgAccess }> = async (app, { orgAccess }) => {
  const rules: Record<CloudBillingRead['who'], AccessRule> = { owner: orgAccess.owner('id'), member: orgAccess.member('id'), user: access.user };

  for (const read of READS) {
    const { answer } = read;
    app.get(read.url, {
      config: { access: rules[read.who] },
      schema: {
        tags,
        ...read.doc,
        ...(read.who === 'user' ? {} : { params: IdParams }),
        ...(read.querystring ? { querystring: read.querystring } : {}),
        response: { 200: read.body },
      },
      handler: async (_request, reply: FastifyReply) => (answer ? answer() : emptyOk(reply)),
    });
  }
};
