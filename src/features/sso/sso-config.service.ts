import type { Db, Executor } from '../../db/database.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { findOrganization, touchOrganizationMembers, type OrganizationRow } from '../../platform/access/memberships.js';
import type { SecretBox } from '../../platform/auth/secret-box.js';
import type { Clock } from '../../shared/clock.js';
import { identifierTaken, updateOrganization } from '../organizations/organizations.repository.js';
import { findPolicy } from '../policies/policies.repository.js';
import { autoEnrollsInRecovery } from '../policies/policy-data.js';
import { PolicyType } from '../policies/policy-type.js';
import type { PolicyService, WrittenPolicy } from '../policies/policies.service.js';
import { DiscoveryProblem, type DiscoveryCheck } from './sso-config.discovery.js';
import { MemberDecryptionType, readSsoConfig, saveSsoConfig, ssoSecretPurpose, type SsoConfig } from './sso-config.repository.js';
import { checkKeptSecret, checkSsoRequest } from './sso-config.rules.js';
import type { OrganizationSsoRequest, OrganizationSsoResponse, SsoConfigurationDataResponse } from './sso-config.schemas.js';

/**
 * An organization's single sign-on settings, as its owners, admins and members with manageSso
 * read and save them (`GET/POST /organizations/{id}/sso`). The client secret is sealed at rest
 * and never answered; turning SSO on first checks the identity provider's discovery document.
 */

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const IDENTIFIER_TAKEN = 'Organization with this identifier already exists.';

/** The official SsoUrls: where the identity provider sends members back, under PUBLIC_URL/sso. */
export function ssoUrls(publicUrl: string, organizationId: string) {
  const sso = `${publicUrl.replace(/\/+$/, '')}/sso`;
  return {
    callbackPath: `${sso}/oidc-signin`,
    signedOutCallbackPath: `${sso}/oidc-signedout`,
    spEntityId: `${sso}/saml2/${organizationId}`,
    spEntityIdStatic: `${sso}/saml2`,
    spMetadataUrl: `${sso}/saml2/${organizationId}`,
    spAcsUrl: `${sso}/saml2/${organizationId}/Acs`,
  };
}

/** The stored settings as answered: every field the web vault reads, the secret never, SAML at its defaults. */
export function toDataResponse(config: SsoConfig): SsoConfigurationDataResponse {
  const d = config.data;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  return {
    configType: d.configType,
    memberDecryptionType: d.memberDecryptionType,
    keyConnectorEnabled: false,
    keyConnectorUrl: null,
    authority: text(d.authority),
    clientId: text(d.clientId),
    clientSecret: null,
    metadataAddress: text(d.metadataAddress),
    redirectBehavior: d.redirectBehavior ?? 0,
    getClaimsFromUserInfoEndpoint: d.getClaimsFromUserInfoEndpoint === true,
    additionalScopes: text(d.additionalScopes),
    additionalUserIdClaimTypes: text(d.additionalUserIdClaimTypes),
    additionalEmailClaimTypes: text(d.additionalEmailClaimTypes),
    additionalNameClaimTypes: text(d.additionalNameClaimTypes),
    acrValues: text(d.acrValues),
    expectedReturnAcrValue: text(d.expectedReturnAcrValue),
    idpEntityId: null,
    idpSingleSignOnServiceUrl: null,
    idpSingleLogoutServiceUrl: null,
    idpX509PublicCert: null,
    idpArtifactResolutionServiceUrl: null,
    idpOutboundSigningAlgorithm: RSA_SHA256,
    idpBindingType: 1,
    idpAllowUnsolicitedAuthnResponse: false,
    idpDisableOutboundLogoutRequests: false,
    idpWantAuthnRequestsSigned: false,
    spUniqueEntityId: true,
    spWantAssertionsSigned: false,
    spValidateCertificates: false,
    spNameIdFormat: 0,
    spOutboundSigningAlgorithm: RSA_SHA256,
    spSigningBehavior: 0,
    spMinIncomingSigningAlgorithm: RSA_SHA256,
  };
}

export function createSsoConfigService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  secretBox: SecretBox;
  publicUrl: string;
  discovery: DiscoveryCheck;
  /** The policies' own writer, for those trusted devices put on. */
  policies: Pick<PolicyService, 'writePolicy' | 'announce'>;
}) {
  const { db, clock, audit, secretBox, publicUrl, discovery, policies } = deps;

  function toResponse(org: OrganizationRow, config: SsoConfig | undefined): OrganizationSsoResponse {
    return {
      object: 'organizationSso',
      enabled: config?.enabled ?? false,
      identifier: org.identifier,
      data: config ? toDataResponse(config) : null,
      urls: ssoUrls(publicUrl, org.id),
    };
  }

  async function organizationOf(id: string): Promise<OrganizationRow> {
    const org = await findOrganization(db, id);
    if (!org) throw new NotFound();
    return org;
  }

  /**
   * Trusted devices leave members without a master password, so, as the official server does
   * when they are chosen, the policies that keep them recoverable are put on in the same
   * transaction, through the policies' own writer (each records Policy_Updated): Single
   * organization, then Account recovery administration with automatic enrollment, then Require
   * single sign-on. Those already so are left as they are.
   */
  async function turnOnTrustedDevicePolicies(tx: Executor, caller: MemberCaller): Promise<WrittenPolicy[]> {
    const organizationId = caller.membership.organizationId;
    const written: WrittenPolicy[] = [];
    for (const type of [PolicyType.SingleOrg, PolicyType.ResetPassword, PolicyType.RequireSso]) {
      const current = await findPolicy(tx, organizationId, type);
      if (type === PolicyType.ResetPassword) {
        if (autoEnrollsInRecovery(current)) continue;
        written.push(await policies.writePolicy(tx, caller, type, { enabled: true, data: { autoEnrollEnabled: true } }));
      } else if (!current?.enabled) {
        written.push(await policies.writePolicy(tx, caller, type, { enabled: true }));
      }
    }
    return written;
  }

  return {
    async get({ membership }: MemberCaller): Promise<OrganizationSsoResponse> {
      const org = await organizationOf(membership.organizationId);
      return toResponse(org, await readSsoConfig(db, org.id));
    },

    async save(caller: MemberCaller, body: OrganizationSsoRequest): Promise<OrganizationSsoResponse> {
      const { membership, client } = caller;
      const organizationId = membership.organizationId;
      await organizationOf(organizationId);
      const existing = await readSsoConfig(db, organizationId);
      const storedSecret = existing?.data.clientSecret ?? '';
      const checked = checkSsoRequest(body, storedSecret !== '');
      checkKeptSecret(existing?.data, checked);
      if (checked.identifier && (await identifierTaken(db, checked.identifier, organizationId))) throw BadRequest.field('identifier', IDENTIFIER_TAKEN);
      // As officially, choosing trusted devices puts the policies on, whether or not SSO is on yet.
      const trustedDevices = checked.data.memberDecryptionType === MemberDecryptionType.TrustedDeviceEncryption;
      // The provider is asked before anything is written, outside the transaction (up to 5 s).
      if (checked.enabled) {
        try {
          await discovery.check(checked.data.authority, checked.data.metadataAddress);
        } catch (error) {
          if (error instanceof DiscoveryProblem) throw BadRequest.field(checked.data.metadataAddress ? 'data.metadataAddress' : 'data.authority', error.message);
          throw error;
        }
      }

      const now = clock.now().toISOString();
      const config: SsoConfig = {
        organizationId,
        enabled: checked.enabled,
        data: { ...checked.data, clientSecret: checked.newSecret ? secretBox.seal(checked.data.clientSecret, ssoSecretPurpose(organizationId)) : storedSecret },
        creationDate: existing?.creationDate ?? now,
        revisionDate: now,
      };
      const wasEnabled = existing?.enabled ?? false;
      let written: WrittenPolicy[] = [];
      try {
        written = await db.transaction().execute(async (tx) => {
          // Checked again where it is written: two organizations saving one identifier at once.
          if (checked.identifier && (await identifierTaken(tx, checked.identifier, organizationId))) throw BadRequest.field('identifier', IDENTIFIER_TAKEN);
          const turnedOn = trustedDevices ? await turnOnTrustedDevicePolicies(tx, caller) : [];
          await saveSsoConfig(tx, config);
          await updateOrganization(tx, organizationId, { identifier: checked.identifier, revision_date: now });
          if (wasEnabled !== config.enabled) {
            const type = config.enabled ? EventType.Organization_EnabledSso : EventType.Organization_DisabledSso;
            await audit.record(tx, client, { type, organizationId, ...actingOf(membership) });
          }
          // Members' profiles say whether SSO is on and how they unlock: their clients sync again.
          if (wasEnabled !== config.enabled || existing?.data.memberDecryptionType !== config.data.memberDecryptionType) {
            await touchOrganizationMembers(tx, [organizationId], now);
          }
          return turnedOn;
        });
      } catch (error) {
        // The identifier's unique index catches what the checks above raced with.
        throw isUniqueViolation(error) ? BadRequest.field('identifier', IDENTIFIER_TAKEN) : error;
      }
      policies.announce(written);
      return toResponse(await organizationOf(organizationId), config);
    },
  };
}

export type SsoConfigService = ReturnType<typeof createSsoConfigService>;
