import { defaultOrigins, type SiteOrigins } from './icon-finder.js';
import type { SafeFetch } from './safe-fetch.js';

/**
 * A site's change-password page, as the official icons service finds it (W3C "A Well-Known URL
 * for Changing Passwords"): `/.well-known/change-password` answers 2xx (after redirects) while a
 * path that should not exist does not, so a site that answers 200 to everything is not trusted.
 */

const NOT_EXISTING = '/.well-known/resource-that-should-not-exist-whose-status-code-should-not-be-200';
const WELL_KNOWN = '/.well-known/change-password';

export function createChangePasswordFinder(fetcher: SafeFetch, timeoutMs: number, origins: SiteOrigins = defaultOrigins) {
  async function ok(url: URL, deadline: number): Promise<boolean | null> {
    try {
      const answer = await fetcher.get(url, { deadline, maxBytes: 1024, truncate: true, accept: 'text/html' });
      return answer.status >= 200 && answer.status < 300;
    } catch {
      return null;
    }
  }

  return {
    /** The well-known URL when the site has a reliable one, else null. */
    async find(domain: string): Promise<string | null> {
      const deadline = Date.now() + timeoutMs;
      const origin = origins(domain)[0]!;
      const wellKnown = new URL(WELL_KNOWN, origin);
      const [reliable, found] = await Promise.all([ok(new URL(NOT_EXISTING, origin), deadline), ok(wellKnown, deadline)]);
      return reliable === false && found === true ? wellKnown.href : null;
    },
  };
}
