import Value from 'typebox/value';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import { Email } from '../http/schemas.js';
import { normalizeEmail } from '../platform/auth/kdf.js';
import type { Clock } from '../shared/clock.js';
import type { UserSession } from './client/session.js';
import { CommandFailure, ExitCode, type CommandIo } from './users.js';

// What the `strongroom orgs` subcommands share: their dependencies, context and option readers.

export interface OrgsCommandDeps {
  config: Config;
  io: CommandIo;
  /** The instance's database, to sign a license with; by default the command opens DATABASE_URL when it must. */
  database?: Database;
  clock?: Clock;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export type Options = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** What a subcommand gets: its options, a way to log in as the user it names, and where to print. */
export interface OrgsContext {
  values: Values;
  deps: OrgsCommandDeps;
  login: (email: string) => Promise<UserSession>;
  print: (text: string, json: unknown) => void;
}

export interface OrgsSubcommand {
  options: Options;
  run(context: OrgsContext): Promise<number>;
}

export const usage = (message: string) => new CommandFailure(`${message} See "strongroom orgs --help".`, ExitCode.Usage);

export function text(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A required email option, normalised as the server stores it. */
export function emailOption(values: Values, name: string): string {
  const email = text(values, name);
  if (email === undefined) throw usage(`--${name} is required.`);
  const normalized = normalizeEmail(email);
  if (!Value.Check(Email, normalized)) throw new CommandFailure(`--${name}: "${email}" is not an email address.`, ExitCode.Usage);
  return normalized;
}

