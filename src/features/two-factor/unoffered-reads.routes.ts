import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { IdParams, ListOf, list } from '../../http/schemas.js';
import type { OrgAccess } from '../../platform/access/org-access.js';
import { ProviderResponse } from './two-factor.schemas.js';

const tags = ['Two-step login'];

/** The official WebAuthnCredentialResponseModel: one passkey for logging in. */
const WebAuthnCredentialResponse = Type.Object({
  object: Type.Literal('webauthnCredential'),
  id: Type.String(),
  name: Type.String(),
  prfStatus: Type.Integer(),
  encryptedUserKey: Type.Union([Type.String(), Type.Null()]),
  encryptedPublicKey: Type.Union([Type.String(), Type.Null()]),
});

const docs = {
  organization: {
    summary: "An organization's two-step login providers",
    description:
      "The two-step login providers an organization sets for its members (the official server offers Duo there). This server offers none at organization level yet: always an empty list. Access: a confirmed owner or admin (the official OrganizationAdmin); anyone else gets 404, as the official server answers.",
  },
  passkeys: {
    summary: "The caller's passkeys for logging in",
    description:
      "The passkeys the caller logs in with (not the two-step login security keys of `/two-factor/get-webauthn`). Passkey login is not offered yet: always an empty list, which the change-master-password page reads. Access: any signed-in user (`user`).",
  },
} satisfies Record<string, RouteDoc>;

/**
 * Two reads of features this server does not offer yet, answered with the empty lists the
 * official server gives an organization or account that uses none, so the web vault's pages
 * open instead of spinning.
 */
export const unofferedTwoFactorRoutes: FastifyPluginAsyncTypebox<{ orgAccess: OrgAccess }> = async (app, { orgAccess }) => {
  app.get(
    '/organizations/:id/two-factor',
    { config: { access: orgAccess.admin('id') }, schema: { tags, ...docs.organization, params: IdParams, response: { 200: ListOf(ProviderResponse) } } },
    async () => list([]),
  );

  app.get('/webauthn', { config: { access: access.user }, schema: { tags, ...docs.passkeys, response: { 200: ListOf(WebAuthnCredentialResponse) } } }, async () => list([]));
};
