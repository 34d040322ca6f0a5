import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { isPrivateAddress } from '../../platform/net/outbound-address.js';

/**
 * The domain of an icon or change-password request, strictly: a DNS name with at least one dot
 * (as the official service requires) or a public IPv4 address; no port, path, credentials or
 * private address. Returns the ASCII (punycode) lower-case form, or a reason it is refused.
 */
export function parseIconDomain(input: string): { domain: string } | { problem: string } {
  const raw = input.trim().toLowerCase().replace(/\.$/, '');
  if (raw === '') return { problem: 'is empty' };
  if (raw.length > 253) return { problem: 'is longer than 253 characters' };
  if (/[/:@?#\\\s[\]]/.test(raw)) return { problem: 'must be a host name alone, without scheme, port, path or credentials' };
  if (isIP(raw)) {
    return isPrivateAddress(raw) ? { problem: 'is a private, loopback or link-local address' } : { domain: raw };
  }
  // Dotted numbers that are no valid IPv4 address (010.1, 1.2.3) are refused rather than guessed at.
  if (/^[0-9.]+$/.test(raw) || /^0x/i.test(raw)) return { problem: 'is not a valid host name' };
  const ascii = domainToASCII(raw);
  if (!ascii) return { problem: 'is not a valid host name' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { problem: 'must contain a dot (a site\'s domain, such as example.com)' };
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
  if (!labels.every((l) => label.test(l))) return { problem: 'is not a valid host name' };
  return { domain: ascii };
}
