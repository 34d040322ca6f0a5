import { generateKeyPairSync } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { SecretBox } from '../../platform/auth/secret-box.js';
import type { Clock } from '../../shared/clock.js';
import { retryingOnce } from '../../shared/retrying-once.js';

/**
 * The server's VAPID key pair (RFC 8292): the browsers' push services accept a message only when
 * it is signed with the private key whose public half the extension subscribed with (the
 * `vapidPublicKey` of /api/config). Made once, by whichever instance starts first, and kept in the
 * database so every instance of a fleet signs with the same key; a new key would leave every
 * stored subscription unusable until each extension noticed and subscribed again.
 */
export interface VapidKeys {
  /** The uncompressed P-256 public key, base64url (65 bytes). */
  publicKey: string;
  /** The private scalar, base64url (32 bytes). */
  privateKey: string;
}

/** What the sealed private key is bound to (secret-box.ts): it opens only as the VAPID key. */
export const VAPID_KEY_PURPOSE = 'web-push-vapid';
const ROW_ID = 1;

export interface VapidKeyDeps {
  db: Db;
  secretBox: SecretBox;
  clock: Clock;
}

/** The public key, the pair made now when the database has none. */
async function ensurePublicKeyRow({ db, secretBox, clock }: VapidKeyDeps): Promise<{ public_key: string; private_key: string }> {
  const read = () => db.selectFrom('web_push_keys').select(['public_key', 'private_key']).where('id', '=', ROW_ID).executeTakeFirst();
  const row = await read();
  if (row) return row;
  // Two instances starting at once both generate a pair and both insert with "do nothing on
  // conflict"; both then read the row that won, so a fleet ends with one pair.
  const fresh = generateVapidKeys();
  await db
    .insertInto('web_push_keys')
    .values({ id: ROW_ID, public_key: fresh.publicKey, private_key: secretBox.seal(fresh.privateKey, VAPID_KEY_PURPOSE), creation_date: clock.now().toISOString() })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const won = await read();
  if (!won) throw new Error('The VAPID key pair was neither found nor stored.');
  return won;
}

/** A new P-256 pair in VAPID's encoding: the public key as the uncompressed point, the private as the scalar, both base64url. */
function generateVapidKeys(): VapidKeys {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x ?? '', 'base64url'), Buffer.from(jwk.y ?? '', 'base64url')]);
  return { publicKey: point.toString('base64url'), privateKey: jwk.d ?? '' };
}

/**
 * The key pair. Throws when the private key does not open with this instance's secrets key
 * (instances of a fleet with different SECRETS_KEY values).
 */
export async function ensureVapidKeys(deps: VapidKeyDeps): Promise<VapidKeys> {
  const row = await ensurePublicKeyRow(deps);
  return { publicKey: row.public_key, privateKey: deps.secretBox.open(row.private_key, VAPID_KEY_PURPOSE) };
}

/**
 * The public key as /config advertises it, read (or the pair made) on the first call and kept:
 * nothing is made, and no secrets key file written, by a process that never serves /config.
 * A failure is not kept, so the next call tries again.
 */
export function vapidPublicKeyOf(deps: VapidKeyDeps): () => Promise<string> {
  return retryingOnce(async () => (await ensurePublicKeyRow(deps)).public_key);
}

/**
 * Whom the push services may contact about this server (the VAPID `sub` claim): WEB_PUSH_SUBJECT,
 * else PUBLIC_URL when it is https (push services refuse an http: subject), else a mailto: address
 * at the server's host.
 */
export function vapidSubject(config: { webPushSubject?: string | undefined; publicUrl: string }): string {
  if (config.webPushSubject) return config.webPushSubject;
  const url = new URL(config.publicUrl);
  if (url.protocol === 'https:') return url.origin;
  return `mailto:admin@${url.hostname}`;
}
