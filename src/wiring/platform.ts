import { pino } from 'pino';
import { filesDirOf, type Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import { createAuditLog } from '../platform/audit/audit-log.js';
import { createPasswordHasher } from '../platform/auth/password-hasher.js';
import { createSigningKeys } from '../platform/auth/signing-keys.js';
import { createSecretBox } from '../platform/auth/secret-box.js';
import { secretsKeyOf } from '../config/secrets-key.js';
import { createTokenService } from '../platform/auth/tokens.js';
import type { Pushes } from '../platform/push/pushes.js';
import { localFileStore, s3FileStore, type FileStore } from '../platform/storage/file-store.js';
import { brokerCheck, databaseCheck, redisCheck } from '../features/health/health.checks.js';
import type { HealthCheck } from '../features/health/health.service.js';
import { createMailer } from '../features/mail/mailer.js';
import type { HubLog } from '../features/notifications/hub.js';
import { createNotifications } from '../features/notifications/notifications.js';
import { createPushDelivery } from '../features/push-delivery/push-delivery.js';
import { createRelayChannel } from '../features/push-relay/relay-channel.js';
import { createWebPushChannel } from '../features/web-push/web-push.channel.js';
import { createMetrics, noInstruments } from '../features/operations/metrics.js';
import { organizationClaims } from '../features/organizations/org-claims.js';
import { organizationPrincipalResolver } from '../features/organizations/org-api-key.js';
import { createRateLimits } from '../features/rate-limits/rate-limits.js';
import { SERVICE_ACCOUNT_CLAIM_TYPE, serviceAccountPrincipalResolver } from '../features/secrets-manager/sm-identity.js';
import { apiBaseUrl } from '../features/vault/attachment-data.js';

export interface WiringDeps {
  config: Config;
  database: Database;
  clock: Clock;
  /** Where pushes go instead of the hub (tests record them here). */
  pushes?: Pushes;
  /** Where the features log (the app's logger; stderr when run from a command). */
  log?: HubLog;
}

/**
 * What every feature is built on, made once per app: the audit log, password hashing, token
 * signing and checking, rate-limit stores, the notifications hub and its push port, mail, the
 * file store and the metrics. Features receive the parts they use from here (wiring.ts).
 */
export async function createPlatform({ config, database, clock, pushes: injectedPushes, log }: WiringDeps) {
  const db = database.db;
  const redis = config.redisUrl ? redisCheck(config.redisUrl) : undefined;
  // Prometheus metrics, only where served (METRICS_ENABLED): features count into them.
  const metrics = config.metricsEnabled ? await createMetrics() : null;
  const keys = createSigningKeys({ db, clock, issuer: config.identityUrl });
  const tokens = createTokenService({
    db,
    clock,
    keys,
    accessTokenLifetimeSeconds: config.accessTokenLifetimeSeconds,
    refreshTokenLifetimeDays: config.refreshTokenLifetimeDays,
    claimsProviders: [organizationClaims],
    principalResolvers: { Organization: organizationPrincipalResolver(db), [SERVICE_ACCOUNT_CLAIM_TYPE]: serviceAccountPrincipalResolver(db, clock) },
    ...(log ? { log } : {}),
  });
  const rateLimits = await createRateLimits({ config, clock, ...(log ? { log } : {}) });
  const hubLog = log ?? pino({ level: config.logLevel }, pino.destination(2));
  const notifications = await createNotifications({ config, db, clock, authenticate: tokens.authenticate, log: hubLog });
  const instruments = metrics?.instruments ?? noInstruments;
  // The hub at once, and the push channels (mobile relay, Web Push) through the outbox after commit.
  const pushDelivery = createPushDelivery({ db, clock, log: hubLog, hub: notifications.pushes, onDelivery: (channel, result) => instruments.pushDelivery(channel, result) });
  // Mobile push through Bitwarden's relay, when INSTALLATION_ID and INSTALLATION_KEY are set.
  const audienceRefreshMs = config.pushAudienceRefreshSeconds * 1000;
  const relay = createRelayChannel({ config, db, clock, log: hubLog, audienceRefreshMs });
  if (relay) pushDelivery.outbox.addChannel(relay);
  const secretBox = createSecretBox(secretsKeyOf(config));
  // Web Push to browser extensions, with this server's own VAPID keys (WEB_PUSH_ENABLED, on by default).
  const webPush = config.webPushEnabled
    ? createWebPushChannel({ db, clock, secretBox, outbox: pushDelivery.outbox, config, log: hubLog, allowPrivateAddresses: config.webPushAllowPrivateAddresses, audienceRefreshMs })
    : null;
  if (webPush) pushDelivery.outbox.addChannel(webPush);
  const checks: HealthCheck[] = [databaseCheck(database), ...(redis ? [redis] : []), ...(config.amqpUrl ? [brokerCheck(config.amqpUrl)] : [])];
  return {
    config,
    database,
    db,
    clock,
    ...(log ? { log } : {}),
    audit: createAuditLog({ clock }),
    hasher: createPasswordHasher({ iterations: config.passwordIterations, concurrency: config.passwordHashingConcurrency, queueLimit: config.passwordHashingQueue }),
    keys,
    tokens,
    /** Seals the secrets the server reads back itself (an identity provider's client secret). */
    secretBox,
    rateLimits,
    notifications,
    // What features tell the hub after each commit (push-messages.ts lists what pushes what): its
    // delivery, in-process or through Redis, and the push channels' outbox.
    pushes: injectedPushes ?? pushDelivery.pushes,
    /** Started by the app (buildApp), stopped by close(): the push channels' outbox. */
    pushDelivery,
    /** The relay channel, or null when it is off: its audience learns of new push tokens at once. */
    relay,
    /** Closed with the app: Web Push's kept-alive connections to the browsers' push services. */
    webPush,
    mailer: createMailer(config),
    brand: { serverName: config.serverName, publicUrl: config.publicUrl },
    files: fileStoreOf(config),
    apiBase: apiBaseUrl(config),
    maxFileBytes: config.fileMaxMb * 1024 * 1024,
    userQuotaBytes: config.attachmentUserQuotaMb * 1024 * 1024,
    metrics,
    instruments,
    checks,
    redis,
  };
}

export type Platform = Awaited<ReturnType<typeof createPlatform>>;

function fileStoreOf(config: Config): FileStore {
  if (config.fileStorage !== 's3' || !config.s3Bucket) return localFileStore(filesDirOf(config));
  return s3FileStore({
    bucket: config.s3Bucket,
    region: config.s3Region,
    endpoint: config.s3Endpoint,
    forcePathStyle: config.s3ForcePathStyle,
    accessKeyId: config.s3AccessKeyId,
    secretAccessKey: config.s3SecretAccessKey,
    prefix: config.s3Prefix,
  });
}
