/* Why no self-hosted web vault page reaches the routes of a feature not offered, shared by its routes (docs/web-vault.md). */
const ORG_BILLING =
  'not offered: an organization\'s cloud billing (payments, plan and seat changes, invoices, credit, trial and churn offers, warnings). A self-hosted web vault never calls it: it shows Payment method and Billing history only when !isSelfHost() (organization-layout showPaymentAndHistory$), its Billing > Subscription is OrganizationSubscriptionSelfhostComponent (license upload, no plan changes), OrganizationWarningsService answers null when isSelfHost(), and New organization there is the license upload. The official self-hosted server refuses the billing routes it has with 400 "Only allowed when not self hosted." ([SelfHosted(NotSelfHostedOnly = true)] on OrganizationBillingVNextController and the organization billing actions).';
const ACCOUNT_BILLING =
  'not offered: an account\'s cloud billing (premium purchase, payment method, invoices, credit, storage). A self-hosted web vault never calls it: Settings > Subscription hides the Payment details and Billing history tabs when selfHosted (subscription.component), shows the self-hosted premium panel whose only action is the license upload (POST /accounts/license, served), its Premium page is SelfHostedPremiumComponent (license upload), and every Strongroom account has premium. The official self-hosted server refuses AccountBillingVNextController and accounts/billing/history with 400 "Only allowed when not self hosted.".';
/* What a cloud deployment answers for the reads of the cloud build's billing pages (src/features/billing/cloud-billing.routes.ts); this test runs a self-hosted server. */
const ORG_BILLING_READ = `${ORG_BILLING} On DEPLOYMENT=cloud Strongroom answers it as the official cloud server answers an organization with no payment records (no invoices or transactions, an empty 200 for the payment method, address and credit, no warnings), for the cloud build of the web vault.`;
const ACCOUNT_BILLING_READ = `${ACCOUNT_BILLING} On DEPLOYMENT=cloud Strongroom answers it as the official cloud server answers an account with no payment records (no invoices or transactions, an empty 200 for the payment method, address and credit), for the cloud build of the web vault.`;
const SM_SUBSCRIPTION =
  'not offered: Secrets Manager subscriptions are cloud billing; Secrets Manager itself is served. The web vault calls it only from the Secrets Manager sections of OrganizationSubscriptionCloudComponent (adjust seats, subscribe standalone), which a self-hosted web vault replaces with OrganizationSubscriptionSelfhostComponent; the official self-hosted server answers 400 "Only allowed when not self hosted.".';
const PAM =
  'not offered: privileged access management preview. The web vault calls it only while the FeatureFlag.Pam flag ("pm-37044-pam-v-0") is on and, for organization pages, for an organization with usePam; Strongroom\'s /config sends none of these flags and every organization answers usePam false. The official server maps its PAM endpoints only behind that flag (RequireFeature); the rotation routes are newer than its 2026-08 source.';
const PROVIDERS =
  'not offered: the provider portal (MSPs). The web vault calls it only from /providers pages, which it opens for a user whose profile lists the provider (profile.providers), or from the provider setup, invitation and deletion mails, which only the Bitwarden cloud sends; Strongroom\'s profile lists none, and no provider can exist on an official self-hosted server either (providers are created in the Bitwarden cloud Admin portal, whose ProvidersController is [SelfHosted(NotSelfHostedOnly = true)]).';
const CONNECTIONS =
  'not offered: organization connections (billing sync, cloud SCIM) need Bitwarden cloud communication. The web vault calls it only after GET /organizations/connections/enabled answers true (OrganizationSubscriptionSelfhostComponent disables the sync control otherwise); Strongroom answers false, as the official self-hosted server does without cloud communication.';
const AUTO_CONFIRM =
  'not offered: automatic confirmation (a 2025 policy). The web vault calls it only for an organization with useAutomaticUserConfirmation (Organization.canManageAutoConfirm; the login sweep also needs the BulkAutoConfirmOnLogin flag); Strongroom\'s organizations answer useAutomaticUserConfirmation false and /config sends none of these flags.';
const CLAIMED_DELETE =
  'not offered: deleting claimed members needs verified domains. The Members page offers Delete (instead of Remove) only for a member whose claimedByOrganization is true; Strongroom always answers false, and the official server refuses any other member ("Member is not claimed by the organization.").';
const API_KEY_INFO =
  'not offered: billing-sync API key information (cloud communication); the organization API key itself is served. The web vault calls it only from OrganizationCloudManageSelfHostComponent on the cloud organization subscription page (the billing sync token of enterprise plans), which a self-hosted web vault replaces with OrganizationSubscriptionSelfhostComponent.';
const KEY_CONNECTOR =
  'not offered: Key Connector (#42 keeps it out of scope). The web vault calls it only after a single sign-on login to an organization that uses Key Connector (keyConnectorEnabled and keyConnectorUrl in the profile and the token\'s user decryption options); Strongroom\'s single sign-on refuses Key Connector in the SSO settings (docs/sso.md) and answers keyConnectorEnabled false.';
const REPORT_FILES =
  'not offered: Access Intelligence reports kept as files in cloud storage; the reports themselves are served (the latest report, its summary and application data, deletion). The web vault calls these only while the AccessIntelligenceReportFileStorage flag ("pm-31920-access-intelligence-azure-file-storage") is on: FilePersistenceFeatureFlagService picks FileReportPersistenceService then, and otherwise DefaultReportPersistenceService, which uses only served routes; Strongroom\'s /config sends none of these flags.';
const RECEIVE =
  'not offered yet: Receive (a 2026 Tools feature: a link through which anyone may upload a file to an account holder). The official server serves it (ReceivesController: create and update need premium; shared, file upload and validation are anonymous with a Receive-Secret header), but no stored web vault source opens a page that calls it: apps/web oss-routing.module.ts (at 420bd761 and 0221a8e8) routes nothing to tools/receive, and the FeatureFlag enum (at 0001ba61) has no Receive flag. No open issue covers it yet.';
const SPONSORSHIPS =
  'not offered: Families sponsorships come from Bitwarden cloud billing. A self-hosted web vault lists, re-sends and revokes them only on the sponsored-families pages (Settings > Free Bitwarden Families rows, Members > sponsored families), shown for an organization with familySponsorshipAvailable or a familySponsorshipFriendlyName (Organization.canManageSponsorships) or, under Members, with useAdminSponsoredFamilies and the PM17772 flag; Strongroom answers false, null and false, and /config sends none of these flags.';
const SPONSORSHIPS_CLOUD =
  'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault uses this path only when !isSelfHost(): OrganizationSponsorshipApiService adds "self-hosted/" otherwise.';
const END_USER_NOTIFICATIONS =
  'not offered yet: end-user notifications (the notification center fed by security tasks; the tasks themselves are served). The callers found in the index are the browser extension\'s: its background starts DefaultEndUserNotificationService.listenForEndUserNotifications (behind the EndUserNotifications flag in older releases); none was found in apps/web. No open issue covers it yet.';
const ALERT_EXCLUSIONS =
  'not offered yet: personal vault alert exclusions (a 2026 feature: a user marks an at-risk password as accepted). The callers found in the index are the browser extension popup\'s (PersonalVaultAlertService, the reports detail page); the client treats a 404 as an empty list ("server endpoint not yet deployed"). No open issue covers it yet.';

/**
 * The routes the official clients call that Strongroom does not serve yet (see
 * test/official-routes.test.ts), each with the issue that will serve it or why it is not offered.
 * Remove an entry when its route is served: the test fails on a stale one.
 */
export const UNSERVED: Record<string, string> = {
  'DELETE /api/alerts/dismissals/{}': ALERT_EXCLUSIONS,
  'DELETE /api/notifications/{}/delete': END_USER_NOTIFICATIONS,
  'DELETE /api/organization/sponsorship/{}': SPONSORSHIPS_CLOUD,
  'DELETE /api/organization/sponsorship/self-hosted/{}': SPONSORSHIPS,
  'DELETE /api/organization/sponsorship/sponsored/{}':
    'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault removes a sponsorship only from the sponsored Families organization\'s cloud subscription page, which a self-hosted web vault replaces with OrganizationSubscriptionSelfhostComponent; the official self-hosted server answers 400 "Only allowed when not self hosted.".',
  'DELETE /api/organizations/{}/rotation/configs/{}': PAM,
  'DELETE /api/organizations/{}/rotation/daemons/{}': PAM,
  'DELETE /api/organizations/{}/rotation/daemons/{}/assignments/{}': PAM,
  'DELETE /api/organizations/{}/rotation/target-systems/{}': PAM,
  'DELETE /api/organizations/{}/users/{}/delete-account': CLAIMED_DELETE,
  'DELETE /api/organizations/{}/users/delete-account': CLAIMED_DELETE,
  'DELETE /api/organizations/connections/{}': CONNECTIONS,
  'DELETE /api/providers/{}': PROVIDERS,
  'DELETE /api/providers/{}/organizations/{}': PROVIDERS,
  'DELETE /api/providers/{}/users': PROVIDERS,
  'DELETE /api/providers/{}/users/{}': PROVIDERS,
  'DELETE /api/receives/{}': RECEIVE,
  'GET /api/access-requests/history': PAM,
  'GET /api/access-requests/inbox': PAM,
  'GET /api/access-requests/mine': PAM,
  'GET /api/access-requests/{}': PAM,
  'GET /api/account/billing/subscription/preview': ACCOUNT_BILLING,
  'GET /api/account/billing/subscription/purchase/preview': ACCOUNT_BILLING,
  'GET /api/account/billing/subscription/upgrade/preview': ACCOUNT_BILLING,
  'GET /api/account/billing/vnext/address': ACCOUNT_BILLING_READ,
  'GET /api/account/billing/vnext/credit': ACCOUNT_BILLING_READ,
  'GET /api/account/billing/vnext/license': ACCOUNT_BILLING,
  'GET /api/account/billing/vnext/payment-method': ACCOUNT_BILLING_READ,
  'GET /api/account/billing/vnext/subscription': ACCOUNT_BILLING,
  'GET /api/accounts/billing/history': ACCOUNT_BILLING_READ,
  'GET /api/accounts/billing/invoices': ACCOUNT_BILLING_READ,
  'GET /api/accounts/billing/transactions': ACCOUNT_BILLING_READ,
  'GET /api/alerts/dismissals': ALERT_EXCLUSIONS,
  'GET /api/leases/active': PAM,
  'GET /api/leases/ciphers/{}/cipher': PAM,
  'GET /api/leases/ciphers/{}/pre-check': PAM,
  'GET /api/leases/ciphers/{}/state': PAM,
  'GET /api/leases/history': PAM,
  'GET /api/leases/mine': PAM,
  'GET /api/notifications': END_USER_NOTIFICATIONS,
  'GET /api/organization/sponsorship/{}/sponsored': SPONSORSHIPS_CLOUD,
  'GET /api/organization/sponsorship/{}/sync-status':
    'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault reads it only in the billing sync token dialog (BillingSyncApiKeyComponent), opened from the cloud organization subscription page, which a self-hosted web vault never shows.',
  'GET /api/organization/sponsorship/self-hosted/{}/sponsored': SPONSORSHIPS,
  'GET /api/organizations/{}/api-key-information': API_KEY_INFO,
  'GET /api/organizations/{}/api-key-information/{}': API_KEY_INFO,
  'GET /api/organizations/{}/audit': PAM,
  'GET /api/organizations/{}/billing': ORG_BILLING_READ,
  'GET /api/organizations/{}/billing/churn-offer': ORG_BILLING,
  'GET /api/organizations/{}/billing/history': ORG_BILLING_READ,
  'GET /api/organizations/{}/billing/subscription/preview': ORG_BILLING,
  'GET /api/organizations/{}/billing/vnext/address': ORG_BILLING_READ,
  'GET /api/organizations/{}/billing/vnext/credit': ORG_BILLING_READ,
  'GET /api/organizations/{}/billing/vnext/payment-method': ORG_BILLING_READ,
  'GET /api/organizations/{}/billing/vnext/warnings': ORG_BILLING_READ,
  'GET /api/organizations/{}/rotation/configs': PAM,
  'GET /api/organizations/{}/rotation/configs/{}': PAM,
  'GET /api/organizations/{}/rotation/daemons': PAM,
  'GET /api/organizations/{}/rotation/daemons/{}': PAM,
  'GET /api/organizations/{}/rotation/target-systems': PAM,
  'GET /api/organizations/{}/users/pending-auto-confirm': AUTO_CONFIRM,
  'GET /api/organizations/connections/{}/{}': CONNECTIONS,
  'GET /api/providers/{}': PROVIDERS,
  'GET /api/providers/{}/billing/invoices': PROVIDERS,
  'GET /api/providers/{}/billing/invoices/{}': PROVIDERS,
  'GET /api/providers/{}/billing/subscription': PROVIDERS,
  'GET /api/providers/{}/billing/vnext/address': PROVIDERS,
  'GET /api/providers/{}/billing/vnext/credit': PROVIDERS,
  'GET /api/providers/{}/billing/vnext/payment-method': PROVIDERS,
  'GET /api/providers/{}/clients/addable': PROVIDERS,
  'GET /api/providers/{}/events': PROVIDERS,
  'GET /api/providers/{}/organizations': PROVIDERS,
  'GET /api/providers/{}/users': PROVIDERS,
  'GET /api/providers/{}/users/{}': PROVIDERS,
  'GET /api/providers/{}/users/{}/events': PROVIDERS,
  'GET /api/receives/{}': RECEIVE,
  'GET /api/receives/{}/file/{}': RECEIVE,
  'GET /api/receives/{}/shared': RECEIVE,
  'GET /api/reports/member-adoption/{}': 'not offered yet: the organization member adoption report, which the web vault calls ahead of the official server (bitwarden/server of 2026-08-20 has no such route, so its answer is unknown). No open issue covers it yet.',
  'GET /api/reports/organizations/{}/{}/file/download': REPORT_FILES,
  'GET /api/reports/passkey-directory':
    'not offered: the passkey login report (which saved logins could use a passkey, from the public 2FA Directory list the official server fetches). The web vault opens it only while the PasskeyLoginReport flag ("inno-passkey-directory-report") is on: both its personal and organization routes are guarded by canAccessFeature, and the reports pages list its card only then; Strongroom\'s /config sends none of these flags.',
  'GET /api/reports/organizations/{}/{}/file/renew': REPORT_FILES,
  'PATCH /api/notifications/{}/read': END_USER_NOTIFICATIONS,
  'PATCH /api/reports/organizations/{}/{}': REPORT_FILES,
  'POST /api/access-requests/{}/activate': PAM,
  'POST /api/access-requests/{}/decision': PAM,
  'POST /api/access-requests/{}/revoke': PAM,
  'POST /api/account/billing/subscriptions/organizations/invoice/preview': ORG_BILLING,
  'POST /api/account/billing/subscriptions/premium/invoice/preview': ACCOUNT_BILLING,
  'POST /api/account/billing/subscriptions/premium/upgrade/invoice/preview': ACCOUNT_BILLING,
  'POST /api/account/billing/vnext/credit/bitpay': ACCOUNT_BILLING,
  'POST /api/account/billing/vnext/payment-method/verify-bank-account': ACCOUNT_BILLING,
  'POST /api/account/billing/vnext/subscription': ACCOUNT_BILLING,
  'POST /api/account/billing/vnext/subscription/reinstate': ACCOUNT_BILLING,
  'POST /api/account/billing/vnext/subscription/restart': ACCOUNT_BILLING,
  'POST /api/account/billing/vnext/upgrade': ACCOUNT_BILLING,
  'POST /api/accounts/cancel': ACCOUNT_BILLING,
  'POST /api/accounts/convert-to-key-connector': KEY_CONNECTOR,
  'POST /api/accounts/premium': ACCOUNT_BILLING,
  'POST /api/accounts/set-key-connector-key': KEY_CONNECTOR,
  'POST /api/alerts/dismissals': ALERT_EXCLUSIONS,
  'POST /api/billing/preview-invoice/organizations/{}/subscription/plan-change': ORG_BILLING,
  'POST /api/billing/preview-invoice/organizations/{}/subscription/update': ORG_BILLING,
  'POST /api/billing/preview-invoice/organizations/subscriptions/purchase': ORG_BILLING,
  'POST /api/billing/preview-invoice/premium/subscriptions/purchase': ACCOUNT_BILLING,
  'POST /api/billing/preview-invoice/premium/subscriptions/upgrade': ACCOUNT_BILLING,
  'POST /api/bitpay-invoice': ACCOUNT_BILLING,
  'POST /api/leases/ciphers/{}': PAM,
  'POST /api/leases/{}/extend': PAM,
  'POST /api/leases/{}/revoke': PAM,
  'POST /api/organization/sponsorship/{}/families-for-enterprise':
    'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault uses this path only when !isSelfHost() (api.service postCreateSponsorship adds "self-hosted/" otherwise); the official self-hosted server answers 400 "Only allowed when not self hosted.".',
  'POST /api/organization/sponsorship/{}/families-for-enterprise/resend': SPONSORSHIPS,
  'POST /api/organization/sponsorship/redeem':
    'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault sends it only from /families-for-enterprise?token=, the link in the sponsorship offer mail that only the Bitwarden cloud sends; the official self-hosted server answers 400 "Only allowed when not self hosted.".',
  'POST /api/organization/sponsorship/self-hosted/{}/families-for-enterprise':
    'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault sends it only from the sponsored-families pages, shown for an organization with familySponsorshipAvailable or a familySponsorshipFriendlyName (Organization.canManageSponsorships) or, under members, with useAdminSponsoredFamilies and the PM17772 flag; Strongroom answers false, null and false, and /config sends none of these flags.',
  'POST /api/organization/sponsorship/validate-token':
    'not offered: Families sponsorships come from Bitwarden cloud billing. The web vault sends it only from /families-for-enterprise?token=, the link in the sponsorship offer mail that only the Bitwarden cloud sends; the official self-hosted server answers 400 "Only allowed when not self hosted.".',
  'POST /api/organizations/billing/subscription/purchase/preview': ORG_BILLING,
  'POST /api/organizations/{}/billing/churn-offer/redeem': ORG_BILLING,
  'POST /api/organizations/{}/billing/restart-subscription': ORG_BILLING,
  'POST /api/organizations/{}/billing/subscription/plan-change/invoice/preview': ORG_BILLING,
  'POST /api/organizations/{}/billing/vnext/credit/bitpay': ORG_BILLING,
  'POST /api/organizations/{}/billing/vnext/payment-method/verify-bank-account': ORG_BILLING,
  'POST /api/organizations/{}/billing/vnext/subscription/restart': ORG_BILLING,
  'POST /api/organizations/{}/cancel': ORG_BILLING,
  'POST /api/organizations/{}/delete-recover-token':
    'not offered: recovering an organization by deletion token. The web vault sends it only from /verify-recover-delete-org, the link in the mail the official Admin portal sends when its operator starts deleting an organization (OrganizationInitiateDeleteCommand); Strongroom\'s admin console sends no such mail.',
  'POST /api/organizations/{}/reinstate': ORG_BILLING,
  'POST /api/organizations/{}/rotation/configs': PAM,
  'POST /api/organizations/{}/rotation/configs/{}/pause': PAM,
  'POST /api/organizations/{}/rotation/configs/{}/record-manual': PAM,
  'POST /api/organizations/{}/rotation/configs/{}/resume': PAM,
  'POST /api/organizations/{}/rotation/configs/{}/rotate': PAM,
  'POST /api/organizations/{}/rotation/daemons': PAM,
  'POST /api/organizations/{}/rotation/daemons/{}/assignments': PAM,
  'POST /api/organizations/{}/rotation/daemons/{}/disable': PAM,
  'POST /api/organizations/{}/rotation/daemons/{}/enable': PAM,
  'POST /api/organizations/{}/rotation/target-systems': PAM,
  'POST /api/organizations/{}/rotation/target-systems/{}/disable': PAM,
  'POST /api/organizations/{}/rotation/target-systems/{}/enable': PAM,
  'POST /api/organizations/{}/seat': ORG_BILLING,
  'POST /api/organizations/{}/sm-subscription': SM_SUBSCRIPTION,
  'POST /api/organizations/{}/subscribe-secrets-manager': SM_SUBSCRIPTION,
  'POST /api/organizations/{}/subscription': ORG_BILLING,
  'POST /api/organizations/{}/upgrade': ORG_BILLING,
  'POST /api/organizations/{}/users/{}/accept-init': 'not offered: it sets up a pending organization (made disabled and keyless when Bitwarden\'s admin portal signs up a reseller\'s client organization); this server makes none, and its invitations say initOrganization=false.',
  'POST /api/organizations/{}/users/{}/auto-confirm': AUTO_CONFIRM,
  'POST /api/organizations/{}/users/bulk-auto-confirm': AUTO_CONFIRM,
  'POST /api/organizations/{}/users/public-keys': 'not offered yet: bulk member public keys for user key rotation (#39).',
  'POST /api/organizations/connections': CONNECTIONS,
  'POST /api/organizations/create-without-payment': ORG_BILLING,
  'POST /api/organizations/invite-link/policies': 'not offered yet: organization invite links, whose joiners read the policies here; invitations by email are served. No open issue covers it yet.',
  'POST /api/providers/{}/billing/vnext/credit/bitpay': PROVIDERS,
  'POST /api/providers/{}/billing/vnext/payment-method/verify-bank-account': PROVIDERS,
  'POST /api/providers/{}/billing/vnext/subscription/restart': PROVIDERS,
  'POST /api/providers/{}/clients': PROVIDERS,
  'POST /api/providers/{}/clients/existing': PROVIDERS,
  'POST /api/providers/{}/delete-recover-token': PROVIDERS,
  'POST /api/providers/{}/organizations': PROVIDERS,
  'POST /api/providers/{}/organizations/add': PROVIDERS,
  'POST /api/providers/{}/setup': PROVIDERS,
  'POST /api/providers/{}/users/{}/accept': PROVIDERS,
  'POST /api/providers/{}/users/{}/confirm': PROVIDERS,
  'POST /api/providers/{}/users/{}/reinvite': PROVIDERS,
  'POST /api/providers/{}/users/confirm': PROVIDERS,
  'POST /api/providers/{}/users/invite': PROVIDERS,
  'POST /api/providers/{}/users/public-keys': PROVIDERS,
  'POST /api/providers/{}/users/reinvite': PROVIDERS,
  'POST /api/receives': RECEIVE,
  'POST /api/receives/{}/file': RECEIVE,
  'POST /api/receives/{}/file/{}/validate': RECEIVE,
  'POST /api/reports/organizations/{}/{}/file': REPORT_FILES,
  'POST /api/setup-payment': ACCOUNT_BILLING,
  'PUT /api/account/billing/vnext/address': ACCOUNT_BILLING,
  'PUT /api/account/billing/vnext/payment-method': ACCOUNT_BILLING,
  'PUT /api/account/billing/vnext/storage': ACCOUNT_BILLING,
  'PUT /api/account/billing/vnext/subscription/storage': ACCOUNT_BILLING,
  'PUT /api/organizations/{}/billing/vnext/address': ORG_BILLING,
  'PUT /api/organizations/{}/billing/vnext/payment-method': ORG_BILLING,
  'PUT /api/organizations/{}/rotation/configs/{}/account': PAM,
  'PUT /api/organizations/{}/rotation/configs/{}/settings': PAM,
  'PUT /api/organizations/{}/rotation/target-systems/{}/name': PAM,
  'PUT /api/organizations/{}/rotation/target-systems/{}/policy': PAM,
  'PUT /api/organizations/{}/users/enable-pam': PAM,
  'PUT /api/organizations/connections/{}': CONNECTIONS,
  'PUT /api/providers/{}': PROVIDERS,
  'PUT /api/providers/{}/billing/vnext/address': PROVIDERS,
  'PUT /api/providers/{}/billing/vnext/payment-method': PROVIDERS,
  'PUT /api/providers/{}/clients/{}': PROVIDERS,
  'PUT /api/providers/{}/users/{}': PROVIDERS,
  'PUT /api/receives/{}': RECEIVE,
};
