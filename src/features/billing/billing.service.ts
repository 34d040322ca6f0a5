import type { Db } from '../../db/database.js';
import { NotFound, Unauthorized } from '../../http/errors.js';
import { readableBytes } from '../../shared/readable-bytes.js';
import { countOccupiedSeats, findOrganization } from '../../platform/access/memberships.js';
import { findUserById } from '../../platform/auth/users.repository.js';
import type { UserCaller } from '../../http/request-context.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import { toOrganizationResponse } from '../organizations/organizations.schemas.js';
import type {
  AccountSubscriptionResponse,
  BillingMetadataResponse,
  OfferedPlanResponse,
  OrganizationSubscriptionResponse,
  VNextBillingMetadataResponse,
} from './billing.schemas.js';
import { OFFERED_PLANS } from './offered-plans.js';

const GIB = 1024 ** 3;
/** The official StorageGb: gigabytes in use, to two decimals. */
const gigabytes = (bytes: number) => Math.round((bytes / GIB) * 100) / 100;

/**
 * What the web vault's billing, subscription and license pages read. Strongroom takes no
 * payment: there is never a subscription, an invoice or a payment method to report, only the
 * plan, the seats in use, the storage used and, for a licensed organization, its expiry.
 */
export function createBillingService(deps: { db: Db; selfHosted: boolean; userQuotaBytes: number }) {
  const { db, selfHosted } = deps;

  return {
    async metadata({ membership }: MemberCaller): Promise<BillingMetadataResponse> {
      const { organizationId } = membership;
      return {
        isEligibleForSelfHost: false,
        isManaged: false,
        isOnSecretsManagerStandalone: false,
        isSubscriptionUnpaid: false,
        hasSubscription: false,
        hasOpenInvoice: false,
        isSubscriptionCanceled: false,
        invoiceDueDate: null,
        invoiceCreatedDate: null,
        subPeriodEndDate: null,
        isPaymentMethodConfigured: false,
        organizationOccupiedSeats: await countOccupiedSeats(db, organizationId),
      };
    },

    /** Seats in use count every membership but revoked ones, as the seat limit does. */
    async vnextMetadata({ membership }: MemberCaller): Promise<VNextBillingMetadataResponse> {
      return { isOnSecretsManagerStandalone: false, organizationOccupiedSeats: await countOccupiedSeats(db, membership.organizationId), hasPaymentMethod: true };
    },

    /** Self-hosted offers no plans to buy: the official self-hosted server answers an empty list too. */
    plans(): readonly OfferedPlanResponse[] {
      return selfHosted ? [] : OFFERED_PLANS;
    },

    async organizationSubscription({ membership }: MemberCaller): Promise<OrganizationSubscriptionResponse> {
      const org = await findOrganization(db, membership.organizationId);
      if (!org) throw new NotFound();
      // A license here has no grace period: it stops at its expiry, so both dates are the same.
      const expiration = org.expiration_date;
      return {
        ...toOrganizationResponse(org, { billing: true }),
        object: 'organizationSubscription',
        storageName: org.storage_bytes > 0 ? readableBytes(org.storage_bytes) : null,
        storageGb: gigabytes(org.storage_bytes),
        subscription: null,
        upcomingInvoice: null,
        customerDiscount: null,
        expiration,
        expirationWithoutGracePeriod: selfHosted ? expiration : null,
        secretsManagerBeta: false,
      };
    },

    async accountSubscription({ userId }: UserCaller): Promise<AccountSubscriptionResponse> {
      const user = await findUserById(db, userId);
      if (!user) throw new Unauthorized();
      return {
        object: 'subscription',
        storageName: user.storage_bytes > 0 ? readableBytes(user.storage_bytes) : null,
        storageGb: gigabytes(user.storage_bytes),
        // The attachment quota, in whole gigabytes as the field is an integer (rounded up).
        maxStorageGb: Math.ceil(deps.userQuotaBytes / GIB),
        subscription: null,
        upcomingInvoice: null,
        customerDiscount: null,
        license: null,
        expiration: null,
        usingInAppPurchase: false,
      };
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
