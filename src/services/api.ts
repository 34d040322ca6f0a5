import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { apiErrorHandler } from '../http/error-handler.js';
import { NotFound } from '../http/errors.js';
import { accountRoutes } from '../features/accounts/accounts.routes.js';
import { verifyPasswordRoutes } from '../features/accounts/verify-password.routes.js';
import { eventRoutes } from '../features/events/events.routes.js';
import { collectionRoutes } from '../features/collections/collections.routes.js';
import { groupRoutes } from '../features/groups/groups.routes.js';
import { policyRoutes } from '../features/policies/policies.routes.js';
import { organizationRoutes } from '../features/organizations/organizations.routes.js';
import { aliveRoutes, healthRoutes } from '../features/health/health.routes.js';
import { integrationRoutes } from '../features/integrations/integrations.routes.js';
import { memberRoutes } from '../features/members/members.routes.js';
import { authRequestRoutes } from '../features/auth-requests/auth-requests.routes.js';
import { deviceRoutes } from '../features/devices/devices.routes.js';
import { notOfferedRoutes } from '../features/not-offered/not-offered.routes.js';
import { publicApiRoutes } from '../features/public-api/public-api.routes.js';
import { securityTaskRoutes } from '../features/security-tasks/security-tasks.routes.js';
import { secretsManagerRoutes } from '../features/secrets-manager/secrets-manager.routes.js';
import { domainSettingsRoutes } from '../features/settings/domains.routes.js';
import { serverConfigRoutes } from '../features/server-config/server-config.routes.js';
import { cipherRoutes } from '../features/vault/ciphers.routes.js';
import { orgCipherRoutes } from '../features/vault/org-ciphers.routes.js';
import { folderRoutes } from '../features/vault/folders.routes.js';
import { syncRoutes } from '../features/vault/sync.routes.js';
import { unassignedCipherRoutes } from '../features/vault/unassigned-ciphers.routes.js';
import { apiBaseUrl } from '../features/files/attachment-data.js';
import { attachmentRoutes } from '../features/files/attachments.routes.js';
import { sendRoutes } from '../features/sends/sends.routes.js';
import type { ServiceOptions } from './service-options.js';

/** The API service ({base_url}): the route table, one register per feature. */
export const apiService: FastifyPluginAsync<ServiceOptions> = async (app, { config, clock, authenticate, features }) => {
  app.setErrorHandler(apiErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  enforceAccessRules(app, authenticate);

  await app.register(aliveRoutes, { clock });
  if (config.healthEnabled) await app.register(healthRoutes, { health: features.health });
  await app.register(serverConfigRoutes, { config });
  await app.register(accountRoutes, { accounts: features.accounts, organizations: features.organizations.list });
  await app.register(unassignedCipherRoutes, { hasUnassignedItems: features.hasUnassignedItems });
  await app.register(verifyPasswordRoutes, { accounts: features.accounts, masterPasswordPolicy: features.masterPasswordPolicy });
  await app.register(cipherRoutes, { ciphers: features.ciphers, lifecycle: features.cipherLifecycle, importer: features.cipherImport, apiBase: apiBaseUrl(config) });
  await app.register(orgCipherRoutes, { orgCiphers: features.orgCiphers, apiBase: apiBaseUrl(config) });
  await app.register(folderRoutes, { folders: features.folders });
  await app.register(sendRoutes, { sends: features.sends, access: features.sendAccess, maxFileBytes: config.fileMaxMb * 1024 * 1024 });
  await app.register(attachmentRoutes, { attachments: features.attachments, apiBase: apiBaseUrl(config), maxFileBytes: config.fileMaxMb * 1024 * 1024 });
  await app.register(syncRoutes, { sync: features.sync });
  await app.register(deviceRoutes, { devices: features.devices });
  await app.register(authRequestRoutes, { authRequests: features.authRequests, origin: new URL(config.publicUrl).host });
  await app.register(domainSettingsRoutes, { domains: features.domainSettings });
  await app.register(notOfferedRoutes);
  await app.register(collectionRoutes, { collections: features.collections, orgAccess: features.orgAccess });
  await app.register(groupRoutes, { groups: features.groups, orgAccess: features.orgAccess });
  await app.register(policyRoutes, { policies: features.policies, orgAccess: features.orgAccess });
  await app.register(eventRoutes, { events: features.events, orgAccess: features.orgAccess });
  await app.register(securityTaskRoutes, { tasks: features.securityTasks, orgAccess: features.orgAccess });
  await app.register(integrationRoutes, { integrations: features.integrations.service, orgAccess: features.orgAccess });
  await app.register(memberRoutes, { members: features.members, orgAccess: features.orgAccess });
  if (config.secretsManager) await app.register(secretsManagerRoutes, { sm: features.secretsManager });
  // The organization public API: its own error envelope and not-found answer under /public.
  await app.register(publicApiRoutes, { prefix: '/public', publicApi: features.publicApi });
  await app.register(organizationRoutes, { organizations: features.organizations, licenses: features.licenses, orgAccess: features.orgAccess, keys: features.organizationKeys, config });
};
