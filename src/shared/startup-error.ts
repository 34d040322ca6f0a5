/**
 * A reason the server cannot start that the operator can fix: it names the setting and the
 * cause, and the program prints it as one line and exits with code 2, without a stack trace.
 */
export class StartupError extends Error {
  constructor(
    readonly setting: string,
    readonly reason: string,
  ) {
    super(`${setting}: ${reason}`);
    this.name = 'StartupError';
  }
}

/**
 * A command line the operator can fix (an unknown subcommand, a missing argument): an operator
 * command prints its message and exits with code 2.
 */
export class UsageError extends Error {}

/** The text of a system error without Node's "ECODE:" prefixes, and for AggregateErrors their first. */
export function causeOf(error: unknown): string {
  const first = error instanceof AggregateError && error.errors.length > 0 ? (error.errors[0] as unknown) : error;
  const code = (first as NodeJS.ErrnoException).code;
  const described = code ? SYSTEM_ERRORS[code] : undefined;
  if (described) return described;
  if (first instanceof Error) return first.message || code || first.name;
  return String(first);
}

const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'it is a directory, not a file',
  EEXIST: 'a file of that name is in the way',
  EROFS: 'the file system is read-only',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRINUSE: 'already in use by another program',
  EADDRNOTAVAIL: 'not an address of this machine',
};
