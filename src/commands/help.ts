/**
 * `strongroom --help`, `help <command>` and the suggestion for a mistyped command. The table of
 * commands lives in cli.ts (COMMAND_HELP); this module only formats it, so that adding a command
 * touches one place.
 */
import { editDistance } from '../shared/edit-distance.js';

export const SERVE_USAGE = `Usage:
  strongroom serve
  strongroom
      Runs the server in this process: brings the database schema up to date, then serves the
      API, the identity service and the admin console on HOST:PORT (settings: environment, .env
      in the working folder, or CONFIG_FILE; see .env.example and docs/configuration.md).
      SIGTERM or SIGINT stop it gracefully: requests in flight finish within
      SHUTDOWN_TIMEOUT_SECONDS, then the database is closed.

Exit codes: 0 stopped by a signal, 1 an unexpected error, 2 a setting, the database or the port
  is wrong (each problem printed on its own line).`;

export const MIGRATE_USAGE = `Usage:
  strongroom migrate
      Brings the database schema (DATABASE_URL, or the SQLite file in DATA_DIR) up to date and
      exits; the server does the same when it starts. Changes nothing when the database already
      holds migrations of a newer release, and says so.

Exit codes: 0 done, 1 an unexpected error, 2 the database cannot be opened or a setting is wrong.`;

/** One row of `strongroom --help`. */
export interface CommandHelp {
  /** One line, under 60 characters, no final period. */
  summary: string;
  /** The command's usage text, loaded only when asked for so that `--help` loads no command. */
  usage: () => Promise<string>;
}

/** `strongroom --help`: every command with its summary. */
export function overview(commands: Readonly<Record<string, CommandHelp>>, version: string): string {
  const names = Object.keys(commands);
  const width = Math.max(...names.map((name) => name.length));
  return [
    `Strongroom ${version}: a self-hosted Bitwarden-compatible server.`,
    '',
    'Usage: strongroom <command> [arguments]   (no command: serve)',
    '',
    'Commands:',
    ...names.map((name) => `  ${name.padEnd(width)}  ${commands[name]!.summary}`),
    `  ${'help'.padEnd(width)}  Prints this list, or a command's usage: strongroom help <command>`,
    `  ${'version'.padEnd(width)}  Prints the version (also --version, -v)`,
    '',
    'Settings come from the environment, .env in the working folder, or CONFIG_FILE (.env.example).',
    'Documentation: docs/command-line.md.',
    '',
  ].join('\n');
}

/**
 * The known name closest to what was typed, by edit distance, when it is close enough to be a
 * slip (at most a third of its letters, and at least one, differ); otherwise undefined.
 */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(typed.toLowerCase(), name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best !== undefined && best.distance <= Math.max(1, Math.floor(best.name.length / 3)) ? best.name : undefined;
}
