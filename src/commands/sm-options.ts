import { isGuid } from '../http/ids.js';
import { CommandFailure, ExitCode, emailOption, parseOptions, text, usageError, type OptionSpecs, type OptionValues } from './options.js';

/** The command line of `strongroom sm …`, checked before anything is asked or sent. */

export const smUsageError = (message: string) => usageError('sm', message);

/** The options of `strongroom sm`; a secret's value, like the password, is refused there by name. */
export function parseSmArgs(args: string[], options: OptionSpecs): OptionValues {
  return parseOptions('sm', args, options, { secrets: { '--value': 'A secret value' } }).values;
}

export function requiredText(values: OptionValues, name: string): string {
  const value = text(values, name);
  if (value === undefined || value.trim() === '') throw smUsageError(`--${name} is required.`);
  return value;
}

export function emailOf(values: OptionValues): string {
  requiredText(values, 'email');
  return emailOption('sm', values);
}

/** An id option: required, a GUID, lower-cased as the server answers ids. */
export function guidOf(values: OptionValues, name: string): string {
  const id = requiredText(values, name);
  if (!isGuid(id)) throw new CommandFailure(`--${name}: expected an id (a GUID), got "${id}".`, ExitCode.Usage);
  return id.toLowerCase();
}

/**
 * A name the command encrypts before sending: the official web app's limit on what a user types
 * is far below the server's on the ciphertext, so the name is checked here, by its length.
 */
export function nameOf(values: OptionValues, name: string, fallback?: string): string {
  const value = (text(values, name) ?? fallback)?.trim();
  if (value === undefined || value === '') throw smUsageError(`--${name} is required.`);
  if ([...value].length > MAX_NAME_LENGTH) throw new CommandFailure(`--${name}: at most ${MAX_NAME_LENGTH} characters.`, ExitCode.Usage);
  return value;
}

/** At most this many characters in a project, machine account or token name. */
export const MAX_NAME_LENGTH = 200;

const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest lifetime `--expires <days>` takes: ten years. */
export const MAX_EXPIRY_DAYS = 3650;

/**
 * `--expires`: `never`, a number of days from now (1 to 3650), or a date in the future: a bare
 * `YYYY-MM-DD` is the start of that day in UTC, a date-time with its zone is taken as written.
 * Absent, the token never expires, as the web app's default.
 */
export function expiryOf(values: OptionValues, now: Date): Date | null {
  const value = text(values, 'expires')?.trim();
  if (value === undefined || value === 'never') return null;
  if (/^\d{1,9}$/.test(value)) {
    const days = Number(value);
    if (days < 1 || days > MAX_EXPIRY_DAYS) throw new CommandFailure(`--expires: a number of days from 1 to ${MAX_EXPIRY_DAYS}, got "${value}".`, ExitCode.Usage);
    return new Date(now.getTime() + days * DAY_MS);
  }
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const at = dateOnly || dateTime ? new Date(dateOnly ? `${value}T00:00:00Z` : value) : null;
  // Date accepts 2026-02-30 as 2 March; a date that does not read back as written is refused.
  if (at === null || Number.isNaN(at.getTime()) || (dateOnly && at.toISOString().slice(0, 10) !== value)) {
    throw new CommandFailure(`--expires: expected "never", a number of days or a date (YYYY-MM-DD or an ISO date-time with its zone), got "${value}".`, ExitCode.Usage);
  }
  if (at.getTime() <= now.getTime()) throw new CommandFailure(`--expires: "${value}" is not in the future.`, ExitCode.Usage);
  return at;
}

/**
 * `--read` / `--write` of `sm access`: write includes read, as the web app's "can read, write";
 * neither means read only; `--revoke` removes the grant and takes neither.
 */
export function rightsOf(values: OptionValues): { read: boolean; write: boolean } | 'revoke' {
  if (values.revoke) {
    if (values.read || values.write) throw smUsageError('--revoke takes neither --read nor --write.');
    return 'revoke';
  }
  return { read: true, write: values.write === true };
}
