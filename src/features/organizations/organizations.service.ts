import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, Forbidden, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { FileStore } from '../../platform/storage/file-store.js';
import { fileFoldersOf, removeFolders } from '../../platform/storage/orphans.js';
import { verifySecret as verifyUserSecret } from '../../platform/auth/secret-verification.js';
import { findUserById, type UserRow, touchAccountRevisions } from '../../platform/auth/users.repository.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { findPolicy } from '../policies/policies.repository.js';
import { autoEnrollsInRecovery } from '../policies/policy-data.js';
import { PolicyType } from '../policies/policy-type.js';
import { checkFoundingKeys, foundOrganization } from './create-organization.js';
import { organizationKeysResponse, type OrganizationKeysResponse } from './organization-keys.js';
import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { deleteOrganization, findApiKey, findOrganizationByIdentifier, identifierTaken, insertApiKey, updateApiKey, updateOrganization } from './organizations.repository.js';
import {
  toOrganizationResponse,
  type ApiKeyBody,
  type ApiKeyResponse,
  type AutoEnrollStatusResponse,
  type CollectionManagementBody,
  type CreateOrganizationBody,
  type OrganizationKeys,
  type OrganizationResponse,
  type PaymentResponse,
  type SecretBody,
  type UpdateOrganizationBody,
} from './organizations.schemas.js';
import { planFeatures, ProductTierType } from './plans.js';
import { profileOrganizations } from './profile-organizations.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { type OrganizationRow, findOrganization, findMembershipOfUser, deleteMembership, confirmedOwnerIds, memberUserIds, touchOrganizationMembers } from '../../platform/access/memberships.js';
import { randomApiKey } from '../../platform/auth/api-keys.js';

/** OrganizationApiKeyType. */
export enum OrganizationApiKeyType {
  Default = 0,
  BillingSync = 1,
  Scim = 2,
}

/** The most storage an organization may buy on top of its plan (the official Range(0, 99)). */
const MAX_ADDITIONAL_STORAGE_GB = 99;
const GB = 1024 ** 3;

/**
 * Whether the member unlocks with Key Connector under the organization's SSO settings. This
 * server stores no SSO configurations yet, so nobody does; the leave rule stays in place.
 */
function usesKeyConnectorSso(_org: OrganizationRow, _user: UserRow): boolean {
  return false;
}

/** Whether the organization claims the account (verified domains); none do here yet. */
function claimedByOrganization(_org: OrganizationRow, _user: UserRow): boolean {
  return false;
}

/**
 * Stores the organization's key pair when it has neither key, in the caller's transaction, and
 * answers whether it did: the pair is set once, as replacing it would strand what members hold.
 * Members' clients learn of it (hasPublicAndPrivateKeys) at their next sync.
 */
async function storeKeysOnce(tx: Executor, organizationId: string, keys: Static<typeof OrganizationKeys>, now: string): Promise<boolean> {
  const org = await findOrganization(tx, organizationId);
  if (!org) throw new NotFound();
  if (org.public_key || org.private_key) return false;
  await updateOrganization(tx, organizationId, { public_key: keys.publicKey, private_key: keys.encryptedPrivateKey, revision_date: now });
  await touchAccountRevisions(tx, await memberUserIds(tx, organizationId), now);
  return true;
}

/** `registrations`: members' phones join or leave an organization's pushes at the mobile relay. */
export function createOrganizationService(deps: { db: Db; clock: Clock; hasher: PasswordHasher; audit: AuditLog; pushes: Pushes; files: FileStore; registrations?: PushRegistrations }) {
  const registrations = deps.registrations ?? noPushRegistrations;
  const { db, clock, audit } = deps;

  async function organizationOf(id: string): Promise<OrganizationRow> {
    const org = await findOrganization(db, id);
    if (!org) throw new NotFound();
    return org;
  }

  async function remove(organizationId: string): Promise<void> {
    const now = clock.now().toISOString();
    const { folders, members } = await db.transaction().execute(async (tx) => {
      const members = await memberUserIds(tx, organizationId);
      const owned = await fileFoldersOf(tx, { organizationId });
      await deleteOrganization(tx, organizationId);
      // Members' clients drop the organization at their next sync.
      await touchAccountRevisions(tx, members, now);
      return { folders: owned, members };
    });
    registrations.leftOrganization(organizationId, members);
    // After commit: the items' files (the sweeper removes any a crash leaves behind).
    await removeFolders(deps.files, folders);
  }

  /** The official SecretVerificationRequestModel (accounts/secret-verification.ts). */
  const verifySecret = (userId: string, body: SecretBody, field: string, message: string) => verifyUserSecret(db, deps.hasher, deps.clock, userId, body, () => BadRequest.field(field, message));

  return {
    async create({ userId }: UserCaller, body: CreateOrganizationBody): Promise<OrganizationResponse> {
      const plan = planFeatures(body.planType);
      if (!plan) throw BadRequest.field('planType', `Unknown plan type ${body.planType}.`);
      checkFoundingKeys(body);
      const additionalSeats = body.additionalSeats ?? 0;
      if (additionalSeats > 0 && plan.seats !== null) throw BadRequest.field('additionalSeats', 'Plan does not allow additional users.');
      const additionalStorage = body.additionalStorageGb ?? 0;
      if (additionalStorage > 0 && plan.maxStorageGb === null) throw BadRequest.field('additionalStorageGb', 'Plan does not allow additional storage.');
      const useSecretsManager = plan.useSecretsManager && body.useSecretsManager !== false;
      const now = clock.now().toISOString();
      const org = await db.transaction().execute((tx) =>
        foundOrganization(tx, {
          name: body.name,
          businessName: body.businessName ?? null,
          billingEmail: body.billingEmail,
          planType: body.planType,
          seats: plan.seats ?? (additionalSeats > 0 ? additionalSeats : null),
          maxCollections: plan.maxCollections,
          maxStorageGb: plan.maxStorageGb === null ? null : plan.maxStorageGb + additionalStorage,
          smSeats: useSecretsManager ? (body.additionalSmSeats ?? null) : null,
          smServiceAccounts: useSecretsManager ? (body.additionalServiceAccounts ?? null) : null,
          features: { ...plan, useSecretsManager },
          selfHost: false,
          licenseKey: randomApiKey(),
          expirationDate: null,
          ownerId: userId,
          key: body.key,
          keys: body.keys,
          collectionName: body.collectionName,
          now,
        }),
      );
      // The founder's apps fetch the new organization's key and reconnect as its owner.
      deps.pushes.send(userPush(PushType.SyncOrgKeys, userId, new Date(now)));
      // As the official CloudOrganizationSignUpCommand.cs: the founder's phones join its pushes.
      registrations.joinedOrganization(org.id, [userId]);
      return toOrganizationResponse(org, { billing: true });
    },

    /** Billing details go only to members who manage the organization. */
    async get({ membership }: MemberCaller): Promise<OrganizationResponse> {
      return toOrganizationResponse(await organizationOf(membership.organizationId), { billing: membership.rights.has('manageOrganization') });
    },

    list: ({ userId }: UserCaller) => profileOrganizations(db, userId),

    async update({ membership, client }: MemberCaller, body: UpdateOrganizationBody): Promise<OrganizationResponse> {
      const org = await organizationOf(membership.organizationId);
      const billingEmail = body.billingEmail?.trim().toLowerCase();
      if (billingEmail !== undefined && billingEmail !== org.billing_email && !membership.rights.has('editSubscription')) {
        throw new Forbidden('Only owners can change the billing email.');
      }
      const identifier = body.identifier === undefined ? org.identifier : body.identifier?.trim() || null;
      if (identifier && identifier !== org.identifier && (await identifierTaken(db, identifier, org.id))) {
        throw BadRequest.field('identifier', 'Organization with this identifier already exists.');
      }
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await updateOrganization(tx, org.id, {
          name: body.name.trim(),
          ...(body.businessName !== undefined ? { business_name: body.businessName?.trim() || null } : {}),
          ...(billingEmail ? { billing_email: billingEmail } : {}),
          identifier,
          revision_date: now,
        });
        if (body.keys) await storeKeysOnce(tx, org.id, body.keys, now);
        await audit.record(tx, client, { type: EventType.Organization_Updated, organizationId: org.id, actingUserId: membership.userId });
      });
      return toOrganizationResponse(await organizationOf(org.id), { billing: true });
    },

    /**
     * `PUT /organizations/:id/collection-management` (owners): who may create and delete
     * collections and items, and whether owners and admins reach every item. Item rights in
     * members' syncs follow these, so every confirmed member syncs again.
     */
    async updateCollectionManagement({ membership, client }: MemberCaller, settings: CollectionManagementBody): Promise<OrganizationResponse> {
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await updateOrganization(tx, membership.organizationId, {
          limit_collection_creation: settings.limitCollectionCreation,
          limit_collection_deletion: settings.limitCollectionDeletion,
          ...(settings.limitItemDeletion !== undefined ? { limit_item_deletion: settings.limitItemDeletion } : {}),
          allow_admin_access_to_all_collection_items: settings.allowAdminAccessToAllCollectionItems,
          revision_date: now,
        });
        await touchOrganizationMembers(tx, [membership.organizationId], now);
        await audit.record(tx, client, { type: EventType.Organization_CollectionManagement_Updated, organizationId: membership.organizationId, ...actingOf(membership) });
      });
      return toOrganizationResponse(await organizationOf(membership.organizationId), { billing: true });
    },

    /** `POST /organizations/:id/keys`: the pair of an organization that has none; 400 otherwise. */
    async setKeysOnce({ membership, client }: MemberCaller, keys: Static<typeof OrganizationKeys>): Promise<OrganizationKeysResponse> {
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        if (!(await storeKeysOnce(tx, membership.organizationId, keys, now))) throw new BadRequest('Organization Keys already exist');
        await audit.record(tx, client, { type: EventType.Organization_Updated, organizationId: membership.organizationId, actingUserId: membership.userId });
      });
      return organizationKeysResponse(await organizationOf(membership.organizationId));
    },

    async leave({ membership, client }: MemberCaller): Promise<void> {
      const org = await organizationOf(membership.organizationId);
      const user = await findUserById(db, membership.userId);
      if (!user) throw new NotFound();
      if (usesKeyConnectorSso(org, user)) throw new BadRequest('Your organization single sign-on settings prevent you from leaving.');
      if (claimedByOrganization(org, user)) {
        throw new BadRequest("You can't leave this organization vault because your account is claimed. Contact your admin for more information.");
      }
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        if (membership.type === OrganizationUserType.Owner) {
          const owners = await confirmedOwnerIds(tx, org.id);
          if (!owners.some((id) => id !== membership.id)) throw new BadRequest('Organization must have at least one confirmed owner.');
        }
        await deleteMembership(tx, membership.id, now);
        await touchAccountRevisions(tx, [membership.userId], now);
        await audit.record(tx, client, {
          type: EventType.OrganizationUser_Left,
          organizationId: org.id,
          organizationUserId: membership.id,
          userId: membership.userId,
          actingUserId: membership.userId,
        });
      });
      deps.pushes.send(userPush(PushType.SyncOrgKeys, membership.userId, new Date(now)));
      registrations.leftOrganization(org.id, [membership.userId]);
    },

    async delete({ membership }: MemberCaller, body: SecretBody): Promise<void> {
      await verifySecret(membership.userId, body, 'secret', 'User verification failed.');
      await remove(membership.organizationId);
    },

    /** The operator's deletion (admin console): the owner's, without an owner's password. */
    remove: async (organizationId: string) => remove((await organizationOf(organizationId)).id),

    /**
     * The operator disables or enables an organization (admin console). A disabled one grants
     * its members nothing (org-access reads `enabled`) and its API key logs in no more; members'
     * clients see it at their next sync. Answers whether anything changed.
     */
    async setEnabled(organizationId: string, enabled: boolean): Promise<boolean> {
      const org = await organizationOf(organizationId);
      if (Boolean(org.enabled) === enabled) return false;
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await updateOrganization(tx, org.id, { enabled, revision_date: now });
        await touchAccountRevisions(tx, await memberUserIds(tx, org.id), now);
      });
      return true;
    },

    /** Reads (creating it when missing) or rotates an organization API key. */
    async apiKey({ membership }: MemberCaller, body: ApiKeyBody, rotate: boolean): Promise<ApiKeyResponse> {
      const type: OrganizationApiKeyType = body.type ?? OrganizationApiKeyType.Default;
      const right = type === OrganizationApiKeyType.Scim ? 'manageScim' : 'manageApiKey';
      if (!membership.rights.has(right)) throw new Forbidden('You do not have permission to do this.');
      const org = await organizationOf(membership.organizationId);
      if (type !== OrganizationApiKeyType.Default) {
        const tier = planFeatures(org.plan_type)?.tier;
        // Billing-sync and SCIM keys exist for Teams and Enterprise only; the official server hides them otherwise.
        if (tier !== ProductTierType.Teams && tier !== ProductTierType.Enterprise) throw new NotFound();
      }
      await verifySecret(membership.userId, body, 'masterPasswordHash', 'Invalid password.');
      const now = clock.now().toISOString();
      let key = await findApiKey(db, org.id, type);
      if (!key) {
        await insertApiKey(db, { id: randomUUID(), organization_id: org.id, type, api_key: randomApiKey(), revision_date: now });
        key = await findApiKey(db, org.id, type);
        if (!key) throw new Error('organization API key vanished after insert');
      }
      if (!rotate) return { object: 'apiKey', apiKey: key.api_key, revisionDate: key.revision_date };
      const apiKey = randomApiKey();
      await updateApiKey(db, key.id, apiKey, now);
      return { object: 'apiKey', apiKey, revisionDate: now };
    },

    /** Whether members of the organization (by SSO identifier or id) are enrolled in account recovery automatically. */
    async autoEnrollStatus({ userId }: UserCaller, identifier: string): Promise<AutoEnrollStatusResponse> {
      const org = await findOrganizationByIdentifier(db, identifier);
      if (!org || !(await findMembershipOfUser(db, org.id, userId))) throw new NotFound();
      return { object: 'organizationAutoEnrollStatus', id: org.id, resetPasswordEnabled: autoEnrollsInRecovery(await findPolicy(db, org.id, PolicyType.ResetPassword)) };
    },

    /**
     * Removes the caller's SSO link to the organization (their `sso_users` row), and records
     * OrganizationUser_UnlinkedSso (1505) when they are a member, in the same transaction, as the
     * official DeleteSsoUserAsync. Like it, an account without a master password is not refused:
     * its next SSO login links it again. 404 when there is neither a membership nor a link.
     */
    async unlinkSso({ userId, client }: UserCaller, organizationId: string): Promise<void> {
      const orgId = organizationId.toLowerCase();
      await db.transaction().execute(async (tx) => {
        const unlinked = await tx.deleteFrom('sso_users').where('user_id', '=', userId).where('organization_id', '=', orgId).executeTakeFirst();
        const membership = await findMembershipOfUser(tx, orgId, userId);
        if (!membership) {
          if (Number(unlinked.numDeletedRows) === 0) throw new NotFound();
          return;
        }
        await audit.record(tx, client, {
          type: EventType.OrganizationUser_UnlinkedSso,
          organizationId: membership.organization_id,
          organizationUserId: membership.id,
          userId,
          actingUserId: userId,
        });
      });
    },

    async adjustStorage({ membership, client }: MemberCaller, adjustmentGb: number): Promise<PaymentResponse> {
      const org = await organizationOf(membership.organizationId);
      const base = planFeatures(org.plan_type)?.maxStorageGb ?? null;
      if (base === null) throw new BadRequest('Plan does not allow additional storage.');
      if (adjustmentGb === 0) throw BadRequest.field('storageGbAdjustment', 'Storage adjustment cannot be zero.');
      const next = (org.max_storage_gb ?? base) + adjustmentGb;
      if (next < base) throw BadRequest.field('storageGbAdjustment', `Storage cannot be reduced below the plan's ${base} GB.`);
      if (next > base + MAX_ADDITIONAL_STORAGE_GB) {
        throw BadRequest.field('storageGbAdjustment', `You can add at most ${MAX_ADDITIONAL_STORAGE_GB} GB of storage.`);
      }
      const usedGb = Number(org.storage_bytes) / GB;
      if (usedGb > next) {
        throw BadRequest.field('storageGbAdjustment', `You are currently using ${usedGb.toFixed(2)} GB of storage. Delete some stored data first.`);
      }
      await db.transaction().execute(async (tx) => {
        await updateOrganization(tx, org.id, { max_storage_gb: next, revision_date: clock.now().toISOString() });
        await audit.record(tx, client, { type: EventType.Organization_Updated, organizationId: org.id, ...actingOf(membership) });
      });
      // No payment is taken here: the answer says it went through, with no intent for the client to confirm.
      return { object: 'payment', success: true, paymentIntentClientSecret: null };
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
