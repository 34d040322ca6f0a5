/**
 * The FIDO AppID trusted-facets list (`/app-id.json`) the web vault names for U2F security
 * keys: the server's own origin, then the official iOS bundle id and Android signing-key
 * hashes, as the official self-hosted setup generates it.
 */
export const FIDO_TRUSTED_APPS_TYPE = 'application/fido.trusted-apps+json';

const MOBILE_FACETS = [
  'ios:bundle-id:com.8bit.bitwarden',
  'android:apk-key-hash:dUGFzUzf3lmHSLBDBIv+WaFyZMI',
  'android:apk-key-hash:pSCbprJwYtwCZOPOpmU6YuPBs/g',
];

export function appIdDocument(publicUrl: string) {
  // A facet id is a web origin: scheme, host and a non-default port, no path.
  const origin = new URL(publicUrl).origin;
  return { trustedFacets: [{ version: { major: 1, minor: 0 }, ids: [origin, ...MOBILE_FACETS] }] };
}
