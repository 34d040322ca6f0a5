/**
 * The client feature flags Strongroom decides, served in `/api/config` `featureStates`. Every
 * client flag is off when the server leaves it out, and turning one on commits the server to the
 * request and answer formats behind it; a flag goes on here only once those formats are served
 * and tested. docs/feature-flags.md is this table for people (a test keeps the two in step).
 */
export interface FeatureFlag {
  /** The key the clients look up (FeatureFlag in bitwarden/clients, read by the WASM SDK too). */
  key: string;
  on: boolean;
  why: string;
}

export const FEATURE_FLAGS: readonly FeatureFlag[] = [
  { key: 'pm-32009-new-item-types', on: true, why: 'Bank account, driver\'s license and passport items (types 6-8): stored, synced, shared, imported and exported here, decrypted by the real bw and the WASM SDK in tests (docs/item-types.md). The clients offer the new types only with it on; sync still hides them from clients older than 2026.2.' },
  { key: 'pm-27278-v2-password-registration', on: false, why: 'Registers new accounts with version-2 keys (COSE, XChaCha20-Poly1305). The format is served and tested (the SDK\'s own v2 account registers, logs in, unlocks, saves sealed items and syncs; docs/account-keys.md), but a v2 account refuses every client older than 2025.11 at login, so new accounts would lock out the older phone and desktop apps people still run: left off until the upgrade token (V2UpgradeToken) and a setting for it are built.' },
  { key: 'enroll-aead-on-key-rotation', on: false, why: 'Turns an account into a version-2 one at key rotation. The rotation takes v2 keys (tested with a v1 to v2 upgrade), but the same lock-out of clients older than 2025.11 applies: off for the same reason.' },
  { key: 'force-upgrade-v2-encryption', on: false, why: 'Makes clients upgrade every account to version-2 keys at unlock, which would leave clients older than 2025.11 unable to log in.' },
  { key: 'enableCipherKeyEncryption', on: false, why: 'Per-item keys (the WASM SDK\'s name for it): items then carry a `key` each; Strongroom stores it, but no test writes items with it yet.' },
  { key: 'cipher-key-encryption', on: false, why: 'The same switch under the key older TypeScript clients read.' },
  { key: 'pm-27632-cipher-crud-operations-to-sdk', on: false, why: 'Clients build item requests in the SDK: the same routes with slightly different bodies, and an extra read after a Send save; only the TypeScript bodies are tested.' },
  { key: 'pm-18021-force-update-kdf-settings', on: false, why: 'Clients would rewrite the KDF of PBKDF2 accounts below 600,000 iterations on their own.' },
  { key: 'pm-31885-send-controls', on: true, why: 'The Send controls policy (21) in place of the older Send policies 6 and 7 in the clients\' policy pages and Send forms: its data is validated and enforced on every Send save here, beside 6 and 7 (docs/files.md). Clients without the flag keep showing 6 and 7, which stay enforced.' },
  { key: 'pm-30110-sdk-sends-api', on: false, why: 'Clients send Sends through the SDK\'s own requests, not tested here.' },
  { key: 'pm-23995-no-logout-on-kdf-change', on: false, why: 'Clients would ignore the sign-out Strongroom pushes after a KDF change (reason KdfChange); off, other sessions sign out and log in again with the new settings.' },
  { key: 'pm-4516-devices-add-last-activity-date', on: false, why: 'The devices list would show a last activity date; Strongroom answers the device\'s revision date there, not a true last activity.' },
  { key: 'pm-32497-generate-invite-link', on: false, why: 'Organization invite links are not offered; invitations by email are.' },
  { key: 'pm-34423-staged-status', on: false, why: 'The staged member status is not served.' },
  { key: 'pm-35803-browser-auto-confirm-log-in', on: false, why: 'Automatic confirmation of members is not offered (BulkAutoConfirmOnLogin).' },
  { key: 'pm-37044-pam-v-0', on: false, why: 'Privileged access management is not offered.' },
  { key: 'pm-31920-access-intelligence-azure-file-storage', on: false, why: 'Access Intelligence reports kept as files in cloud storage are not offered; the reports themselves are served.' },
  { key: 'inno-passkey-directory-report', on: false, why: 'The passkey login report (from the public 2FA Directory) is not offered.' },
  { key: 'pm-17772-admin-initiated-sponsorships', on: false, why: 'Families sponsorships come from Bitwarden cloud billing, which a self-hosted server does not have.' },
];

/** `featureStates`: the flags that are on. Left-out flags are off in every client. */
export function featureStates(): Record<string, boolean> {
  return Object.fromEntries(FEATURE_FLAGS.filter((flag) => flag.on).map((flag) => [flag.key, true]));
}
