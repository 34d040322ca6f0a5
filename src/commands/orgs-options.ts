import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { UserSession } from './client/session.js';
import { emailOption as sharedEmailOption, usageError, type OptionSpecs, type OptionValues } from './options.js';
import type { CommandIo } from './users.js';

// What the `strongroom orgs` subcommands share: their dependencies, context and option readers.

export interface OrgsCommandDeps {
  config: Config;
  io: CommandIo;
  /** The instance's database, to sign a license with; by default the command opens DATABASE_URL when it must. */
  database?: Database;
  clock?: Clock;
}

/** What a subcommand gets: its options, a way to log in as the user it names, and where to print. */
export interface OrgsContext {
  values: OptionValues;
  /** The arguments after the options, for the subcommands that take any. */
  positionals: string[];
  deps: OrgsCommandDeps;
  login: (email: string) => Promise<UserSession>;
  print: (text: string, json: unknown) => void;
}

export interface OrgsSubcommand {
  options: OptionSpecs;
  /** Whether it takes arguments besides its options (`accept` takes the invitation link). */
  positionals?: boolean;
  run(context: OrgsContext): Promise<number>;
}

export const usage = (message: string) => usageError('orgs', message);

/** A required email option, normalised as the server stores it. */
export function emailOption(values: OptionValues, name: string): string {
  return sharedEmailOption('orgs', values, name);
}
