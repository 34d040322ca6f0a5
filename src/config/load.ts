import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import type { TSchema } from 'typebox';
import Value from 'typebox/value';
import { nearestSetting } from './env-names.js';
import { parsePublicKeyList } from '../shared/public-keys.js';
import { CLOUD_IP_RULES, parseIpList, parseIpRules, type IpRule } from './rate-limit-settings.js';
import { ALL_SERVICES, ConfigSchema, envName, isSecretSetting, type ServiceName, type Settings } from './settings.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function schemaKind(schema: TSchema): 'integer' | 'number' | 'boolean' | 'string' {
  const type = (schema as { type?: unknown }).type;
  if (type === 'integer' || type === 'number' || type === 'boolean') return type;
  return 'string';
}

/** Turns an environment string into the setting's type; undefined means "cannot". */
function coerce(kind: ReturnType<typeof schemaKind>, text: string): unknown {
  const value = text.trim();
  switch (kind) {
    case 'integer':
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : text;
    case 'boolean':
      if (/^(true|1|yes|on)$/i.test(value)) return true;
      if (/^(false|0|no|off)$/i.test(value)) return false;
      return text;
    default:
      return text;
  }
}

function readConfigFile(path: string, problems: string[]): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    problems.push(`CONFIG_FILE: ${path} must hold a JSON object`);
  } catch (error) {
    problems.push(`CONFIG_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
  return {};
}

/**
 * Reads settings from the environment (and CONFIG_FILE), applies defaults and reports every
 * invalid setting at once.
 */
export function readSettings(env: NodeJS.ProcessEnv): { settings: Settings; services: ServiceName[] } {
  const problems: string[] = [];
  const properties = ConfigSchema.properties as Record<string, TSchema>;
  const fromFile = env.CONFIG_FILE ? readConfigFile(env.CONFIG_FILE, problems) : {};

  for (const key of Object.keys(fromFile)) {
    if (key in properties) continue;
    const near = nearestSetting(key);
    const nearKey = Object.keys(properties).find((name) => envName(name) === near);
    problems.push(`CONFIG_FILE: unknown setting "${key}"${nearKey ? `; did you mean "${nearKey}"?` : ''}`);
  }

  const raw: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(properties)) {
    const fromEnv = env[envName(key)];
    if (fromEnv !== undefined && fromEnv !== '') raw[key] = coerce(schemaKind(schema), fromEnv);
    else if (fromFile[key] !== undefined) raw[key] = fromFile[key];
    else if ('default' in schema) raw[key] = schema.default;
  }

  for (const error of Value.Errors(ConfigSchema, raw)) {
    const key = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    if (!key) continue;
    problems.push(`${envName(key)}: ${problemText(error, properties[key])} (got ${shownValue(key, raw[key])})`);
  }
  const services = typeof raw.services === 'string' ? parseServices(raw.services) : [];
  if (typeof raw.services === 'string' && typeof services === 'string') {
    problems.push(`SERVICES: ${services} (got ${JSON.stringify(raw.services)})`);
  }
  if (problems.length > 0 || typeof services === 'string') throw new ConfigError([...new Set(problems)]);
  return { settings: raw as Settings, services };
}

/** The services named, in their mounting order; or the problem with the list. */
function parseServices(text: string): ServiceName[] | string {
  const names = text.split(',').map((s) => s.trim().toLowerCase());
  const allowed = `use "all" or a comma list of ${ALL_SERVICES.join(', ')}`;
  const unknown = names.filter((name) => name !== 'all' && !(ALL_SERVICES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    const what = unknown.map((name) => (name === '' ? 'an empty name' : `"${name}"`)).join(', ');
    return `unknown service ${what}; ${allowed}`;
  }
  if (names.includes('all')) return names.length === 1 ? [...ALL_SERVICES] : `"all" cannot be combined with other services; ${allowed}`;
  return ALL_SERVICES.filter((name) => names.includes(name));
}

/** Settings that need another one set with them, or whose text must parse: S3, SMTP, license keys. */
export function checkDependentSettings(settings: Settings, problems: string[]): void {
  if (settings.fileStorage === 's3' && settings.s3Bucket === undefined) problems.push('S3_BUCKET: required when FILE_STORAGE is s3');
  if (settings.smtpUsername !== undefined && settings.smtpHost === undefined) {
    problems.push('SMTP_HOST: required when SMTP_USERNAME is set');
  }
  if (settings.licenseIssuerPublicKeys !== undefined) {
    try {
      parsePublicKeyList(settings.licenseIssuerPublicKeys);
    } catch (error) {
      problems.push(`LICENSE_ISSUER_PUBLIC_KEYS: ${(error as Error).message}`);
    }
  }
}

/** The address settings parsed: the IP rules (or the cloud defaults) and the address lists. */
export function parseAddressSettings(
  settings: Settings,
  problems: string[],
): { ipRateLimitRules: readonly IpRule[]; ipRateLimitWhitelist: string[]; metricsAllowedAddresses: string[] } {
  const ipRules = settings.ipRateLimitRules === undefined ? { rules: CLOUD_IP_RULES, problems: [] } : parseIpRules(settings.ipRateLimitRules);
  for (const problem of ipRules.problems) problems.push(`IP_RATE_LIMIT_RULES: ${problem}`);
  const whitelist = parseIpList(settings.ipRateLimitWhitelist ?? '');
  for (const problem of whitelist.problems) problems.push(`IP_RATE_LIMIT_WHITELIST: ${problem}`);
  const metricsAddresses = parseIpList(settings.metricsAllowedAddresses ?? '');
  for (const problem of metricsAddresses.problems) problems.push(`METRICS_ALLOWED_ADDRESSES: ${problem}`);
  if (settings.metricsEnabled && settings.metricsToken === undefined && metricsAddresses.entries.length === 0) {
    problems.push('METRICS_ENABLED: set METRICS_TOKEN (a bearer token the scraper sends) or METRICS_ALLOWED_ADDRESSES (who may scrape), or both');
  }
  for (const problem of parseIpList(settings.adminAllowedIps ?? '').problems) problems.push(`ADMIN_ALLOWED_IPS: ${problem}`);
  return { ipRateLimitRules: ipRules.rules, ipRateLimitWhitelist: whitelist.entries, metricsAllowedAddresses: metricsAddresses.entries };
}

/**
 * A rejected value as a problem message may show it: a secret setting not at all, and a URL
 * without the password it may carry (a mistyped DATABASE_URL would otherwise put one in the log).
 */
function shownValue(key: string, value: unknown): string {
  if (isSecretSetting(key)) return '(hidden)';
  const text = JSON.stringify(value);
  return typeof value === 'string' ? text.replace(/(\/\/[^/:@\s]*):[^@/\s]*@/, '$1:(hidden)@') : text;
}

/** One setting's problem in words: the allowed values of an enum, the expected form of a pattern. */
function problemText(error: { keyword: string; message: string; params: Record<string, unknown> }, schema: TSchema | undefined): string {
  const allowed = error.params.allowedValues;
  if (error.keyword === 'enum' && Array.isArray(allowed)) return `must be one of ${allowed.join(', ')}`;
  const expected = schema ? (schema as Record<string, unknown>).expected : undefined;
  if (error.keyword === 'pattern' && typeof expected === 'string') return `must be ${expected}`;
  // The validator says "must be integer"; the operator reads a sentence.
  if (error.keyword === 'type') return `must be ${typeNames(error.params.type)}`;
  return error.message;
}

/** A type check's expected types with their article: "an integer", "a string or null". */
function typeNames(types: unknown): string {
  const list = (Array.isArray(types) ? types : String(types).split(',')).map((type) => String(type).trim());
  return list.map((type) => (type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`)).join(' or ');
}

/**
 * The settings of a `.env` file (KEY=value lines, as `.env.example` shows), or none when there
 * is no such file. The caller lays the real environment over them, so the environment wins.
 */
export function readEnvFile(path: string): Record<string, string | undefined> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError([`.env: cannot read ${path}: ${(error as Error).message}`]);
  }
  return parseEnv(text);
}
