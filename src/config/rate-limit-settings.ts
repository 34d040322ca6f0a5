import net, { isIP } from 'node:net';

/**
 * The per-endpoint IP rules (IP_RATE_LIMIT_RULES) in the official server's format: `Endpoint`
 * (`verb:path`, `*` matching anything, e.g. `post:/connect/token`, `post:*`, `*`), `Period`
 * (`1s`, `1m`, `10m`, `1h`, `1d`) and `Limit`; plus `Service` to apply a rule to one service only
 * (every service when omitted). Paths are those of the service, without its /api or /identity prefix.
 */
export interface IpRule {
  Endpoint: string;
  Period: string;
  Limit: number;
  Service?: 'api' | 'identity' | 'events' | 'notifications';
}

const SERVICES = ['api', 'identity', 'events', 'notifications'];
const PERIOD = /^(\d+)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function periodMs(period: string): number {
  const match = PERIOD.exec(period);
  if (!match) throw new Error(`not a period: ${period}`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

const perMinuteAndSecond = (verb: string, service: IpRule['Service']): IpRule[] => [
  { Endpoint: `${verb}:*`, Period: '1m', Limit: 60, Service: service },
  { Endpoint: `${verb}:*`, Period: '1s', Limit: 5, Service: service },
];

/**
 * The cloud variant's rules: the official server's API and identity rules, plus registration and
 * prelogin, which Strongroom serves on both services.
 */
export const CLOUD_IP_RULES: readonly IpRule[] = [
  ...perMinuteAndSecond('post', 'api'),
  ...perMinuteAndSecond('put', 'api'),
  ...perMinuteAndSecond('delete', 'api'),
  { Endpoint: 'get:*', Period: '1m', Limit: 200, Service: 'api' },
  { Endpoint: 'post:/accounts/password-hint', Period: '60m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/accounts/email-token', Period: '1m', Limit: 2, Service: 'api' },
  { Endpoint: 'post:/accounts/email', Period: '60m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/accounts/verify-email-token', Period: '1m', Limit: 2, Service: 'api' },
  { Endpoint: 'post:/accounts/verify-email', Period: '60m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/accounts/delete-recover-token', Period: '1m', Limit: 2, Service: 'api' },
  { Endpoint: 'post:/accounts/delete-recover', Period: '60m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/two-factor/send-email', Period: '10m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/two-factor/send-email-login', Period: '10m', Limit: 10, Service: 'api' },
  { Endpoint: 'post:/two-factor/authenticator', Period: '1m', Limit: 3, Service: 'api' },
  { Endpoint: 'post:/two-factor/email', Period: '1m', Limit: 3, Service: 'api' },
  { Endpoint: 'get:/alive', Period: '1m', Limit: 5, Service: 'api' },
  { Endpoint: 'get:/hibp/breach', Period: '2s', Limit: 1, Service: 'api' },
  { Endpoint: 'post:/installations', Period: '2m', Limit: 2, Service: 'api' },
  { Endpoint: 'post:/organizations/*/users/invite', Period: '1m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/organizations/*/users/invite', Period: '1d', Limit: 300, Service: 'api' },
  { Endpoint: 'post:/organizations/*/users/*/reinvite', Period: '1m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/organizations/*/users/*/reinvite', Period: '1d', Limit: 300, Service: 'api' },
  { Endpoint: 'post:/accounts/prelogin', Period: '1m', Limit: 10, Service: 'api' },
  { Endpoint: 'post:/accounts/register', Period: '1m', Limit: 5, Service: 'api' },
  { Endpoint: 'post:/accounts/register', Period: '1h', Limit: 20, Service: 'api' },
  { Endpoint: '*', Period: '1m', Limit: 60, Service: 'identity' },
  { Endpoint: '*', Period: '1s', Limit: 5, Service: 'identity' },
  { Endpoint: 'post:/connect/token', Period: '1m', Limit: 10, Service: 'identity' },
  { Endpoint: 'post:/accounts/prelogin*', Period: '1m', Limit: 10, Service: 'identity' },
  { Endpoint: 'post:/accounts/register*', Period: '1m', Limit: 5, Service: 'identity' },
  { Endpoint: 'post:/accounts/register*', Period: '1h', Limit: 20, Service: 'identity' },
];

/** The rules of IP_RATE_LIMIT_RULES (a JSON array), and the problems with them. */
export function parseIpRules(text: string): { rules: readonly IpRule[]; problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { rules: [], problems: [`not valid JSON: ${(error as Error).message}`] };
  }
  if (!Array.isArray(parsed)) return { rules: [], problems: ['must be a JSON array of {"Endpoint", "Period", "Limit"} rules'] };
  const problems: string[] = [];
  const rules: IpRule[] = [];
  parsed.forEach((item: unknown, i) => {
    const where = `rule ${i + 1}`;
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(`${where}: must be an object with Endpoint, Period and Limit`);
      return;
    }
    const rule = item as Record<string, unknown>;
    const unknown = Object.keys(rule).filter((key) => !['Endpoint', 'Period', 'Limit', 'Service'].includes(key));
    if (unknown.length > 0) problems.push(`${where}: unknown field ${unknown.map((k) => `"${k}"`).join(', ')} (use Endpoint, Period, Limit, Service)`);
    const { Endpoint: endpoint, Period: period, Limit: limit, Service: service } = rule;
    if (typeof endpoint !== 'string' || !/^(\*|(\*|[a-z]+):\S+)$/i.test(endpoint)) {
      problems.push(`${where}: Endpoint must be "*" or "verb:path" such as "post:/connect/token" (got ${JSON.stringify(endpoint)})`);
    }
    if (typeof period !== 'string' || !PERIOD.test(period) || periodMs(period) === 0) {
      problems.push(`${where}: Period must be a count and a unit s, m, h or d, such as "1m" or "10m" (got ${JSON.stringify(period)})`);
    }
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
      problems.push(`${where}: Limit must be a whole number of at least 1 (got ${JSON.stringify(limit)})`);
    }
    if (service !== undefined && (typeof service !== 'string' || !SERVICES.includes(service))) {
      problems.push(`${where}: Service must be one of ${SERVICES.join(', ')} (got ${JSON.stringify(service)})`);
    }
    rules.push(rule as unknown as IpRule);
  });
  return { rules, problems };
}

/** The addresses and CIDR ranges of IP_RATE_LIMIT_WHITELIST (comma list), or the problems with them. */
export function parseIpList(text: string): { entries: string[]; problems: string[] } {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const problems = entries.filter((entry) => !ipMatcher([entry]).ok).map((entry) => `"${entry}" is neither an IP address nor a CIDR range such as 10.0.0.0/8`);
  return { entries, problems };
}

/** `::ffff:10.1.2.3` -> `10.1.2.3`: an IPv4 client on a dual-stack socket is still that IPv4 address. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** Whether an address is one of `entries` (addresses or CIDR ranges). */
export function ipMatcher(entries: readonly string[]): { ok: boolean; has(address: string): boolean } {
  const list = new net.BlockList();
  let ok = true;
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? undefined : Number(bits);
    if (family === 0 || extra !== undefined || (prefix !== undefined && (!/^\d+$/.test(bits ?? '') || prefix > (family === 4 ? 32 : 128)))) {
      ok = false;
      continue;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return {
    ok,
    has(address) {
      const plain = plainAddress(address);
      const family = isIP(plain);
      return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
