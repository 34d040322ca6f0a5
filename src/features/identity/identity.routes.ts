import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import type { IdentityService } from './identity.service.js';
import type { SigningKeys } from './signing-keys.js';

const tags = ['identity'];

const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    expires_in: Type.Integer(),
    token_type: Type.Literal('Bearer'),
    refresh_token: Type.Optional(Type.String()),
    scope: Type.String(),
  },
  // The account fields the official clients read (Key, AccountKeys, Kdf, UserDecryptionOptions...).
  { additionalProperties: true },
);

const OpenIdConfiguration = Type.Object({}, { additionalProperties: true });
const Jwks = Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) });

/** OAuth 2.0 token endpoint and OpenID discovery ({auth_url}). */
export const identityRoutes: FastifyPluginAsync<{ identity: IdentityService; keys: SigningKeys }> = async (app, { identity, keys }) => {
  const base = keys.issuer;

  app.post(
    '/connect/token',
    { config: { access: access.anonymous }, schema: { tags, consumes: ['application/x-www-form-urlencoded'], response: { 200: TokenResponse } } },
    async (request, reply) => {
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return identity.token(request.body, clientContext(request));
    },
  );

  app.get(
    '/.well-known/openid-configuration',
    { config: { access: access.anonymous }, schema: { tags, response: { 200: OpenIdConfiguration } } },
    async () => ({
      issuer: base,
      jwks_uri: `${base}/.well-known/openid-configuration/jwks`,
      token_endpoint: `${base}/connect/token`,
      scopes_supported: ['api', 'offline_access', 'api.organization', 'api.secrets'],
      claims_supported: ['sub', 'email', 'email_verified', 'name', 'premium', 'sstamp', 'device', 'client_id', 'scope', 'amr'],
      grant_types_supported: ['password', 'refresh_token', 'client_credentials'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_post'],
    }),
  );

  app.get(
    '/.well-known/openid-configuration/jwks',
    { config: { access: access.anonymous }, schema: { tags, response: { 200: Jwks } } },
    async () => keys.jwks(),
  );
};
