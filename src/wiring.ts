import type { Config } from './config/config.js';
import type { Clock } from './clock.js';
import type { Database } from './db/database.js';
import { createAccountService } from './features/accounts/accounts.service.js';
import { createPasswordHasher } from './features/accounts/password-hasher.js';
import { createCollectionService } from './features/collections/collections.service.js';
import { createAuditLog } from './features/events/audit-log.js';
import { createEventQueryService } from './features/events/events.service.js';
import { brokerCheck, databaseCheck, redisCheck } from './features/health/health.checks.js';
import { createHealthService } from './features/health/health.service.js';
import { createGroupService } from './features/groups/groups.service.js';
import { createIntegrations, type IntegrationsLog } from './features/integrations/integrations.js';
import { createIdentityService } from './features/identity/identity.service.js';
import { createLoginThrottle } from './features/identity/login-throttle.js';
import { createSigningKeys } from './features/identity/signing-keys.js';
import { createTokenService } from './features/identity/tokens.js';
import { createDeviceService } from './features/devices/devices.service.js';
import { createMailer } from './features/mail/mailer.js';
import { createDomainSettings } from './features/settings/domains.service.js';
import { createMemberService } from './features/members/members.service.js';
import { invitationCheck } from './features/organizations/invitations.js';
import { isSoleOwner } from './features/organizations/sole-owner.js';
import { organizationApiKeyGrant, organizationPrincipalResolver } from './features/organizations/org-api-key.js';
import { createOrgAccess } from './features/organizations/org-access.js';
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
import { createSecretsManager } from './features/secrets-manager/secrets-manager.js';
import { secretsManagerGrant, SERVICE_ACCOUNT_CLAIM_TYPE, serviceAccountPrincipalResolver } from './features/secrets-manager/sm-identity.js';

export interface WiringDeps {
  config: Config;
  database: Database;
  clock: Clock;
  /** Where background work (the event relay) logs. */
  log?: IntegrationsLog;
}

/** Builds every feature's service once per app, one line per feature. */
export function createFeatures({ config, database, clock, log }: WiringDeps) {
  const db = database.db;
  const redis = config.redisUrl ? redisCheck(config.redisUrl) : undefined;
  const integrations = createIntegrations({ config, database, ...(log ? { log } : {}) });
  const checks = [databaseCheck(database), ...(redis ? [redis] : []), ...(config.amqpUrl ? [brokerCheck(config.amqpUrl)] : []), integrations.check];

  const audit = createAuditLog({ clock });
  const health = createHealthService({ checks });
  const hasher = createPasswordHasher({ iterations: config.passwordIterations });
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
  const throttle = createLoginThrottle({
    clock,
    perAccount: config.loginAttemptsPerAccount,
    perIp: config.loginAttemptsPerIp,
    windowSeconds: config.loginAttemptWindowSeconds,
  });
  const mailer = createMailer(config);
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
  });
  const identity = createIdentityService({
    db,
    clock,
    hasher,
    audit,
    tokens,
    throttle,
    clientCredentialGrants: [
      organizationApiKeyGrant({ db, keys, lifetimeSeconds: config.accessTokenLifetimeSeconds }),
      secretsManagerGrant({ db, clock, keys, enabled: config.secretsManager }),
    ],
  });
  const orgAccess = createOrgAccess(db);
  const vault = { db, audit, clock };
  const ciphers = createCipherService(vault);
  const cipherLifecycle = createCipherLifecycle(vault);
  const cipherImport = createCipherImport(vault);
  const orgCiphers = createOrgCipherService(vault);
  const folders = createFolderService(vault);
  const devices = createDeviceService({ db });
  const domainSettings = createDomainSettings({ db, clock, getUser: accounts.getUser });
  const sync = createSyncService({ db, cache: createSyncCache(config.syncCacheMegabytes * 1024 * 1024) });
  const collections = createCollectionService({ db, audit, clock });
  const groups = createGroupService({ db, audit, clock });
  const policies = createPolicyService({ db, audit, clock });
  const events = createEventQueryService({ db, clock });
  const members = createMemberService({ db, clock, audit, keys, mailer, publicUrl: config.publicUrl });
  const organizations = createOrganizationService({ db, clock, hasher, audit });
  const organizationKeys = createOrganizationKeys({ db });
  const { licenseIssuerPublicKeys, installationId } = config;
  const secretsManager = createSecretsManager({ db, clock, audit, config, events });
  const licenses = createLicenseService({ db, clock, issuer: createLicenseIssuer({ db, clock }), licenseIssuerPublicKeys, installationId });

  return {
    audit,
    health,
    keys,
    tokens,
    accounts,
    identity,
    orgAccess,
    ciphers,
    cipherLifecycle,
    cipherImport,
    orgCiphers,
    folders,
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
    mailer,
    members,
    organizations,
    licenses,
    organizationKeys,
    secretsManager,
    integrations,
    authenticate: tokens.authenticate,
    async close() {
      await integrations.close();
      await redis?.close();
    },
  };
}

export type Features = ReturnType<typeof createFeatures>;
