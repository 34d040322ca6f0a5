import { Type, type Static } from 'typebox';
import type { Db } from '../../db/database.js';
import { NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { Nullable } from '../../http/schemas.js';
import { findMembershipOfUser, findOrganization } from '../../platform/access/memberships.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';

export const OrganizationKeysResponse = Type.Object({
  object: Type.Literal('organizationKeys'),
  publicKey: Nullable(Type.String()),
  privateKey: Nullable(Type.String()),
});
export type OrganizationKeysResponse = Static<typeof OrganizationKeysResponse>;

export const OrganizationPublicKeyResponse = Type.Object({ object: Type.Literal('organizationPublicKey'), publicKey: Nullable(Type.String()) });

export function organizationKeysResponse(row: { public_key: string | null; private_key: string | null }): OrganizationKeysResponse {
  return { object: 'organizationKeys', publicKey: row.public_key, privateKey: row.private_key };
}

/**
 * The organization's own key pair, read. The web vault founds a self-hosted organization from a
 * license first and posts the pair right after (the license upload carries no keys), which
 * `organizations.setKeysOnce` stores.
 */
export function createOrganizationKeys(deps: { db: Db }) {
  const { db } = deps;

  return {
    /**
     * The key pair as `GET /organizations/{id}/keys` answers it. The official server answers this
     * obsolete path as it answers `public-key`, to any signed-in user: a member made just in time
     * by SSO reads it, still only accepted, to enroll in account recovery. The private key
     * (wrapped with the organization key) still goes to confirmed members only.
     */
    async get({ userId }: UserCaller, organizationId: string): Promise<OrganizationKeysResponse> {
      const org = await findOrganization(db, organizationId);
      if (!org) throw new NotFound();
      const member = await findMembershipOfUser(db, organizationId, userId);
      const confirmed = member?.status === OrganizationUserStatusType.Confirmed;
      return organizationKeysResponse({ public_key: org.public_key, private_key: confirmed ? org.private_key : null });
    },

    /** A public key is no secret: any signed-in user may read it (the route says why). */
    async publicKey(_caller: UserCaller, organizationId: string): Promise<Static<typeof OrganizationPublicKeyResponse>> {
      const org = await findOrganization(db, organizationId);
      if (!org) throw new NotFound();
      return { object: 'organizationPublicKey', publicKey: org.public_key };
    },
  };
}

export type OrganizationKeysService = ReturnType<typeof createOrganizationKeys>;
