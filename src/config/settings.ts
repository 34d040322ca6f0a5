import { Type, type Static, type TSchema } from 'typebox';
import { accountSettings } from './settings/accounts.js';
import { adminSettings } from './settings/admin.js';
import { fileSettings } from './settings/files.js';
import { iconSettings } from './settings/icons.js';
import { limitSettings } from './settings/limits.js';
import { loginSettings } from './settings/logins.js';
import { networkSettings } from './settings/network.js';
import { operationsSettings } from './settings/operations.js';
import { pushSettings } from './settings/push.js';
import { resourceSettings } from './settings/resources.js';
import { serverSettings } from './settings/server.js';
import { tracingSettings } from './settings/tracing.js';

/**
 * The one typed configuration schema. Every setting has a description and a safe default
 * (or is optional). The environment variable of a setting is its name in SCREAMING_SNAKE
 * case (`databaseUrl` -> `DATABASE_URL`); a JSON file named by `CONFIG_FILE` may carry the
 * same settings under their camelCase names, and the environment wins over the file.
 * The groups are spread in the order `.env.example` and the configuration reference list them.
 */
export const ConfigSchema = Type.Object({
  ...serverSettings,
  ...loginSettings,
  ...limitSettings,
  ...resourceSettings,
  ...networkSettings,
  ...operationsSettings,
  ...pushSettings,
  ...accountSettings,
  ...adminSettings,
  ...fileSettings,
  ...iconSettings,
  ...tracingSettings,
});

/** The settings as read and checked, before any value is derived from them. */
export type Settings = Static<typeof ConfigSchema>;

export type ServiceName = 'api' | 'identity' | 'events' | 'notifications';
export const ALL_SERVICES: readonly ServiceName[] = ['api', 'identity', 'events', 'notifications'];

export function envName(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

/**
 * Settings whose values are never shown (start-up errors, the admin console): those declared
 * `secret: true` in their schema. A declared flag rather than a pattern of names, which hid
 * ordinary numbers (PASSWORD_ITERATIONS) and missed keys (HIBP_API_KEY).
 */
export function isSecretSetting(key: string): boolean {
  const schema = (ConfigSchema.properties as Record<string, { secret?: unknown } | undefined>)[key];
  return schema?.secret === true;
}

/** The documented settings, for `.env.example` and the configuration reference. */
export function describeSettings(): { env: string; description: string; default?: string | number | boolean }[] {
  return Object.entries(ConfigSchema.properties as Record<string, TSchema>).map(([key, schema]) => {
    const s = schema as { description?: string; default?: string | number | boolean; enum?: unknown[] };
    const choices = s.enum ? ` One of: ${s.enum.join(', ')}.` : '';
    return { env: envName(key), description: `${s.description ?? ''}${choices}`, default: s.default };
  });
}
