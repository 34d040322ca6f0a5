import { Type } from 'typebox';

/** Password hashing, token lifetimes and the throttle on failed logins. */
export const loginSettings = {
  passwordIterations: Type.Integer({
    minimum: 100000,
    maximum: 10000000,
    default: 600000,
    description: 'PBKDF2-SHA256 iterations for the server-side re-hash of master password hashes.',
  }),
  passwordHashingConcurrency: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 64,
      description:
        "Password hashes (PBKDF2, on registration, login and password checks) computed at once. They run on Node's thread pool (UV_THREADPOOL_SIZE, 4 by default), which token checks and file access share: keep this below it. Defaults to one fewer than the CPU cores, at most 2 (1 on a 2-core machine), so that a burst of logins leaves a core to every other request.",
    }),
  ),
  passwordHashingQueue: Type.Integer({
    minimum: 0,
    maximum: 100000,
    default: 64,
    description: 'Password hashes waiting their turn; past this a request that needs one is refused with 429 and Retry-After, so hashing can never starve requests that need none.',
  }),
  accessTokenLifetimeSeconds: Type.Integer({
    minimum: 60,
    maximum: 86400,
    default: 3600,
    description: 'Lifetime of access tokens issued by the identity service.',
  }),
  refreshTokenLifetimeDays: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 30,
    description: 'Sliding lifetime of refresh tokens.',
  }),
  loginAttemptsPerAccount: Type.Integer({
    minimum: 1,
    default: 10,
    description:
      'Failed password logins allowed for one account from one client address within LOGIN_ATTEMPT_WINDOW_SECONDS; past it that address must wait (one more attempt comes back every window / this count).',
  }),
  loginAttemptsPerAccountTotal: Type.Integer({
    minimum: 1,
    default: 100,
    description:
      'Failed password logins allowed for one account from all addresses together within LOGIN_ATTEMPT_WINDOW_SECONDS: the much higher ceiling against guessing from many addresses, set high so that a stranger cannot lock the owner out.',
  }),
  loginAttemptsPerIp: Type.Integer({
    minimum: 1,
    default: 50,
    description: 'Failed password logins allowed per client address, across accounts, within LOGIN_ATTEMPT_WINDOW_SECONDS.',
  }),
  loginAttemptWindowSeconds: Type.Integer({
    minimum: 1,
    default: 900,
    description: 'Window over which failed logins are counted (see docs/rate-limits.md).',
  }),
};
