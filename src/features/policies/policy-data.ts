import { BadRequest } from '../../http/errors.js';
import type { PolicyRow } from './policies.repository.js';
import { PolicyType } from './policy-type.js';

const MAX_DATA_CHARS = 10_000;

type Check = (value: unknown) => boolean;
const int = (min: number, max: number): Check => (v) => v === null || (Number.isInteger(v) && (v as number) >= min && (v as number) <= max);
const bool: Check = (v) => v === null || typeof v === 'boolean';

/** Each comma-separated entry a host name (with a port, maybe) or an http(s) URL, as the extension parses it. */
const idpHosts: Check = (v) => {
  if (v === null || v === '') return true;
  if (typeof v !== 'string' || v.length > 1000) return false;
  return v.split(',').every((entry) => {
    const text = entry.trim();
    if (!text) return false;
    try {
      const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname.length > 0 && !/\s/.test(text);
    } catch {
      return false;
    }
  });
};

/** The data fields the server reads, per type, with their allowed values. Others are stored loosely. */
const KNOWN: Partial<Record<PolicyType, Record<string, [Check, string]>>> = {
  [PolicyType.MasterPassword]: {
    // Complexity is the zxcvbn score 0-4; clients allow lengths of 12 to 128.
    minComplexity: [int(0, 4), 'an integer from 0 to 4'],
    minLength: [int(12, 128), 'an integer from 12 to 128'],
    requireUpper: [bool, 'a boolean'],
    requireLower: [bool, 'a boolean'],
    requireNumbers: [bool, 'a boolean'],
    requireSpecial: [bool, 'a boolean'],
    enforceOnLogin: [bool, 'a boolean'],
  },
  [PolicyType.MaximumVaultTimeout]: {
    minutes: [int(0, 525_600), 'an integer from 0 to 525600'],
    action: [(v) => v === null || v === 'lock' || v === 'logOut', 'null, "lock" or "logOut"'],
  },
  [PolicyType.ResetPassword]: { autoEnrollEnabled: [bool, 'a boolean'] },
  // The browser extension splits idpHost on commas and submits logins on those hosts only.
  [PolicyType.AutomaticAppLogIn]: { idpHost: [idpHosts, 'null or a comma-separated list of host names or URLs, at most 1000 characters'] },
  [PolicyType.SendOptions]: { disableHideEmail: [bool, 'a boolean'] },
  // Send controls (features/sends/send-policies.ts): whoCanAccess 0 any, 1 a password, 2 specific people.
  [PolicyType.SendControls]: {
    disableSend: [bool, 'a boolean'],
    disableHideEmail: [bool, 'a boolean'],
    whoCanAccess: [int(0, 2), 'null or 0, 1 or 2'],
    allowedDomains: [(v) => v === null || (typeof v === 'string' && v.length <= 1000), 'null or at most 1000 characters'],
    deletionHours: [int(1, 31 * 24), 'null or an integer from 1 to 744'],
    allowedSendTypes: [(v) => v === null || (Array.isArray(v) && v.length <= 3 && v.every((t) => t === 0 || t === 1 || t === 2)), 'null or a list of Send types (0, 1, 2)'],
  },
};

/**
 * Checks a policy's `data`: a JSON object (or null) of bounded size; for the types the server
 * reads, the known fields must have the right types and only those are kept. `at` names the
 * field in errors (`policy.data` in the newer body).
 */
export function validatePolicyData(type: PolicyType, data: unknown, at = 'data'): Record<string, unknown> | null {
  if (data === undefined || data === null) return null;
  if (typeof data !== 'object' || Array.isArray(data)) throw BadRequest.field(at, `The ${at} field must be a JSON object or null.`);
  if (JSON.stringify(data).length > MAX_DATA_CHARS) throw BadRequest.field(at, `The ${at} field must be at most ${MAX_DATA_CHARS} characters of JSON.`);
  const known = KNOWN[type];
  if (!known) return data as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const [key, [check, expected]] of Object.entries(known)) {
    const value = (data as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (!check(value)) throw BadRequest.field(`${at}.${key}`, `The ${at}.${key} field must be ${expected}.`);
    kept[key] = value;
  }
  if (type === PolicyType.SendControls && kept.allowedDomains != null && kept.whoCanAccess !== 2) {
    throw BadRequest.field(`${at}.allowedDomains`, 'Allowed domains can only be set when the required access type is set to specific people');
  }
  return kept;
}

/**
 * Whether a stored Account recovery policy enrols members in account recovery when they join
 * (`data.autoEnrollEnabled`, which validatePolicyData keeps under that name).
 */
export function autoEnrollsInRecovery(policy: Pick<PolicyRow, 'enabled' | 'data'> | undefined): boolean {
  if (!policy?.enabled || !policy.data) return false;
  try {
    const data: unknown = JSON.parse(policy.data);
    return typeof data === 'object' && data !== null && (data as Record<string, unknown>).autoEnrollEnabled === true;
  } catch {
    return false;
  }
}
