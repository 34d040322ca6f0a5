import type { AccountEmails } from '../account-emails/account-emails.service.js';
import type { AccountService } from '../accounts/accounts.service.js';
import type { EventQueryService } from '../events/events.service.js';
import type { HealthService } from '../health/health.service.js';
import type { Mailer } from '../mail/mailer.js';
import type { OrganizationService } from '../organizations/organizations.service.js';
import type { RateLimits } from '../rate-limits/rate-limits.js';
import type { TwoFactorService } from '../two-factor/two-factor.service.js';

/**
 * The other features' services the admin console acts through: the operator's pages do what the
 * account's or the organization's own routes do, with the same rules and audit.
 */
export interface AdminConsoleFeatures {
  accounts: AccountService;
  accountEmails: AccountEmails;
  twoFactor: TwoFactorService;
  organizations: OrganizationService;
  events: EventQueryService;
  mailer: Mailer;
  health: HealthService;
  rateLimits: RateLimits;
}
