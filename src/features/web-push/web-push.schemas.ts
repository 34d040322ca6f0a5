import { createECDH } from 'node:crypto';
import { isIP } from 'node:net';
import { Type, type Static } from 'typebox';
import { BadRequest } from '../../http/errors.js';
import { isPrivateAddress } from '../../platform/net/outbound-address.js';

/**
 * The official WebPushAuthRequestModel (bitwarden/server src/Api/Models/Request/
 * DeviceRequestModels.cs): the extension sends its PushSubscription's endpoint and keys flat, in
 * camelCase (clients libs/common/.../web-push.request.ts).
 */
export const WebPushAuthBody = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2000, description: "The push service's URL for this browser (https)" }),
  p256dh: Type.String({ minLength: 1, maxLength: 200, description: "The browser's P-256 public key: 65 bytes, uncompressed, base64url" }),
  auth: Type.String({ minLength: 1, maxLength: 100, description: 'The authentication secret: 16 bytes, base64url' }),
});
export type WebPushAuthBody = Static<typeof WebPushAuthBody>;

/** A subscription that passed every check, its keys as unpadded base64url. */
export interface CheckedSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** The setting a refused private or http endpoint names (config/settings/push.ts). */
export const ALLOW_PRIVATE_SETTING = 'WEB_PUSH_ALLOW_PRIVATE_ADDRESSES';

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function bytesOf(field: string, text: string, what: string): Buffer {
  if (!BASE64.test(text)) throw BadRequest.field(field, `${field} must be ${what}, base64url.`);
  // The browsers give base64url; standard base64 decodes the same once its alphabet is mapped.
  return Buffer.from(text.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
}

/**
 * Checks what the server will later POST to and encrypt for. The endpoint is an https URL without
 * credentials; an IP literal on a private, loopback or link-local address is refused here, and a
 * name that resolves to one is refused when the server connects (platform/net/outbound-address.ts),
 * since the server POSTs to whatever the caller names: an SSRF surface. `allowPrivate` (for a push
 * service on the operator's own network, and the tests' local one) lifts both, and allows http.
 */
export function checkSubscription(body: WebPushAuthBody, allowPrivate: boolean): CheckedSubscription {
  let url: URL;
  try {
    url = new URL(body.endpoint);
  } catch {
    throw BadRequest.field('endpoint', 'endpoint must be an absolute https:// URL.');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw BadRequest.field('endpoint', 'endpoint must be an https:// URL.');
  if (url.username || url.password) throw BadRequest.field('endpoint', 'endpoint must not carry credentials.');
  // `LOCALHOST.` is localhost: names compare lower case and without the root's trailing dot.
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (url.href.length > 2000) throw BadRequest.field('endpoint', 'endpoint must be at most 2000 characters once written as a URL.');
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host)))) {
    throw BadRequest.field('endpoint', `endpoint is on a private, loopback or link-local address; the operator has not allowed reaching those (${ALLOW_PRIVATE_SETTING}).`);
  }
  // The browsers' push services all listen on 443: another port would let a caller make the server knock on any service.
  if (!allowPrivate && url.port !== '' && url.port !== '443') throw BadRequest.field('endpoint', `endpoint must use the https port 443 (${ALLOW_PRIVATE_SETTING} lifts this).`);
  const p256dh = bytesOf('p256dh', body.p256dh, 'an uncompressed P-256 public key');
  if (p256dh.length !== 65 || p256dh[0] !== 4 || !onCurve(p256dh)) throw BadRequest.field('p256dh', 'p256dh must be an uncompressed P-256 public key (65 bytes), base64url.');
  const auth = bytesOf('auth', body.auth, '16 bytes');
  if (auth.length !== 16) throw BadRequest.field('auth', 'auth must be 16 bytes, base64url.');
  return { endpoint: url.href, p256dh: p256dh.toString('base64url'), auth: auth.toString('base64url') };
}

/** Whether the bytes are a point of P-256: encrypting to anything else fails at every send. */
function onCurve(point: Buffer): boolean {
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.alloc(32, 1));
    ecdh.computeSecret(point);
    return true;
  } catch {
    return false;
  }
}
