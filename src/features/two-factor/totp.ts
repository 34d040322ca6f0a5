/** otplib (several MB of crypto plugins), loaded when an authenticator is first set up or checked. */
const otplib = () => import('otplib');

/** RFC 6238 as the official clients and authenticator apps use it: SHA-1, 30 s, 6 digits. */
const PERIOD = 30;

/** A new authenticator key: 20 random bytes in Base32 (32 characters), as the official server makes them. */
export async function newAuthenticatorKey(): Promise<string> {
  const { generateSecret } = await otplib();
  return generateSecret({ length: 20 });
}

export function isAuthenticatorKey(key: string): boolean {
  return /^[A-Z2-7]{16,128}=*$/i.test(key);
}

/**
 * The time step a 6-digit code belongs to, within one step either side of `now`, or null.
 * The caller records the step, so a code (or an older one) works once.
 */
export async function totpStep(key: string, code: string, now: Date, after: number | null): Promise<number | null> {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token) || !isAuthenticatorKey(key)) return null;
  const { verify } = await otplib();
  const result = await verify({
    secret: key.toUpperCase().replace(/=+$/, ''),
    token,
    period: PERIOD,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: PERIOD,
    ...(after !== null ? { afterTimeStep: after } : {}),
  });
  // The TOTP strategy's result carries the step; HOTP's (never used here) does not.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** The current code for a key (tests and the `bw` end-to-end test type it as a user would). */
export async function totpCode(key: string, now: Date): Promise<string> {
  const { generate } = await otplib();
  return generate({ secret: key.toUpperCase().replace(/=+$/, ''), period: PERIOD, epoch: Math.floor(now.getTime() / 1000) });
}
