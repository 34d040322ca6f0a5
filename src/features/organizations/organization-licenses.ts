import type { KeyObject } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { UserCaller } from '../../http/request-context.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { parsePublicKeyList } from '../../shared/public-keys.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import { checkFoundingKeys, foundOrganization } from './create-organization.js';
import { replaceLicense } from './license-update.js';
import { licenseTerms, verifyLicense, type LicenseDocument, type LicenseIssuer } from './licenses.js';
import { findOrganizationByLicenseKey, updateOrganization } from './organizations.repository.js';
import { flagsOf, toOrganizationResponse, type ApplyLicenseBody, type OrganizationResponse } from './organizations.schemas.js';
import { type OrganizationRow, findOrganization } from '../../platform/access/memberships.js';
import { randomApiKey } from '../../platform/auth/api-keys.js';

/** How long a downloaded license lasts when the organization itself has no expiry (no billing here). */
const DEFAULT_LICENSE_DAYS = 365;

/**
 * License download (cloud: sign one for an organization) and apply (self-hosted: found the
 * organization a trusted license describes, with the caller as its Confirmed Owner).
 */
export function createLicenseService(deps: {
  db: Db;
  clock: Clock;
  issuer: LicenseIssuer;
  licenseIssuerPublicKeys?: string | undefined;
  installationId?: string | undefined;
  pushes: Pushes;
  /** The founder's phones join the new organization's pushes at the mobile relay. */
  registrations?: PushRegistrations;
}) {
  const { db, clock, issuer } = deps;
  const configured: KeyObject[] = parsePublicKeyList(deps.licenseIssuerPublicKeys ?? '');
  const verify = async (text: string) =>
    verifyLicense(text, { trusted: [await issuer.publicKey(), ...configured], now: clock.now(), installationId: deps.installationId });

  return {
    async download({ membership }: MemberCaller, installationId: string): Promise<LicenseDocument> {
      const org = await findOrganization(db, membership.organizationId);
      if (!org) throw new NotFound();
      let licenseKey = org.license_key;
      if (!licenseKey) {
        licenseKey = randomApiKey();
        await updateOrganization(db, org.id, { license_key: licenseKey });
      }
      const now = clock.now();
      const expires = org.expiration_date ?? new Date(now.getTime() + DEFAULT_LICENSE_DAYS * 86_400_000).toISOString();
      return issuer.issue(termsOf(org, licenseKey, installationId.toLowerCase(), expires));
    },

    async apply({ userId }: UserCaller, body: ApplyLicenseBody): Promise<OrganizationResponse> {
      const license = await verify(body.license);
      checkFoundingKeys(body);
      if ((await findOrganization(db, license.id)) || (await findOrganizationByLicenseKey(db, license.licenseKey))) {
        throw BadRequest.field('license', 'This license has already been applied to an organization.');
      }
      const now = clock.now().toISOString();
      const org = await db.transaction().execute((tx) =>
        foundOrganization(tx, {
          id: license.id,
          name: license.name,
          businessName: license.businessName,
          billingEmail: license.billingEmail,
          planType: license.planType,
          seats: license.seats,
          maxCollections: license.maxCollections,
          maxStorageGb: license.maxStorageGb,
          smSeats: license.smSeats,
          smServiceAccounts: license.smServiceAccounts,
          features: license,
          selfHost: true,
          licenseKey: license.licenseKey,
          expirationDate: license.expires,
          ownerId: userId,
          key: body.key,
          keys: body.keys,
          collectionName: body.collectionName,
          now,
        }),
      );
      // The founder's apps fetch the new organization's key and reconnect as its owner.
      deps.pushes.send(userPush(PushType.SyncOrgKeys, userId, new Date(now)));
      // As the official SelfHostedOrganizationSignUpCommand.cs: the founder's phones join its pushes.
      deps.registrations?.joinedOrganization(org.id, [userId]);
      return toOrganizationResponse(org, { billing: true });
    },

    /**
     * Self-hosted: replaces the license of an existing organization (its owner uploads the
     * renewed file), after the same checks as a new one and the fit checks of replaceLicense.
     */
    async update({ membership }: MemberCaller, text: string): Promise<void> {
      const org = await findOrganization(db, membership.organizationId);
      if (!org) throw new NotFound();
      const license = await verify(text);
      await db.transaction().execute((tx) => replaceLicense(tx, org, license, clock.now().toISOString()));
    },

    /**
     * Self-hosted: the official server fetches the license from the Bitwarden cloud through the
     * organization's billing-sync connection. Strongroom has no cloud to reach, so no
     * organization ever has that connection: the official answer for a missing one, a 404.
     */
    sync(_caller: MemberCaller): never {
      throw new NotFound('Unable to get Cloud Billing Sync connection: this server has no connection to a cloud; upload the license file instead.');
    },
  };
}

function termsOf(org: OrganizationRow, licenseKey: string, installationId: string, expires: string) {
  const flags = flagsOf(org);
  return licenseTerms({
    id: org.id,
    licenseKey,
    installationId,
    name: org.name,
    businessName: org.business_name,
    billingEmail: org.billing_email,
    planType: org.plan_type,
    seats: org.seats,
    maxCollections: org.max_collections,
    maxStorageGb: org.max_storage_gb,
    smSeats: org.sm_seats,
    smServiceAccounts: org.sm_service_accounts,
    expires,
    features: flags,
  });
}

export type LicenseService = ReturnType<typeof createLicenseService>;
