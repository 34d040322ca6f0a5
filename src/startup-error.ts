/**
 * A reason the server cannot start that the operator can fix: the program prints its message
 * as one line and exits with status 2, like an invalid configuration.
 */
export class StartupError extends Error {
  constructor(
    /** The setting (environment variable) to look at, e.g. `DATA_DIR`. */
    readonly setting: string,
    cause: string,
  ) {
    super(`${setting}: ${cause}`);
    this.name = 'StartupError';
  }
}
