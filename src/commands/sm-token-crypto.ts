import { hkdfSync, randomBytes } from 'node:crypto';
import { encryptString } from './client/crypto.js';

/**
 * The crypto of a Secrets Manager access token as the official web app makes it and the SDK and
 * `bws` read it: a random 16-byte secret, kept only in the printed token, derives the token's
 * 64-byte key; the server stores the organization key encrypted under that key and never sees
 * the secret, so only the token's holder can open it.
 */

/** The length of the secret at the end of the token string, before base64. */
export const ACCESS_TOKEN_SECRET_BYTES = 16;

/**
 * The token key: HKDF-SHA256 with salt "bitwarden-accesstoken" over the secret and info
 * "sm-access-token" (the SDK's shareable-key derivation). Unlike the master key's stretching,
 * this one runs the Extract step, so node's hkdf computes it as is.
 */
export function accessTokenKey(secret: Buffer): Buffer {
  if (secret.length !== ACCESS_TOKEN_SECRET_BYTES) throw new Error(`an access token secret is ${ACCESS_TOKEN_SECRET_BYTES} bytes, got ${secret.length}`);
  return Buffer.from(hkdfSync('sha256', secret, 'bitwarden-accesstoken', 'sm-access-token', 64));
}

/** The body of `POST /api/service-accounts/{id}/access-tokens`. */
export interface AccessTokenBody {
  name: string;
  encryptedPayload: string;
  key: string;
  expireAt: string | null;
}

/**
 * A new token's secret and the body that registers it: its name under the organization key, the
 * organization key in the payload under the token key (the JSON the SDK parses after login), and
 * the token key under the organization key, as the web app sends it.
 */
export function newAccessToken(orgKey: Buffer, name: string, expireAt: Date | null): { secret: Buffer; body: AccessTokenBody } {
  const secret = randomBytes(ACCESS_TOKEN_SECRET_BYTES);
  const tokenKey = accessTokenKey(secret);
  const payload = JSON.stringify({ encryptionKey: orgKey.toString('base64') });
  return {
    secret,
    body: {
      name: encryptString(name, orgKey),
      encryptedPayload: encryptString(payload, tokenKey),
      key: encryptString(tokenKey.toString('base64'), orgKey),
      expireAt: expireAt?.toISOString() ?? null,
    },
  };
}

/** The string the SDK's `loginAccessToken` and `bws --access-token` take: version 0, id, client secret, key secret. */
export function accessTokenString(id: string, clientSecret: string, secret: Buffer): string {
  return `0.${id}.${clientSecret}:${secret.toString('base64')}`;
}
