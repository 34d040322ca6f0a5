import type { FastifyRequest } from 'fastify';
import { currentUser } from './access.js';

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

/**
 * Who acts, from which client, logging where: the first argument of every use case. `Who` is
 * what the feature needs to know of the actor (a user id, an organization membership, the
 * calling organization, a Secrets Manager principal), spread beside the client and the log so
 * every service reads `caller.client` and `caller.log` the same way (docs/architecture.md,
 * "Calling a use case").
 */
export type Caller<Who extends object> = Readonly<Who> & {
  readonly client: ClientContext;
  readonly log: CallerLog;
};

/** The slice of the request's logger a use case writes to; a command passes one that drops the lines. */
export interface CallerLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** A signed-in user acting on their own account, vault, Sends or devices. */
export type UserCaller = Caller<{ userId: string }>;

/** The caller of a request, acting as `who`. */
export function callerOf<Who extends object>(request: FastifyRequest, who: Who): Caller<Who> {
  return { ...who, client: clientContext(request), log: request.log };
}

/** The signed-in user of a request (401 when the token is not a user's). */
export function userCaller(request: FastifyRequest): UserCaller {
  return callerOf(request, { userId: currentUser(request).userId });
}

/** Nobody signed in (registration, log in, a Send's recipient): the use case still knows the client and the log. */
export type AnonymousCaller = Caller<object>;

/**
 * The server's operator (the admin console, a `strongroom` command): no account here, known by
 * the address of the request, if any.
 */
export type OperatorCaller = Caller<{ operator: true }>;

export function anonymousCaller(request: FastifyRequest): AnonymousCaller {
  return callerOf(request, {});
}

/** The client of a use case no request started (an operator command, a scheduled job). */
export const NO_CLIENT: ClientContext = Object.freeze({ ipAddress: null, deviceType: null, deviceIdentifier: null, clientVersion: null });

/** A log that drops the lines: for a caller whose output is its own (an operator command). */
export const SILENT_LOG: CallerLog = Object.freeze({ info: () => undefined, warn: () => undefined });
