import { lookup } from 'node:dns/promises';
import net, { isIP, type LookupFunction } from 'node:net';

/**
 * Which addresses a request the server makes on someone's behalf (an integration's delivery, a
 * site icon) may reach, checked on what a name resolves to at connection time.
 *
 * The check runs inside the connection's own lookup, so the address checked is the address
 * connected to: a name that resolves to a public address for a check and to a private one for
 * the connection (DNS rebinding) cannot slip through.
 */

/** Addresses refused unless allowed: loopback, private, link-local, shared, unspecified, multicast and reserved. */
const BLOCKED = new net.BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32]] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** Whether an address is one the server may not reach without the operator's leave (anything not an IP address counts as one). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4 address written as IPv6 is checked as IPv4, in either notation (::ffff:10.0.0.1,
  // ::ffff:a00:1): the URL parser writes both as hex groups.
  const canonical = new URL(`http://[${address.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(canonical);
  if (mapped?.[1] && mapped[2]) {
    const high = parseInt(mapped[1], 16);
    const low = parseInt(mapped[2], 16);
    return BLOCKED.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, 'ipv4');
  }
  return BLOCKED.check(canonical, 'ipv6');
}

export class RefusedAddress extends Error {
  /**
   * The message without the resolved address, for a tenant who chose the host: the server's
   * internal addresses are the operator's to know (log `message`, show this).
   */
  readonly publicMessage: string;
  /** `setting` names what the operator would turn on to allow it (INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES...). */
  constructor(host: string, address: string, setting: string) {
    super(`${host} resolves to ${address}, a private, loopback or link-local address; the operator has not allowed reaching those (${setting}).`);
    this.name = 'RefusedAddress';
    this.publicMessage = `${host} is on a private, loopback or link-local address; the operator has not allowed reaching those (${setting}).`;
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address of a name; the system resolver unless one is given (tests give their own). */
export type Resolver = (hostname: string, family: number) => Promise<ResolvedAddress[]>;

/**
 * A resolver that runs at most `atOnce` lookups at a time and lets at most `waiting` more queue;
 * past that it fails at once (EAI_AGAIN, which callers treat as a failure to retry later).
 *
 * Why: the system resolver (getaddrinfo) blocks one of libuv's four pool threads per lookup, the
 * threads that also hash passwords and read files. Where DNS does not answer, each lookup holds
 * its thread for seconds, so an organization's integrations pointed at such names could stall
 * every login of the server; bounded, they wait on each other instead.
 */
export function limitedResolver(resolve: Resolver, atOnce: number, waiting: number): Resolver {
  let running = 0;
  const queue: (() => void)[] = [];
  return async (hostname, family) => {
    if (running < atOnce) running++;
    else if (queue.length >= waiting) throw Object.assign(new Error(`too many name lookups at once; ${hostname} was not looked up`), { code: 'EAI_AGAIN' });
    // A finished lookup hands its slot straight to the next in line, so none can cut in.
    else await new Promise<void>((resume) => queue.push(resume));
    try {
      return await resolve(hostname, family);
    } finally {
      const next = queue.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The system's resolver, two lookups at a time (half of libuv's pool; see limitedResolver). */
export const systemResolver: Resolver = limitedResolver((hostname, family) => lookup(hostname, { all: true, family }), 2, 1000);

export interface GuardOptions {
  allowPrivate: boolean;
  /** Private addresses allowed even so (a trusted host on the operator's own network). */
  allowAddress?: (address: string) => boolean;
  /** The setting that allows private addresses, named in the refusal. */
  setting: string;
  resolve?: Resolver;
}

/** A `lookup` for http(s) agents and sockets that refuses names resolving to a private address. */
export function guardedLookup({ allowPrivate, allowAddress = () => false, setting, resolve = systemResolver }: GuardOptions): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    resolve(hostname, family)
      .then((addresses) => {
        if (addresses.length === 0) throw Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' });
        // Every address the name has must pass: the connection may use any of them.
        const refused = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address) && !allowAddress(a.address));
        if (refused) throw new RefusedAddress(hostname, refused.address, setting);
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
