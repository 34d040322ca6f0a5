import { pino } from 'pino';
import { filesDirOf, type Config } from './config/config.js';
import type { Clock } from './shared/clock.js';
import type { Database } from './db/database.js';
import type { HubLog } from './features/notifications/hub.js';
import { createAccountService } from './features/accounts/accounts.service.js';
import { createAuthRequestService } from './features/auth-requests/auth-requests.service.js';
import { createPasswordHasher } from './platform/auth/password-hasher.js';
import { createCollectionService } from './features/collections/collections.service.js';
import { createAuditLog } from './platform/audit/audit-log.js';
import { createEventQueryService } from './features/events/events.service.js';
import { createEventCollector } from './features/events/collect.js';
import { createEventRetention } from './features/events/retention.js';
import { createSecurityTasks } from './features/security-tasks/security-tasks.service.js';
import { createReports } from './features/reports/reports.service.js';
import { brokerCheck, databaseCheck, redisCheck } from './features/health/health.checks.js';
import { createHealthService } from './features/health/health.service.js';
import { createGroupService } from './features/groups/groups.service.js';
import { createIntegrations } from './features/integrations/integrations.js';
import { createIdentityService } from './features/identity/identity.service.js';
import { createLoginThrottle } from './features/rate-limits/login-throttle.js';
import { createRateLimits } from './features/rate-limits/rate-limits.js';
import { createSigningKeys } from './platform/auth/signing-keys.js';
import { createTokenService } from './platform/auth/tokens.js';
import { createDeviceService } from './features/devices/devices.service.js';
import { createMailer } from './features/mail/mailer.js';
import type { Pushes } from './platform/push/pushes.js';
import { createNotifications } from './features/notifications/notifications.js';
import { createDomainSettings } from './features/settings/domains.service.js';
import { createMemberService } from './features/members/members.service.js';
import { invitationCheck } from './features/organizations/invitations.js';
import { isSoleOwner } from './features/organizations/sole-owner.js';
import { organizationApiKeyGrant, organizationPrincipalResolver } from './features/organizations/org-api-key.js';
import { createOrgAccess } from './platform/access/org-access.js';
import { organizationClaims } from './features/organizations/org-claims.js';
import { createCipherImport } from './features/vault/cipher-import.js';
import { createCipherLifecycle } from './features/vault/cipher-lifecycle.js';
import { createCipherService } from './features/vault/ciphers.service.js';
import { createOrgCipherService } from './features/vault/org-ciphers.service.js';
import { createFolderService } from './features/vault/folders.service.js';
import { createSyncCache } from './features/vault/sync-cache.js';
import { createSyncService } from './features/vault/sync.service.js';
import { adminsUnassignedItems } from './features/vault/unassigned-ciphers.repository.js';
import { createPolicyService, masterPasswordPolicyFor } from './features/policies/policies.service.js';
import { createLicenseIssuer } from './features/organizations/licenses.js';
import { createLicenseService } from './features/organizations/organization-licenses.js';
import { createOrganizationService } from './features/organizations/organizations.service.js';
import { createOrganizationKeys } from './features/organizations/organization-keys.js';
import { createPublicApiService } from './features/public-api/public-api.service.js';
import { createSecretsManager } from './features/secrets-manager/secrets-manager.js';
import { createTwoFactorService } from './features/two-factor/two-factor.service.js';
import { createWebAuthn } from './features/two-factor/webauthn.js';
import { createMailedCodes } from './features/two-factor/mailed-codes.js';
import { createAccountEmails } from './features/account-emails/account-emails.service.js';
import { createMetrics, noInstruments } from './features/operations/metrics.js';
import { apiBaseUrl } from './features/vault/attachment-data.js';
import { createAttachmentService } from './features/vault/attachments.service.js';
import { createVaultPurge } from './features/vault/vault-purge.js';
import { localFileStore, s3FileStore } from './platform/storage/file-store.js';
import { createFileSweeper } from './features/files/file-sweeper.js';
import { createSendAccess } from './features/sends/send-access.js';
import { createSendPurge } from './features/sends/send-purge.js';
import { createSendService } from './features/sends/sends.service.js';
import { secretsManagerGrant, SERVICE_ACCOUNT_CLAIM_TYPE, serviceAccountPrincipalResolver } from './features/secrets-manager/sm-identity.js';
import { createCacheRelease } from './shared/cache-release.js';

export interface WiringDeps {
  config: Config;
  database: Database;
  clock: Clock;
  /** Where pushes go instead of the hub (tests record them here). */
  pushes?: Pushes;
  /** Where the features log (the app's logger; stderr when run from a command). */
  log?: HubLog;
}

/** Builds every feature's service once per app, one line per feature. */
export async function createFeatures({ config, database, clock, pushes: injectedPushes, log }: WiringDeps) {
  const db = database.db;
  const redis = config.redisUrl ? redisCheck(config.redisUrl) : undefined;
  const integrations = createIntegrations({ config, database, ...(log ? { log } : {}) });
  const checks = [databaseCheck(database), ...(redis ? [redis] : []), ...(config.amqpUrl ? [brokerCheck(config.amqpUrl)] : []), integrations.check];

  // Prometheus metrics, only where served (METRICS_ENABLED): features count into them.
  const metrics = config.metricsEnabled ? await createMetrics() : null;
  const instruments = metrics?.instruments ?? noInstruments;
  const audit = createAuditLog({ clock });
  const hasher = createPasswordHasher({ iterations: config.passwordIterations, concurrency: config.passwordHashingConcurrency, queueLimit: config.passwordHashingQueue });
  const keys = createSigningKeys({ db, clock, issuer: config.identityUrl });
  const tokens = createTokenService({
    db,
    clock,
    keys,
    accessTokenLifetimeSeconds: config.accessTokenLifetimeSeconds,
    refreshTokenLifetimeDays: config.refreshTokenLifetimeDays,
    claimsProviders: [organizationClaims],
    principalResolvers: { Organization: organizationPrincipalResolver(db), [SERVICE_ACCOUNT_CLAIM_TYPE]: serviceAccountPrincipalResolver(db, clock) },
  });
  const rateLimits = await createRateLimits({ config, clock, ...(log ? { log } : {}) });
  const notifications = await createNotifications({ config, db, clock, authenticate: tokens.authenticate, log: log ?? pino({ level: config.logLevel }, pino.destination(2)) });
  const health = createHealthService({ checks: [...checks, notifications.health] });
  // What features tell the hub after each commit (push-messages.ts lists what pushes what): its
  // delivery, in-process or through Redis.
  const pushes: Pushes = injectedPushes ?? notifications.pushes;
  const throttle = createLoginThrottle({
    clock,
    store: rateLimits.store,
    perAccountAndIp: config.loginAttemptsPerAccount,
    perAccount: config.loginAttemptsPerAccountTotal,
    perIp: config.loginAttemptsPerIp,
    windowSeconds: config.loginAttemptWindowSeconds,
  });
  const mailer = createMailer(config);
  const fileStore =
    config.fileStorage === 's3' && config.s3Bucket
      ? s3FileStore({
          bucket: config.s3Bucket,
          region: config.s3Region,
          endpoint: config.s3Endpoint,
          forcePathStyle: config.s3ForcePathStyle,
          accessKeyId: config.s3AccessKeyId,
          secretAccessKey: config.s3SecretAccessKey,
          prefix: config.s3Prefix,
        })
      : localFileStore(filesDirOf(config));
  const accounts = createAccountService({
    db,
    clock,
    hasher,
    audit,
    keys,
    registrationEnabled: config.registrationEnabled,
    isInvited: invitationCheck(keys),
    mailer,
    publicUrl: config.publicUrl,
    isSoleOwner,
    files: fileStore,
    pushes,
  });
  const brand = { serverName: config.serverName, publicUrl: config.publicUrl };
  const codes = createMailedCodes({ db, clock, mailer, brand, limits: rateLimits.store });
  const twoFactor = createTwoFactorService({
    db,
    clock,
    hasher,
    audit,
    keys,
    mailer,
    brand,
    codes,
    pushes,
    rememberDays: config.twoFactorRememberDays,
    webauthn: createWebAuthn({ db, clock, rpName: config.serverName, publicUrl: config.publicUrl }),
  });
  const accountEmails = createAccountEmails({
    db,
    clock,
    hasher,
    keys,
    mailer,
    brand,
    codes,
    limits: rateLimits.store,
    pushes,
    settings: { requireVerifiedEmail: config.requireVerifiedEmail, newDeviceLoginMail: config.newDeviceLoginMail, newDeviceVerification: config.newDeviceVerification },
  });
  const authRequests = createAuthRequestService({ db, clock, pushes, knownDevicesOnly: config.authRequestsKnownDevicesOnly });
  const sendAccess = createSendAccess({
    db,
    audit,
    clock,
    pushes,
    hasher,
    store: fileStore,
    keys,
    apiBase: apiBaseUrl(config),
    limits: rateLimits.store,
    perMinute: config.sendAccessPerMinute,
  });
  const identity = createIdentityService({
    db,
    clock,
    hasher,
    audit,
    tokens,
    throttle,
    authRequests,
    twoFactor,
    loginChecks: accountEmails,
    clientCredentialGrants: [
      organizationApiKeyGrant({ db, keys, lifetimeSeconds: config.accessTokenLifetimeSeconds }),
      secretsManagerGrant({ db, clock, keys, enabled: config.secretsManager }),
    ],
    instruments,
    extensionGrants: { send_access: (form, client) => sendAccess.grant(form, client) },
  });
  const orgAccess = createOrgAccess(db);
  const vault = { db, audit, clock, pushes, files: fileStore };
  const ciphers = createCipherService(vault);
  const cipherLifecycle = createCipherLifecycle(vault);
  const cipherImport = createCipherImport(vault);
  const orgCiphers = createOrgCipherService(vault);
  const folders = createFolderService(vault);
  const attachments = createAttachmentService({
    ...vault,
    store: fileStore,
    keys,
    apiBase: apiBaseUrl(config),
    userQuotaBytes: config.attachmentUserQuotaMb * 1024 * 1024,
    maxFileBytes: config.fileMaxMb * 1024 * 1024,
  });
  const devices = createDeviceService({ db });
  const domainSettings = createDomainSettings({ db, clock, getUser: accounts.getUser, pushes });
  const sends = createSendService({
    db,
    audit,
    clock,
    pushes,
    hasher,
    store: fileStore,
    userQuotaBytes: config.attachmentUserQuotaMb * 1024 * 1024,
    maxFileBytes: config.fileMaxMb * 1024 * 1024,
  });
  const sendPurge = createSendPurge({
    db,
    clock,
    store: fileStore,
    pushes,
    intervalMs: config.sendPurgeIntervalSeconds * 1000,
    onRun: (result) => instruments.scheduledJobRun('send-purge', result),
  });
  const fileSweeper = createFileSweeper({ db, clock, store: fileStore, onRun: (result) => instruments.scheduledJobRun('file-sweep', result) });
  const syncCache = createSyncCache(config.syncCacheMegabytes * 1024 * 1024, (hit) => instruments.syncCacheLookup(hit));
  const sync = createSyncService({ db, engine: database.engine, apiBase: apiBaseUrl(config), cache: syncCache });
  const collections = createCollectionService({ db, audit, clock });
  const groups = createGroupService({ db, audit, clock });
  const policies = createPolicyService({ db, audit, clock, pushes });
  const events = createEventQueryService({ db, clock });
  const eventCollector = createEventCollector({ db, clock, audit });
  const eventRetention = createEventRetention({ db, clock, days: config.eventRetentionDays, onRun: (result) => instruments.scheduledJobRun('event-retention', result) });
  const securityTasks = createSecurityTasks({ db, clock, pushes });
  const reports = createReports({ db, clock });
  const members = createMemberService({ db, clock, audit, keys, mailer, publicUrl: config.publicUrl, pushes });
  const organizations = createOrganizationService({ db, clock, hasher, audit, pushes, files: fileStore });
  const organizationKeys = createOrganizationKeys({ db });
  const { licenseIssuerPublicKeys, installationId } = config;
  const secretsManager = createSecretsManager({ db, clock, audit, config, events });
  const cacheRelease = createCacheRelease({ intervalMs: config.cacheIdleMinutes * 60_000, caches: [syncCache, secretsManager.answers] });
  const publicApi = createPublicApiService({ db, clock, audit, config, members, groups, collections, policies, events, organizations });
  const licenses = createLicenseService({ db, clock, issuer: createLicenseIssuer({ db, clock }), licenseIssuerPublicKeys, installationId, pushes });

  metrics?.watch({ database, hubConnections: () => notifications.hub.connectionCount() });

  return {
    audit,
    health,
    keys,
    tokens,
    accounts,
    identity,
    authRequests,
    twoFactor,
    /** Anonymous routes that check a master password count toward the login throttle too. */
    loginThrottle: throttle,
    accountEmails,
    orgAccess,
    ciphers,
    cipherLifecycle,
    cipherImport,
    orgCiphers,
    folders,
    attachments,
    vaultPurge: createVaultPurge({ ...vault, hasher }),
    sends,
    sendAccess,
    /** Started by the app (buildApp), stopped by close(). */
    sendPurge,
    /** Started by the app (buildApp), stopped by close(): removes files no row names. */
    fileSweeper,
    /** Started by the app (buildApp), stopped by close(): drops what the caches hold for nobody. */
    cacheRelease,
    sync,
    devices,
    domainSettings,
    /** The web vault's "unassigned items" banner: a read with no rule beyond the caller's own roles. */
    hasUnassignedItems: (userId: string) => adminsUnassignedItems(db, userId),
    masterPasswordPolicy: (userId: string) => masterPasswordPolicyFor(db, userId),
    collections,
    groups,
    policies,
    events,
    eventCollector,
    /** Started by the app (buildApp), stopped by close(). */
    eventRetention,
    securityTasks,
    reports,
    mailer,
    members,
    organizations,
    licenses,
    organizationKeys,
    secretsManager,
    publicApi,
    rateLimits,
    integrations,
    authenticate: tokens.authenticate,
    /** Live notifications: features send pushes after commit; the notifications service serves the hub. */
    pushes: notifications.pushes,
    notifications,
    /** The Prometheus registry and request hook, or null when METRICS_ENABLED is off. */
    metrics,
    async close() {
      await notifications.close();
      await eventRetention.stop();
      await sendPurge.stop();
      await fileSweeper.stop();
      cacheRelease.stop();
      await integrations.close();
      await redis?.close();
      await rateLimits.close();
    },
  };
}

export type Features = Awaited<ReturnType<typeof createFeatures>>;
