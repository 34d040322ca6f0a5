// Self-hosted Web Push (0037-web-push, docs/notifications.md).

/** The server's VAPID key pair: one row (id 1). */
export interface WebPushKeysTable {
  id: number;
  /** The uncompressed P-256 public key, base64url, as /api/config advertises it. */
  public_key: string;
  /** The private key, base64url, sealed with the server's secrets key (platform/auth/secret-box.ts). */
  private_key: string;
  creation_date: string;
}

/** A device's push subscription as the browser made it; a secret (never logged). */
export interface WebPushSubscriptionsTable {
  device_id: string;
  /** The push service's URL the server POSTs to. */
  endpoint: string;
  /** The browser's P-256 public key (65 bytes, base64url). */
  p256dh: string;
  /** The 16-byte authentication secret, base64url. */
  auth: string;
  creation_date: string;
  revision_date: string;
}
