import { Type, type Static } from 'typebox';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { Nullable } from '../../http/schemas.js';
import { countOccupiedSeats } from '../members/members.repository.js';
import { findOrganization, memberUserIds, touchAccountRevisions, updateOrganization } from './organizations.repository.js';
import type { OrganizationKeys } from './organizations.schemas.js';

export const OrganizationKeysResponse = Type.Object({
  object: Type.Literal('organizationKeys'),
  publicKey: Nullable(Type.String()),
  privateKey: Nullable(Type.String()),
});

export const OrganizationPublicKeyResponse = Type.Object({ object: Type.Literal('organizationPublicKey'), publicKey: Nullable(Type.String()) });

/** What a self-hosted web vault reads before it opens the member dialogs (seats in use). */
export const SelfHostBillingMetadataResponse = Type.Object({
  isOnSecretsManagerStandalone: Type.Boolean(),
  organizationOccupiedSeats: Type.Integer(),
});

/**
 * The organization's own key pair. The web vault founds a self-hosted organization from a
 * license first and posts the pair right after (the license upload carries no keys).
 */
export function createOrganizationKeys(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const response = (row: { public_key: string | null; private_key: string | null }): Static<typeof OrganizationKeysResponse> => ({
    object: 'organizationKeys',
    publicKey: row.public_key,
    privateKey: row.private_key,
  });

  return {
    async get(organizationId: string) {
      const org = await findOrganization(db, organizationId);
      if (!org) throw new NotFound();
      return response(org);
    },

    async publicKey(organizationId: string): Promise<Static<typeof OrganizationPublicKeyResponse>> {
      const org = await findOrganization(db, organizationId);
      if (!org) throw new NotFound();
      return { object: 'organizationPublicKey', publicKey: org.public_key };
    },

    /** There is no billing here: only the seat count, every membership but revoked ones, as for seat limits. */
    async selfHostBillingMetadata(organizationId: string): Promise<Static<typeof SelfHostBillingMetadataResponse>> {
      return { isOnSecretsManagerStandalone: false, organizationOccupiedSeats: await countOccupiedSeats(db, organizationId) };
    },

    /** Sets the pair once, as the official server does; replacing it would strand what members hold. */
    async set(organizationId: string, keys: Static<typeof OrganizationKeys>) {
      return db.transaction().execute(async (tx) => {
        const org = await findOrganization(tx, organizationId);
        if (!org) throw new NotFound();
        if (org.public_key && org.private_key) throw new BadRequest('Organization Keys already exist');
        const now = clock.now().toISOString();
        await updateOrganization(tx, organizationId, { public_key: keys.publicKey, private_key: keys.encryptedPrivateKey, revision_date: now });
        // Members' clients learn of the keys (hasPublicAndPrivateKeys) at their next sync.
        await touchAccountRevisions(tx, await memberUserIds(tx, organizationId), now);
        return response({ public_key: keys.publicKey, private_key: keys.encryptedPrivateKey });
      });
    },
  };
}

export type OrganizationKeysService = ReturnType<typeof createOrganizationKeys>;
