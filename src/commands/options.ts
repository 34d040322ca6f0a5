import util from 'node:util';
import Value from 'typebox/value';
import { Email } from '../http/schemas.js';
import { normalizeEmail } from '../platform/auth/kdf.js';
import { InputAborted } from '../shared/terminal-input.js';

// What the operator commands share to read their command line and end with an exit code, so that
// `strongroom users`, `orgs` and the others refuse the same mistakes with the same words.

/** Exit codes of the operator commands (docs/command-line.md). */
export const ExitCode = {
  Ok: 0,
  /** The operation's own rule said no (the email is taken, no such user, sole owner), or the operator did not confirm. */
  Refused: 1,
  /** A bad command line, bad input or bad configuration: nothing was attempted. */
  Usage: 2,
  /** The database could not be opened or reached. */
  DatabaseUnavailable: 3,
  /** The invitation was made but the mail server did not take it (the link is printed instead). */
  MailFailed: 4,
  /** Anything else: a bug. */
  Internal: 70,
} as const;

/** Ends the command with a one-line message and an exit code. */
export class CommandFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export type OptionSpecs = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** A usage error of `strongroom <command>`, pointing at its help. */
export function usageError(command: string, message: string): CommandFailure {
  return new CommandFailure(`${message} See "strongroom ${command} --help".`, ExitCode.Usage);
}

/**
 * The command's options (and `--help`/`-h`), and its positional arguments when it takes any.
 * Unknown options are usage errors. `secrets` names the command's own options that would carry
 * a secret (`--value` of `sm secrets create`), each with what it holds, to refuse as --password is.
 */
export function parseOptions(
  command: string,
  args: string[],
  options: OptionSpecs,
  { positionals = false, secrets = {} }: { positionals?: boolean; secrets?: Record<string, string> } = {},
): { values: OptionValues; positionals: string[] } {
  // A password on the command line is readable by every local user (ps, /proc) and stays in
  // shell history, so it is refused outright rather than reported as an unknown option.
  if (args.some((a) => a === '--password' || a.startsWith('--password=') || a === '-p')) {
    throw new CommandFailure(
      'The password is not accepted on the command line, where other users (ps) and the shell history can read it: type it at the prompt or pipe it on standard input.',
      ExitCode.Usage,
    );
  }
  for (const [flag, what] of Object.entries(secrets)) {
    if (args.some((a) => a === flag || a.startsWith(`${flag}=`))) {
      throw new CommandFailure(`${what} is not accepted on the command line, where other users (ps) and the shell history can read it: pipe it on standard input.`, ExitCode.Usage);
    }
  }
  try {
    const parsed = util.parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: positionals });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    // parseArgs sometimes adds a second line of advice; the first says what is wrong, in a
    // style of its own (single quotes, no full stop) that is put in the product's.
    const first = ((error as Error).message.split('\n')[0] ?? '').replace(/'([^']*)'/g, '"$1"');
    throw usageError(command, /[.!?]$/.test(first) ? first : `${first}.`);
  }
}

export function text(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A required email option, normalised as the server stores it. */
export function emailOption(command: string, values: OptionValues, name = 'email'): string {
  const email = text(values, name);
  if (email === undefined) throw usageError(command, `--${name} is required.`);
  const normalized = normalizeEmail(email);
  if (!Value.Check(Email, normalized)) throw new CommandFailure(`--${name}: "${email}" is not an email address.`, ExitCode.Usage);
  return normalized;
}

/**
 * The one line and exit code a command that talks to a server ends with on an error: its own
 * refusals as they are, an aborted prompt as a refusal, anything else as an internal error.
 */
export function failureOf(error: unknown): { message: string; code: number } {
  if (error instanceof CommandFailure) return { message: error.message, code: error.exitCode };
  if (error instanceof InputAborted) return { message: error.message, code: ExitCode.Refused };
  return { message: `Internal error: ${error instanceof Error ? error.message : String(error)}`, code: ExitCode.Internal };
}
