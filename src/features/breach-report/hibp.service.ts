import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { createByteLru } from '../../shared/byte-lru.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';

/** The answers one instance keeps, whatever HIBP_CACHE_SECONDS says. */
const CACHE_BYTES = 1024 * 1024;
/** Time limit of one call to Have I Been Pwned, connection to last byte. */
const TIMEOUT_MS = 10_000;
/** The longest this server waits on the upstream's Retry-After before its one retry. */
const MAX_RETRY_WAIT_MS = 5_000;
const USER_AGENT = 'Strongroom (self-hosted Bitwarden-compatible server)';

export interface BreachLookupSettings {
  /** Unset: the lookup is not available (the official server answers 400 and so does this one). */
  apiKey: string | undefined;
  /** `https://haveibeenpwned.com/api/v3` unless the operator goes through a proxy. */
  apiUrl: string;
  cacheSeconds: number;
}

interface Answer {
  expiresAt: number;
  /** null: the upstream knows no breach of this account (404). */
  breaches: unknown[] | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The web vault's data breach report: looks a username up in Have I Been Pwned with the
 * operator's key, as the official HibpController does. The web vault reads a 404 as "found in no
 * breach" and any other failure as an error, so only the upstream's own 404 becomes a 404 here:
 * no key, an unreachable upstream or a refused key answer 400, never an all-clear.
 */
export function createBreachLookup(deps: { settings: BreachLookupSettings; clock: Clock }) {
  const { settings, clock } = deps;
  const cache = createByteLru<Answer>(CACHE_BYTES, (answer) => 64 + JSON.stringify(answer.breaches ?? null).length * 2);

  async function ask(url: string, clientId: string, apiKey: string): Promise<Response> {
    const headers = { 'hibp-api-key': apiKey, 'hibp-client-id': clientId, 'user-agent': USER_AGENT, accept: 'application/json' };
    try {
      const first = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
      if (first.status !== 429) return first;
      // HIBP limits requests per key: one retry after the wait it names, as the official server makes.
      await first.body?.cancel();
      const named = Number(first.headers.get('retry-after'));
      await sleep(Number.isFinite(named) && named > 0 ? Math.min(named * 1000 + 200, MAX_RETRY_WAIT_MS) : 2000);
      return await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
    } catch {
      throw new BadRequest('Request failed. Have I Been Pwned could not be reached.');
    }
  }

  return {
    /** The breaches HIBP lists for the username (its own JSON), or NotFound when it lists none. */
    async breaches({ userId }: UserCaller, username: string): Promise<unknown[]> {
      const apiKey = settings.apiKey;
      if (!apiKey) throw new BadRequest('HaveIBeenPwned API key not set.');
      const key = username.toLowerCase();
      const now = clock.now().getTime();
      const cached = cache.get(key);
      if (cached && cached.expiresAt > now) {
        if (!cached.breaches) throw new NotFound();
        return cached.breaches;
      }
      const url = `${settings.apiUrl.replace(/\/+$/, '')}/breachedaccount/${encodeURIComponent(username)}?truncateResponse=false&includeUnverified=false`;
      // HIBP asks for a stable, anonymous id of the end user behind a key.
      const clientId = createHash('sha256').update(userId).digest('base64');
      const response = await ask(url, clientId, apiKey);
      let breaches: unknown[] | null;
      if (response.status === 404) {
        await response.body?.cancel();
        breaches = null;
      } else if (response.ok) {
        const body: unknown = await response.json().catch(() => undefined);
        if (!Array.isArray(body)) throw new BadRequest('Request failed. Have I Been Pwned answered something other than a list of breaches.');
        breaches = body;
      } else {
        await response.body?.cancel();
        throw new BadRequest(`Request failed. Status code: ${response.status}`);
      }
      if (settings.cacheSeconds > 0) cache.set(key, { expiresAt: now + settings.cacheSeconds * 1000, breaches });
      if (!breaches) throw new NotFound();
      return breaches;
    },
  };
}

export type BreachLookup = ReturnType<typeof createBreachLookup>;
