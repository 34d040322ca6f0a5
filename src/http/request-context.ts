import type { FastifyRequest } from 'fastify';

/** What an audit event or a device record needs to know about the caller's client. */
export interface ClientContext {
  ipAddress: string | null;
  deviceType: number | null;
  deviceIdentifier: string | null;
  clientVersion: string | null;
}

/**
 * The caller's client. The device identifier is the token's `device` claim when a user token
 * carries one, else the `Device-Identifier` header, as the official CurrentContext reads it;
 * pushes carry it as their ContextId so the acting device skips its own change.
 */
export function clientContext(request: FastifyRequest): ClientContext {
  const deviceType = Number.parseInt(String(request.headers['device-type'] ?? ''), 10);
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' && value.length > 0 ? value : null;
  };
  return {
    ipAddress: request.ip ?? null,
    deviceType: Number.isInteger(deviceType) && deviceType >= 0 && deviceType < 256 ? deviceType : null,
    deviceIdentifier: (request.principal?.kind === 'user' ? request.principal.deviceIdentifier : null) ?? header('device-identifier'),
    clientVersion: header('bitwarden-client-version'),
  };
}
