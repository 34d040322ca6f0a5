import { Type } from 'typebox';

/** Website icons the clients show beside items (`/icons/{domain}/icon.png`) and the change-password finder. */
export const iconSettings = {
  iconsService: Type.String({
    pattern: '^(internal|off|bitwarden|duckduckgo|google|https://[^{}]*\\{\\}[^{}]*)$',
    expected: 'internal, off, bitwarden, duckduckgo, google, or an https:// URL template with exactly one {}',
    default: 'internal',
    description:
      'Where site icons come from: internal (this server fetches them), off (no icons; the clients show their own), or a redirect to a public icon service: bitwarden, duckduckgo, google, or an https:// URL template whose {} is replaced by the domain.',
  }),
  iconsRedirectCode: Type.Integer({
    enum: [301, 302, 307, 308],
    default: 302,
    description: 'HTTP status of the redirect to an external icon service (ICONS_SERVICE set to one).',
  }),
  iconsCacheDir: Type.Optional(Type.String({ minLength: 1, description: 'Directory of the icon cache (ICONS_SERVICE=internal). Defaults to DATA_DIR/icon_cache.' })),
  iconsCacheMb: Type.Integer({ minimum: 1, maximum: 10_240, default: 50, description: 'Largest size of the icon cache on disk, in MB; the oldest icons go first.' }),
  iconsCacheTtlSeconds: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 2_592_000, description: 'How long a fetched icon is served from the cache before it is fetched again.' }),
  iconsNegativeTtlSeconds: Type.Integer({
    minimum: 10,
    maximum: 31_536_000,
    default: 3600,
    description: 'How long a site whose icon could not be fetched is answered the default icon without asking it again.',
  }),
  iconsTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000, description: 'Time limit of one icon lookup (the page, its redirects and the icon), in milliseconds.' }),
  iconsMaxKb: Type.Integer({ minimum: 1, maximum: 10_240, default: 512, description: 'Largest icon fetched, in KB; a page is read up to the same size to find its icon links.' }),
  iconsFetchesPerMinute: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 120,
    description: 'Sites this instance asks for icons per minute, all callers together; past it a request gets 429 until the minute ends (cached icons are still served).',
  }),
  iconsConcurrentFetches: Type.Integer({ minimum: 1, maximum: 1000, default: 8, description: 'Icon lookups in progress at once on this instance; more wait for 429 like the per-minute limit.' }),
  iconsAllowPrivateAddresses: Type.Boolean({
    default: false,
    description: 'Let the icon fetcher and the change-password finder reach loopback, private and link-local addresses. Off: such addresses are refused, whatever name resolves to them.',
  }),
};
