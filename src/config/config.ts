import type { IpRule } from './rate-limit-settings.js';
import {
  checkFilesDir,
  defaultDatabaseUrl,
  defaultHashingConcurrency,
  identityUrlOf,
  publicUrlOf,
  resolveTlsHostnames,
  resolveTlsMode,
  resolveWebVaultDir,
  type TlsMode,
} from './derived.js';
import { checkEnvFileNames, checkProcessEnvNames } from './env-names.js';
import { checkDependentSettings, ConfigError, parseAddressSettings, readEnvFile, readSettings } from './load.js';
import type { ServiceName, Settings } from './settings.js';

/**
 * The configuration the rest of the server imports: the settings (settings.ts), read and checked
 * (load.ts), with the values derived from them (derived.ts). This module is the only place that
 * reads `process.env`.
 */
export { ConfigSchema, ALL_SERVICES, envName, isSecretSetting, describeSettings, type ServiceName } from './settings.js';
export { ConfigError, readEnvFile } from './load.js';
export { defaultHashingConcurrency, defaultDatabaseUrl, filesDirOf, webVaultDirOf, type TlsMode } from './derived.js';

export interface Config
  extends Omit<
    Settings,
    | 'services'
    | 'databaseUrl'
    | 'healthEnabled'
    | 'apiDocsEnabled'
    | 'publicUrl'
    | 'identityUrl'
    | 'tlsMode'
    | 'tlsHostnames'
    | 'webVaultDir'
    | 'ipRateLimiting'
    | 'ipRateLimitRules'
    | 'ipRateLimitWhitelist'
    | 'metricsAllowedAddresses'
    | 'passwordHashingConcurrency'
  > {
  /** Addresses and CIDR ranges that may read /metrics (empty: any, when a token is set). */
  metricsAllowedAddresses: string[];
  /** Whether the IP rules apply (cloud default, or rules configured). */
  ipRateLimiting: boolean;
  /** The IP rules in force: IP_RATE_LIMIT_RULES, or the cloud defaults. */
  ipRateLimitRules: readonly IpRule[];
  /** Addresses and CIDR ranges the IP rules never limit. */
  ipRateLimitWhitelist: string[];
  /** How HTTPS is served; `off` is plain HTTP. */
  tlsMode: TlsMode;
  /** TLS_MODE=self-signed: the names (DNS or IP) the generated server certificate must cover. */
  tlsHostnames: string[];
  identityUrl: string;
  services: readonly ServiceName[];
  /** True when the services are mounted under their prefixes (/api, /identity, ...). */
  servicePrefixes: boolean;
  databaseUrl: string;
  healthEnabled: boolean;
  apiDocsEnabled: boolean;
  publicUrl: string;
  selfHosted: boolean;
  /** Absolute path of the web vault folder, or null when none is configured or found. */
  webVaultDir: string | null;
  /** PASSWORD_HASHING_CONCURRENCY, or its default for this machine (defaultHashingConcurrency). */
  passwordHashingConcurrency: number;
}

/**
 * The configuration of `env`: every invalid setting is reported at once, as a ConfigError with a
 * line per problem. Settings are checked one by one first, then together, then what derives from them.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { settings, services } = readSettings(env);
  const problems: string[] = [];
  const tlsMode = resolveTlsMode(settings, problems);
  checkDependentSettings(settings, problems);
  const webVaultDir = resolveWebVaultDir(settings.webVaultDir, settings.dataDir, problems);
  checkFilesDir(settings, problems);
  const addresses = parseAddressSettings(settings, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const cloud = settings.deployment === 'cloud';
  const publicUrl = publicUrlOf(settings, tlsMode);
  const tlsHostnames = resolveTlsHostnames(settings, tlsMode, publicUrl, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...settings,
    tlsMode,
    tlsHostnames,
    services,
    servicePrefixes: services.length > 1,
    databaseUrl: settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir),
    healthEnabled: settings.healthEnabled ?? cloud,
    apiDocsEnabled: settings.apiDocsEnabled ?? (!cloud || settings.environment === 'development'),
    passwordHashingConcurrency: settings.passwordHashingConcurrency ?? defaultHashingConcurrency(),
    publicUrl,
    identityUrl: identityUrlOf(settings, services, publicUrl),
    installationId: settings.installationId?.toLowerCase(),
    selfHosted: !cloud,
    webVaultDir,
    ipRateLimiting: settings.ipRateLimiting ?? (cloud || settings.ipRateLimitRules !== undefined),
    ...addresses,
  };
}

/**
 * The program's settings: the environment, over a `.env` file in the working directory. An
 * unknown name in `.env` is refused like an unknown key of CONFIG_FILE; doubtful names are
 * warned about on `warn` (standard error), since the environment holds other programs' names too.
 */
export function loadProcessConfig(
  processEnv: NodeJS.ProcessEnv = process.env,
  envFile = '.env',
  warn: (line: string) => void = (line) => process.stderr.write(`Warning: ${line}\n`),
): Config {
  const { fileEnv, problems } = readCheckedEnvFile(processEnv, envFile, warn);
  let config: Config;
  try {
    config = loadConfig({ ...fileEnv, ...processEnv });
  } catch (error) {
    // Every problem at once: the unknown names first, since they explain a setting left at its default.
    if (error instanceof ConfigError && problems.length > 0) throw new ConfigError([...problems, ...error.problems]);
    throw error;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * The program's settings' sources: the environment over `.env`, for a command that checks only
 * the settings it needs (`strongroom web-vault install` is run to fix a folder loadConfig refuses).
 * The names in `.env` are checked as loadProcessConfig checks them, so that a typo is refused by
 * every command alike rather than leave this one writing where the server will not look.
 */
export function processSettingsEnv(
  processEnv: NodeJS.ProcessEnv = process.env,
  envFile = '.env',
  warn: (line: string) => void = (line) => process.stderr.write(`Warning: ${line}\n`),
): NodeJS.ProcessEnv {
  const { fileEnv, problems } = readCheckedEnvFile(processEnv, envFile, warn);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...fileEnv, ...processEnv };
}

/** `.env` with its names checked: the doubtful ones are warned about, the unknown ones answered. */
function readCheckedEnvFile(
  processEnv: NodeJS.ProcessEnv,
  envFile: string,
  warn: (line: string) => void,
): { fileEnv: Record<string, string | undefined>; problems: string[] } {
  const fileEnv = readEnvFile(envFile);
  const { problems, warnings } = checkEnvFileNames(fileEnv, processEnv);
  for (const line of [...warnings, ...checkProcessEnvNames(processEnv, Object.keys(fileEnv))]) warn(line);
  return { fileEnv, problems };
}
