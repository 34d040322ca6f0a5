import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { anonymousCaller } from '../../http/request-context.js';
import type { IdentityService } from './identity.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';

const tags = ['Identity'];

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
    {
      config: { access: access.anonymous },
      schema: {
        tags,
        summary: 'Issue an access token',
        description:
          'The OAuth 2.0 token endpoint (form-encoded): `password` for the official clients (`web`, `browser`, `desktop`, `cli`, `mobile`, `connector`, with device fields), `refresh_token` (rotating), `client_credentials` with `user.<id>` and the personal API key (`bw login --apikey`) or `organization.<id>` and the organization API key, and `webauthn` with a passkey assertion (`token`, `deviceResponse`; docs/passkey-login.md). Answers the token with the account fields the official clients read (Key, Kdf, UserDecryptionOptions, ...); failed password logins are throttled by account and client address, by account and by address (429, docs/rate-limits.md). Access: anonymous.',
        consumes: ['application/x-www-form-urlencoded'],
        response: { 200: TokenResponse },
      },
    },
    async (request, reply) => {
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return identity.token(anonymousCaller(request), request.body);
    },
  );

  app.get(
    '/.well-known/openid-configuration',
    {
      config: { access: access.anonymous },
      schema: {
        tags,
        summary: 'Read the OpenID configuration',
        description:
          'OpenID Connect discovery: the issuer, the token and JWKS endpoints, and the supported scopes, claims and grant types. Access: anonymous.',
        response: { 200: OpenIdConfiguration },
      },
    },
    async () => ({
      issuer: base,
      jwks_uri: `${base}/.well-known/openid-configuration/jwks`,
      authorization_endpoint: `${base}/connect/authorize`,
      token_endpoint: `${base}/connect/token`,
      scopes_supported: ['api', 'offline_access', 'api.organization', 'api.secrets'],
      claims_supported: ['sub', 'email', 'email_verified', 'name', 'premium', 'sstamp', 'device', 'client_id', 'scope', 'amr'],
      grant_types_supported: ['password', 'refresh_token', 'client_credentials', 'webauthn', 'authorization_code'],
      response_types_supported: ['token', 'code'],
      code_challenge_methods_supported: ['S256'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_post'],
    }),
  );

  app.get(
    '/.well-known/openid-configuration/jwks',
    {
      config: { access: access.anonymous },
      schema: {
        tags,
        summary: 'Read the token signing keys',
        description: 'The public key (JWKS) that verifies the RS256 access tokens this server signs. Access: anonymous.',
        response: { 200: Jwks },
      },
    },
    async () => keys.jwks(),
  );
};
