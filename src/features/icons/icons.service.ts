import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import type { Clock } from '../../shared/clock.js';
import type { Resolver } from '../../platform/net/outbound-address.js';
import { createChangePasswordFinder } from './change-password.js';
import { createIconCache } from './icon-cache.js';
import { createIconFinder, sniffImage, type SiteOrigins } from './icon-finder.js';
import { createSafeFetch } from './safe-fetch.js';

/** The public icon services an operator may name instead of a URL template (as vaultwarden names them). */
export const ICON_SERVICE_TEMPLATES: Record<string, string> = {
  bitwarden: 'https://icons.bitwarden.net/{}/icon.png',
  duckduckgo: 'https://icons.duckduckgo.com/ip3/{}.ico',
  google: 'https://www.google.com/s2/favicons?domain={}&sz=32',
};

/** The origin icons are redirected to, which the web vault's pages must let images load from; null when they are not redirected. */
export function iconServiceOrigin(iconsService: string): string | null {
  const template = ICON_SERVICE_TEMPLATES[iconsService] ?? (iconsService.startsWith('https://') ? iconsService : null);
  if (!template) return null;
  const url = new URL(template.replace('{}', 'x'));
  // A domain in the host name (https://{}.icons.example) needs a wildcard for the labels before it.
  const authority = template.slice('https://'.length).split('/')[0]!;
  return authority.includes('{}') ? `https://*.${url.host.split('.').slice(1).join('.')}` : url.origin;
}

export type IconsConfig = Pick<
  Config,
  | 'dataDir'
  | 'iconsService'
  | 'iconsRedirectCode'
  | 'iconsCacheDir'
  | 'iconsCacheMb'
  | 'iconsCacheTtlSeconds'
  | 'iconsNegativeTtlSeconds'
  | 'iconsTimeoutMs'
  | 'iconsMaxKb'
  | 'iconsFetchesPerMinute'
  | 'iconsConcurrentFetches'
  | 'iconsAllowPrivateAddresses'
>;

export type IconAnswer =
  | { kind: 'icon'; body: Buffer; contentType: string; maxAgeSeconds: number }
  | { kind: 'none'; maxAgeSeconds: number }
  | { kind: 'redirect'; location: string; status: number; maxAgeSeconds: number }
  | { kind: 'off' }
  | { kind: 'busy' };

/** A domain is asked at most once in this long, whatever the caches say (they may have been emptied). */
const PER_DOMAIN_INTERVAL_MS = 60_000;
const RECENT_DOMAINS = 10_000;
const CHANGE_PASSWORD_TTL_MS = 24 * 3600_000;

export interface IconsDeps {
  config: IconsConfig;
  clock: Clock;
  /** Name resolution for outbound requests (tests give their own). */
  resolve?: Resolver;
  /** Private addresses reachable even with ICONS_ALLOW_PRIVATE_ADDRESSES off (a trusted host). */
  allowAddress?: (address: string) => boolean;
  /** Where a domain's site is asked (tests point names at local servers on their own ports). */
  origins?: SiteOrigins;
}

export function createIcons({ config, clock, resolve, allowAddress, origins }: IconsDeps) {
  const mode = config.iconsService;
  const template = ICON_SERVICE_TEMPLATES[mode] ?? (mode.startsWith('https://') ? mode : null);
  const fetcher = createSafeFetch({ allowPrivateAddresses: config.iconsAllowPrivateAddresses, ...(allowAddress ? { allowAddress } : {}), ...(resolve ? { resolve } : {}) });
  const finder = createIconFinder(fetcher, { maxBytes: config.iconsMaxKb * 1024, timeoutMs: config.iconsTimeoutMs }, origins);
  const changePasswords = createChangePasswordFinder(fetcher, config.iconsTimeoutMs, origins);
  const cache = createIconCache({
    dir: config.iconsCacheDir ?? join(config.dataDir, 'icon_cache'),
    maxBytes: config.iconsCacheMb * 1024 * 1024,
    ttlMs: config.iconsCacheTtlSeconds * 1000,
    negativeTtlMs: config.iconsNegativeTtlSeconds * 1000,
    clock,
  });

  /** Lookups in progress, by domain: a second request for one shares the first's answer. */
  const inFlight = new Map<string, Promise<unknown>>();
  /** When each domain was last asked (insertion order is age order; bounded). */
  const recent = new Map<string, number>();
  let window = { start: 0, count: 0 };
  let running = 0;

  /** Whether one more outbound lookup of `key` may start now; counts it when it may. */
  function admit(key: string): boolean {
    const now = clock.now().getTime();
    const last = recent.get(key);
    if (last !== undefined && now - last < PER_DOMAIN_INTERVAL_MS) return false;
    if (now - window.start >= 60_000) window = { start: now, count: 0 };
    if (window.count >= config.iconsFetchesPerMinute || running >= config.iconsConcurrentFetches) return false;
    window.count++;
    recent.delete(key);
    recent.set(key, now);
    if (recent.size > RECENT_DOMAINS) recent.delete(recent.keys().next().value!);
    return true;
  }

  /** Runs `work` once per key at a time, within the limits; `refused` when the limits say no. */
  async function limited<T>(key: string, work: () => Promise<T>): Promise<{ value: T } | 'refused'> {
    const pending = inFlight.get(key) as Promise<T> | undefined;
    if (pending) return { value: await pending };
    if (!admit(key)) return 'refused';
    running++;
    const promise = work().finally(() => {
      running--;
      inFlight.delete(key);
    });
    inFlight.set(key, promise);
    return { value: await promise };
  }

  const changePasswordAnswers = new Map<string, { uri: string | null; at: number }>();

  return {
    mode: template ? 'redirect' : mode,
    async icon(domain: string): Promise<IconAnswer> {
      if (mode === 'off') return { kind: 'off' };
      if (template) return { kind: 'redirect', location: template.replace('{}', encodeURIComponent(domain)), status: config.iconsRedirectCode, maxAgeSeconds: config.iconsCacheTtlSeconds };
      const cached = await cache.get(domain);
      if (cached.kind === 'icon') {
        const contentType = sniffImage(cached.body);
        if (contentType) return { kind: 'icon', body: cached.body, contentType, maxAgeSeconds: config.iconsCacheTtlSeconds };
      }
      if (cached.kind === 'miss') return { kind: 'none', maxAgeSeconds: config.iconsNegativeTtlSeconds };
      const found = await limited(`icon:${domain}`, async () => {
        const icon = await finder.find(domain);
        // A cache that cannot be written (a full disk) costs a later fetch, not this answer.
        await (icon ? cache.putIcon(domain, icon.body) : cache.putMiss(domain)).catch(() => undefined);
        return icon;
      });
      if (found === 'refused') return { kind: 'busy' };
      if (!found.value) return { kind: 'none', maxAgeSeconds: config.iconsNegativeTtlSeconds };
      return { kind: 'icon', body: found.value.body, contentType: found.value.contentType, maxAgeSeconds: config.iconsCacheTtlSeconds };
    },
    /** The site's change-password URL (`null`: none found, or icons are not fetched here); undefined when the limits refuse a lookup now. */
    async changePasswordUri(domain: string): Promise<string | null | undefined> {
      if (mode !== 'internal') return null;
      const now = clock.now().getTime();
      const known = changePasswordAnswers.get(domain);
      if (known && now - known.at < CHANGE_PASSWORD_TTL_MS) return known.uri;
      const found = await limited(`change-password:${domain}`, () => changePasswords.find(domain));
      if (found === 'refused') return undefined;
      changePasswordAnswers.delete(domain);
      changePasswordAnswers.set(domain, { uri: found.value, at: now });
      if (changePasswordAnswers.size > RECENT_DOMAINS) changePasswordAnswers.delete(changePasswordAnswers.keys().next().value!);
      return found.value;
    },
    close() {
      fetcher.close();
    },
    /** For the tests and diagnostics: bytes in the icon cache. */
    cacheBytes: () => cache.size(),
  };
}

export type Icons = ReturnType<typeof createIcons>;
