/**
 * The headers Strongroom sends with the web vault and with its own pages. The values are our
 * own composition of what the web vault needs, following the facts of the official self-hosted
 * proxy and vaultwarden: WebAssembly for the SDK, inline styles for Angular, Duo's frames,
 * Have I Been Pwned, the 2FA directory and the email-alias forwarders the generator calls.
 */

/** Third-party origins the web vault itself contacts from the browser. */
const CONNECT_ORIGINS = [
  'https://api.pwnedpasswords.com',
  'https://api.2fa.directory',
  'https://app.simplelogin.io/api/',
  'https://app.addy.io/api/',
  'https://api.fastmail.com/',
  'https://api.forwardemail.net',
];
const DUO_ORIGINS = 'https://*.duosecurity.com https://*.duofederal.com';

/** The WebSocket origin of PUBLIC_URL: some browsers do not count ws(s) as 'self'. */
function websocketOrigin(publicUrl: string): string {
  const url = new URL(publicUrl);
  return `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}`;
}

/** `imageOrigins`: where else images may come from (the icon service the icons redirect to). */
export function webVaultCsp(publicUrl: string, imageOrigins: readonly string[] = []): string {
  return [
    "default-src 'self'",
    // The SDK is WebAssembly; nothing else needs eval.
    "script-src 'self' 'wasm-unsafe-eval'",
    // Angular and its component library set inline styles.
    "style-src 'self' 'unsafe-inline'",
    ["img-src 'self' data: https://haveibeenpwned.com", ...imageOrigins].join(' '),
    "font-src 'self'",
    `child-src 'self' ${DUO_ORIGINS}`,
    `frame-src 'self' ${DUO_ORIGINS}`,
    `connect-src 'self' ${websocketOrigin(publicUrl)} ${CONNECT_ORIGINS.join(' ')}`,
    // Attachments and exports open as blob: objects.
    "object-src 'self' blob:",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** Sent with every web vault file and Strongroom page. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-robots-tag': 'noindex, nofollow',
};

/**
 * Connector pages (webauthn-connector.html, duo-connector.html, sso-connector.html,
 * captcha-connector.html and their mobile variants) are opened inside frames by the browser
 * extension, the desktop and mobile apps: they get neither X-Frame-Options nor the vault's
 * frame-ancestors, as on the official server.
 */
export function isConnectorPage(path: string): boolean {
  return /(^|\/)[a-z0-9-]+-connector\.html$/i.test(path);
}

/** Build tools put a content hash in the names of files whose content never changes. */
export function isHashedAsset(path: string): boolean {
  return /[.-][0-9a-f]{8,}\.[a-z0-9]+$/i.test(path);
}

export function cacheControlFor(path: string): string {
  if (/(^|\/)index\.html$/i.test(path)) return 'no-cache, no-store, max-age=0';
  if (isHashedAsset(path)) return 'public, max-age=31536000, immutable';
  // Locale files, images and connector pages keep their names across versions: revalidate.
  return 'no-cache';
}
