import type { FastifyRequest } from 'fastify';

/** What an audit event or a device record needs to know about the caller's client. */
export interface ClientContext {
  ipAddress: string | null;
  deviceType: number | null;
  deviceIdentifier: string | null;
  clientVersion: string | null;
}

export function clientContext(request: FastifyRequest): ClientContext {
  const deviceType = Number.parseInt(String(request.headers['device-type'] ?? ''), 10);
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' && value.length > 0 ? value : null;
  };
  return {
    ipAddress: request.ip ?? null,
    deviceType: Number.isInteger(deviceType) && deviceType >= 0 && deviceType < 256 ? deviceType : null,
    deviceIdentifier: header('device-identifier'),
    clientVersion: header('bitwarden-client-version'),
  };
}
