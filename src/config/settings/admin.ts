import { Type } from 'typebox';

/** The admin console at /admin. */
export const adminSettings = {
  adminToken: Type.Optional(
    Type.String({
      secret: true,
      pattern: '^\\$argon2id\\$v=19\\$m=\\d+,t=\\d+,p=\\d+\\$[A-Za-z0-9+/]+\\$[A-Za-z0-9+/]+$',
      expected: 'an Argon2id PHC string ($argon2id$v=19$m=…) as `strongroom admin-token` prints it, never the token itself',
      description:
        'The admin console at /admin (docs/admin-console.md): the Argon2id hash (PHC string) of the operator\'s sign-in token, made with `strongroom admin-token`. Unset: the console is off and /admin answers 404.',
    }),
  ),
  adminEnabled: Type.Boolean({
    default: true,
    description: 'Serve the admin console at /admin when ADMIN_TOKEN is set. false turns it off entirely (404) whatever ADMIN_TOKEN says.',
  }),
  adminAllowedIps: Type.Optional(
    Type.String({
      description:
        'Comma list of client addresses and CIDR ranges (127.0.0.1, 10.0.0.0/8, ::1) that may reach the admin console; others get 403. Unset: any address. Behind a reverse proxy set TRUST_PROXY so the client address is known.',
    }),
  ),
  secretsKey: Type.Optional(
    Type.String({
      secret: true,
      pattern: '^[A-Za-z0-9+/]{43}=$',
      expected: '32 random bytes in base64 (44 characters), as `openssl rand -base64 32` prints them',
      description:
        'Key that seals the secrets the server reads back itself (an identity provider\'s client secret, docs/sso.md), kept out of the database. Unset: DATA_DIR/secrets.key, made on first use. Every instance of a fleet needs the same key.',
    }),
  ),
  adminSessionMinutes: Type.Integer({
    minimum: 1,
    maximum: 1440,
    default: 20,
    description: 'How long an admin console sign-in lasts; after it the operator signs in again.',
  }),
};
