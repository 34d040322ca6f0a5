import { createPlatform, type WiringDeps } from './wiring/platform.js';
import { createAccountService } from './features/accounts/accounts.service.js';
import { createAuthRequestService } from './features/auth-requests/auth-requests.service.js';
import { createAdminRequestService } from './features/auth-requests/admin-requests.service.js';
import { createAdminRequestMail } from './features/auth-requests/admin-requests.mail.js';
import { createCollectionService } from './features/collections/collections.service.js';
import { createEventQueryService } from './features/events/events.service.js';
import { createEventCollector } from './features/events/collect.js';
import { createEventRetention } from './features/events/retention.js';
import { createSecurityTasks } from './features/security-tasks/security-tasks.service.js';
import { createReports } from './features/reports/reports.service.js';
import { createMemberAccessReport } from './features/reports/member-access.service.js';
import { createHealthService } from './features/health/health.service.js';
import { createGroupService } from './features/groups/groups.service.js';
import { createIntegrations } from './features/integrations/integrations.js';
import { createIcons } from './features/icons/icons.service.js';
import { createIdentityService } from './features/identity/identity.service.js';
import { createLoginThrottle } from './features/rate-limits/login-throttle.js';
import { createDeviceService } from './features/devices/devices.service.js';
import { createDeviceTrust } from './features/devices/device-trust.service.js';
import { createWebPushSubscriptions } from './features/web-push/web-push.service.js';
import { vapidPublicKeyOf } from './features/web-push/vapid-keys.js';
import { trustedDeviceOption } from './features/devices/trusted-device-option.js';
import { createTdeOffboarding } from './features/devices/tde-offboarding.js';
import { createDomainSettings } from './features/settings/domains.service.js';
import { createMemberService } from './features/members/members.service.js';
import { createAccountRecovery } from './features/account-recovery/account-recovery.service.js';
import { createBreachLookup } from './features/breach-report/hibp.service.js';
import { invitationCheck, invitationTokenCheck } from './features/organizations/invitations.js';
import { isSoleOwner } from './features/organizations/sole-owner.js';
import { organizationApiKeyGrant } from './features/organizations/org-api-key.js';
import { createOrgAccess } from './platform/access/org-access.js';
import { createCipherImport } from './features/vault/cipher-import.js';
import { createOrgCipherImport } from './features/vault/cipher-import-org.js';
import { createCipherLifecycle } from './features/vault/cipher-lifecycle.js';
import { createCipherService } from './features/vault/ciphers.service.js';
import { createOrgCipherService } from './features/vault/org-ciphers.service.js';
import { createOrganizationExport } from './features/vault/org-export.js';
import { createFolderService } from './features/vault/folders.service.js';
import { createSyncCache } from './features/vault/sync-cache.js';
import { createSyncService } from './features/vault/sync.service.js';
import { adminsUnassignedItems } from './features/vault/unassigned-ciphers.repository.js';
import type { UserCaller } from './http/request-context.js';
import { createPolicyService, masterPasswordPolicyFor } from './features/policies/policies.service.js';
import { ssoOrganizationIdentifierOf, ssoRequiredFor } from './features/policies/sso-policy.js';
import { createSetPassword } from './features/sso/set-password.js';
import { createUserVerificationCodes } from './features/account-emails/user-verification.js';
import { giveBoundMembersDefaultCollections } from './features/collections/default-user-collections.js';
import { createLicenseIssuer } from './features/organizations/licenses.js';
import { createLicenseService } from './features/organizations/organization-licenses.js';
import { createOrganizationService } from './features/organizations/organizations.service.js';
import { profileOrganizationsNew } from './features/organizations/profile-organizations.js';
import { createOrganizationKeys } from './features/organizations/organization-keys.js';
import { createBillingService } from './features/billing/billing.service.js';
import { createPublicApiService } from './features/public-api/public-api.service.js';
import { createSecretsManager } from './features/secrets-manager/secrets-manager.js';
import { createTwoFactorService } from './features/two-factor/two-factor.service.js';
import { createWebAuthn } from './features/two-factor/webauthn.js';
import { createMailedCodes } from './features/two-factor/mailed-codes.js';
import { createAccountEmails } from './features/account-emails/account-emails.service.js';
import { createAttachmentService } from './features/vault/attachments.service.js';
import { createVaultPurge } from './features/vault/vault-purge.js';
import { createFileSweeper } from './features/files/file-sweeper.js';
import { createSendAccess } from './features/sends/send-access.js';
import { createSendCodes } from './features/sends/send-codes.js';
import { createSendPurge } from './features/sends/send-purge.js';
import { createSendService } from './features/sends/sends.service.js';
import { secretsManagerGrant } from './features/secrets-manager/sm-identity.js';
import { createCacheRelease } from './shared/cache-release.js';
import { createKeyRotation } from './features/key-rotation/key-rotation.service.js';
import { createEmergencyAccessService } from './features/emergency-access/emergency-access.service.js';
import { createEmergencyRecovery } from './features/emergency-access/emergency-recovery.js';
import { createEmergencyReminderJob, createEmergencyTimeoutJob } from './features/emergency-access/emergency-access-jobs.js';
import { emergencyInvitationCheck } from './features/emergency-access/emergency-invitations.js';
import { createPasskeyCeremony } from './features/passkey-login/passkey-ceremony.js';
import { createPasskeyLogin } from './features/passkey-login/passkey-login.service.js';
import { createPasskeyService } from './features/passkey-login/passkeys.service.js';
import { createSsoConfigService } from './features/sso/sso-config.service.js';
import { createDiscoveryCheck } from './features/sso/sso-config.discovery.js';
import { createOidcFetch } from './features/sso/oidc-fetch.js';
import { createOidcClient } from './features/sso/oidc-client.js';
import { createJitMembers } from './features/sso/jit-members.js';
import { createSsoLogin } from './features/sso/sso-login.service.js';
import { checkSecretsKey } from './features/sso/secrets-key-check.js';
import type { Outbox } from './features/push-delivery/channel.js';
import { createRelayRegistrations, relayConfigured } from './features/push-relay/relay-channel.js';
import { createDeviceTokens } from './features/push-relay/device-tokens.js';


export type { WiringDeps };

/** `outbox`: where the channels' messages other than pushes are queued (tests record them). */
export type FeatureDeps = WiringDeps & { outbox?: Outbox };

/** Builds every feature's service once per app on the platform block, one line per feature. */
export async function createFeatures(deps: FeatureDeps) {
  const p = await createPlatform(deps);
  const { config, database, db, clock, audit, hasher, keys, tokens, rateLimits, notifications, pushes, mailer, brand, files, apiBase, instruments, metrics } = p;
  // The mobile relay's device registrations, queued after commit (a no-op with the relay off).
  const registrations = createRelayRegistrations({
    outbox: deps.outbox ?? p.pushDelivery.outbox,
    enabled: relayConfigured(config),
    audience: p.relay?.audience,
    // An injected outbox (tests) records each registration as it happens, not one per device and window.
    ...(deps.outbox ? { windowMs: 0 } : {}),
  });
  const integrations = createIntegrations({ config, database, ...(p.log ? { log: p.log } : {}) });
  const icons = createIcons({ config, clock });
  const health = createHealthService({ checks: [...p.checks, integrations.check, notifications.health, p.pushDelivery.health] });
  const throttle = createLoginThrottle({ clock, store: rateLimits.store, perAccountAndIp: config.loginAttemptsPerAccount, perAccount: config.loginAttemptsPerAccountTotal, perIp: config.loginAttemptsPerIp, windowSeconds: config.loginAttemptWindowSeconds });
  const accounts = createAccountService({ db, clock, hasher, audit, keys, mailer, brand, limits: rateLimits.store, pushes, files, registrationEnabled: config.registrationEnabled, isInvited: invitationCheck(keys), isEmergencyInvited: emergencyInvitationCheck(keys), publicUrl: config.publicUrl, isSoleOwner, profileOrganizationsNew: (userId) => profileOrganizationsNew(db, userId), masterPasswordPolicy: (userId) => masterPasswordPolicyFor(db, userId) });
  const codes = createMailedCodes({ db, clock, mailer, brand, limits: rateLimits.store });
  const webauthn = createWebAuthn({ db, clock, rpName: config.serverName, publicUrl: config.publicUrl });
  const twoFactor = createTwoFactorService({ db, clock, hasher, audit, keys, mailer, brand, codes, pushes, registrations, webauthn, rememberDays: config.twoFactorRememberDays });
  const accountEmails = createAccountEmails({ db, clock, hasher, keys, mailer, brand, codes, pushes, limits: rateLimits.store, settings: { requireVerifiedEmail: config.requireVerifiedEmail, newDeviceLoginMail: config.newDeviceLoginMail, newDeviceVerification: config.newDeviceVerification } });
  const authRequests = createAuthRequestService({ db, clock, pushes, knownDevicesOnly: config.authRequestsKnownDevicesOnly, origin: new URL(config.publicUrl).host });
  const sendAccess = createSendAccess({ db, audit, clock, pushes, hasher, keys, apiBase, store: files, limits: rateLimits.store, perMinute: config.sendAccessPerMinute, codes: createSendCodes({ db, clock, mailer, brand, limits: rateLimits.store }) });
  const passkeyCeremony = createPasskeyCeremony({ keys, rpName: config.serverName, publicUrl: config.publicUrl });
  const passkeyLogin = createPasskeyLogin({ db, clock, ceremony: passkeyCeremony });
  const clientCredentialGrants = [organizationApiKeyGrant({ db, keys, lifetimeSeconds: config.accessTokenLifetimeSeconds }), secretsManagerGrant({ db, clock, keys, enabled: config.secretsManager })];
  const oidcFetch = createOidcFetch({ allowPrivateAddresses: config.ssoAllowPrivateAddresses, timeoutMs: config.ssoTimeoutMs });
  const oidc = createOidcClient({ secretBox: p.secretBox, fetch: oidcFetch, timeoutMs: config.ssoTimeoutMs, allowInsecure: config.ssoAllowPrivateAddresses, ...(p.log ? { log: p.log } : {}) });
  const ssoLogin = createSsoLogin({ db, clock, keys, oidc, jit: createJitMembers({ audit }), limits: rateLimits.store, publicUrl: config.publicUrl });
  const identity = createIdentityService({
    db, clock, hasher, audit, tokens, throttle, authRequests, twoFactor, instruments, clientCredentialGrants, registrations,
    loginChecks: accountEmails,
    passkeyLogin,
    ssoLogin,
    decryptionOptions: trustedDeviceOption({ db }),
    extensionGrants: { send_access: (caller, form) => sendAccess.grant(caller, form) },
    ssoRequired: (user) => ssoRequiredFor(db, user.id),
    ssoOrganizationIdentifier: (user) => ssoOrganizationIdentifierOf(db, user.id),
  });
  const vault = { db, audit, clock, pushes, files, apiBase };
  const attachments = createAttachmentService({ ...vault, store: files, keys, userQuotaBytes: p.userQuotaBytes, maxFileBytes: p.maxFileBytes });
  const sends = createSendService({ db, audit, clock, pushes, hasher, store: files, userQuotaBytes: p.userQuotaBytes, maxFileBytes: p.maxFileBytes });
  const sendPurge = createSendPurge({ db, clock, store: files, pushes, intervalMs: config.sendPurgeIntervalSeconds * 1000, onRun: (result) => instruments.scheduledJobRun('send-purge', result) });
  const fileSweeper = createFileSweeper({ db, clock, store: files, onRun: (result) => instruments.scheduledJobRun('file-sweep', result) });
  const syncCache = createSyncCache(config.syncCacheMegabytes * 1024 * 1024, (hit) => instruments.syncCacheLookup(hit));
  const sync = createSyncService({ db, engine: database.engine, apiBase, cache: syncCache });
  const collections = createCollectionService({ db, audit, clock });
  const groups = createGroupService({ db, audit, clock });
  const policies = createPolicyService({ db, audit, clock, pushes, registrations, invitationValid: invitationTokenCheck(keys), giveDefaultCollections: giveBoundMembersDefaultCollections });
  const events = createEventQueryService({ db, clock });
  const eventRetention = createEventRetention({ db, clock, days: config.eventRetentionDays, onRun: (result) => instruments.scheduledJobRun('event-retention', result) });
  const members = createMemberService({ db, clock, audit, keys, mailer, publicUrl: config.publicUrl, pushes, registrations, selfHosted: config.selfHosted });
  const organizations = createOrganizationService({ db, clock, hasher, audit, pushes, files, registrations });
  const secretsManager = createSecretsManager({ db, clock, audit, config, events });
  const cacheRelease = createCacheRelease({ intervalMs: config.cacheIdleMinutes * 60_000, caches: [syncCache, secretsManager.answers] });
  const publicApi = createPublicApiService({ db, clock, audit, config, members, groups, collections, policies, events, organizations, registrations });
  const emergencyJobs = { db, clock, audit, mailer, intervalMs: config.emergencyAccessJobIntervalSeconds * 1000, ...(p.log ? { log: p.log } : {}) };
  const emergencyTimeout = createEmergencyTimeoutJob({ ...emergencyJobs, onRun: (result) => instruments.scheduledJobRun('emergency-access-timeout', result) });
  const emergencyReminder = createEmergencyReminderJob({ ...emergencyJobs, onRun: (result) => instruments.scheduledJobRun('emergency-access-reminder', result) });
  const licenses = createLicenseService({ db, clock, pushes, registrations, issuer: createLicenseIssuer({ db, clock }), licenseIssuerPublicKeys: config.licenseIssuerPublicKeys, installationId: config.installationId });

  metrics?.watch({ database, hubConnections: () => notifications.hub.connectionCount(), pushOutboxPending: p.pushDelivery.pending });

  return {
    audit,
    health,
    keys,
    tokens,
    accounts,
    identity,
    /** Single sign-on: prevalidate, authorize, the identity provider's callback, the code grant. */
    ssoLogin,
    /** Run by the app at start: whether this instance's SECRETS_KEY opens the database's sealed secrets. */
    secretsKeyCheck: () => checkSecretsKey({ db, secretBox: p.secretBox, clock }),
    authRequests,
    adminRequests: createAdminRequestService({ db, clock, audit, pushes, mail: createAdminRequestMail({ db, mailer, brand }), knownDevicesOnly: config.authRequestsKnownDevicesOnly, origin: new URL(config.publicUrl).host }),
    twoFactor,
    passkeys: createPasskeyService({ db, clock, hasher, ceremony: passkeyCeremony }),
    passkeyLogin,
    /** Anonymous routes that check a master password count toward the login throttle too. */
    loginThrottle: throttle,
    accountEmails,
    userVerificationCodes: createUserVerificationCodes({ db, clock, codes, brand }),
    orgAccess: createOrgAccess(db),
    ciphers: createCipherService(vault),
    cipherLifecycle: createCipherLifecycle(vault),
    cipherImport: createCipherImport(vault),
    orgCiphers: createOrgCipherService(vault),
    organizationExport: createOrganizationExport({ db, apiBase }),
    orgCipherImport: createOrgCipherImport(vault),
    folders: createFolderService(vault),
    attachments,
    vaultPurge: createVaultPurge({ ...vault, hasher }),
    keyRotation: createKeyRotation({ db, audit, clock, pushes, hasher }),
    sends,
    ssoConfig: createSsoConfigService({ db, clock, audit, secretBox: p.secretBox, publicUrl: config.publicUrl, discovery: createDiscoveryCheck({ allowPrivateAddresses: config.ssoAllowPrivateAddresses, ...(p.log ? { log: p.log } : {}) }), policies }),
    sendAccess,
    /** Started by the app (buildApp), stopped by close(). */
    sendPurge,
    /** Started by the app (buildApp), stopped by close(): removes files no row names. */
    fileSweeper,
    /** Started by the app (buildApp), stopped by close(): drops what the caches hold for nobody. */
    cacheRelease,
    sync,
    emergencyAccess: createEmergencyAccessService({ db, clock, audit, keys, mailer, publicUrl: config.publicUrl }),
    emergencyRecovery: createEmergencyRecovery({ db, clock, audit, keys, hasher, pushes, apiBase, registrations }),
    /** Started by the app (buildApp), stopped by close(): grant recoveries whose wait is over, remind grantors. */
    emergencyTimeout,
    emergencyReminder,
    devices: createDeviceService({ db, clock }),
    deviceTrust: createDeviceTrust({ db, hasher, clock, registrations }),
    deviceTokens: createDeviceTokens({ db, clock, registrations }),
    /** The extension's Web Push subscriptions (docs/notifications.md); private endpoints refused. */
    webPushSubscriptions: createWebPushSubscriptions({ db, clock, allowPrivateAddresses: config.webPushAllowPrivateAddresses, subscribed: (userId) => p.webPush?.audience.add(userId) }),
    /** /config's VAPID public key, read or made on the first ask; none while Web Push is off. */
    webPushPublicKey: config.webPushEnabled ? vapidPublicKeyOf({ db, secretBox: p.secretBox, clock }) : undefined,
    tdeOffboarding: createTdeOffboarding({ db, hasher, clock, audit, pushes }),
    domainSettings: createDomainSettings({ db, clock, getUser: accounts.getUser, pushes }),
    /** The web vault's "unassigned items" banner: a read with no rule beyond the caller's own roles. */
    hasUnassignedItems: ({ userId }: UserCaller) => adminsUnassignedItems(db, userId),
    collections,
    groups,
    policies,
    setPassword: createSetPassword({ db, clock, hasher, audit }),
    events,
    eventCollector: createEventCollector({ db, clock, audit }),
    /** Started by the app (buildApp), stopped by close(). */
    eventRetention,
    securityTasks: createSecurityTasks({ db, clock, pushes }),
    reports: createReports({ db, clock }),
    memberAccessReport: createMemberAccessReport({ db }),
    breachLookup: createBreachLookup({ settings: { apiKey: config.hibpApiKey, apiUrl: config.hibpApiUrl, cacheSeconds: config.hibpCacheSeconds }, clock }),
    mailer,
    members,
    accountRecovery: createAccountRecovery({ db, clock, hasher, audit, pushes, mailer, brand, registrations }),
    organizations,
    licenses,
    organizationKeys: createOrganizationKeys({ db }),
    billing: createBillingService({ db, selfHosted: config.selfHosted, userQuotaBytes: p.userQuotaBytes }),
    secretsManager,
    publicApi,
    rateLimits,
    integrations,
    icons,
    authenticate: tokens.authenticate,
    /** Live notifications: features send pushes after commit; the notifications service serves the hub. */
    pushes,
    notifications,
    /** Started by the app (buildApp), stopped by close(): the push channels' outbox. */
    pushDelivery: p.pushDelivery,
    /** The Prometheus registry and request hook, or null when METRICS_ENABLED is off. */
    metrics,
    async close() {
      await p.pushDelivery.outbox.stop();
      p.webPush?.close();
      await notifications.close();
      await eventRetention.stop();
      await sendPurge.stop();
      await fileSweeper.stop();
      await emergencyTimeout.stop();
      await emergencyReminder.stop();
      cacheRelease.stop();
      await integrations.close();
      icons.close();
      oidcFetch.close();
      await p.redis?.close();
      await rateLimits.close();
    },
  };
}

export type Features = Awaited<ReturnType<typeof createFeatures>>;
