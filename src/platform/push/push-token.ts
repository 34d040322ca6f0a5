/**
 * What a phone's push token (APNs or FCM) may be, wherever one arrives (the token routes, a
 * login's `DevicePushToken`): printable ASCII, at most the official column's 255 characters.
 */
export const PUSH_TOKEN_MAX_LENGTH = 255;
export const PUSH_TOKEN_PATTERN = '^[\\x20-\\x7e]*$';
const PUSH_TOKEN = new RegExp(PUSH_TOKEN_PATTERN);

/** The token trimmed, or null when it is empty or not a token. */
export function usablePushToken(raw: string | null | undefined): string | null {
  const token = raw?.trim();
  return token && token.length <= PUSH_TOKEN_MAX_LENGTH && PUSH_TOKEN.test(token) ? token : null;
}
