import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { decodeJwt } from 'jose';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Clock } from '../../shared/clock.js';
import type { Authenticator } from '../../http/access.js';
import {
  closeMessage,
  completionError,
  handshakeError,
  handshakeOk,
  invocation,
  parseHandshake,
  parseJson,
  parseMessagePack,
  PING,
  ProtocolError,
  type EncodedMessage,
  type Frame,
  type InboundMessage,
  type ProtocolName,
} from './hub-protocol.js';
import { PushType, type Push } from '../../platform/push/pushes.js';

export type HubLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error' | 'debug'>;

export interface HubSettings {
  /** A SignalR Ping goes out on a connection that sent nothing else for this long. */
  keepAliveSeconds: number;
  /** The `Heartbeat` invocation to every `/hub` connection, as the official server sends it. */
  heartbeatSeconds: number;
  maxConnectionsPerUser: number;
  maxConnectionsPerIp: number;
  /** A connection whose unsent bytes pass this is dropped: a slow reader never holds others up. */
  maxBufferedBytes: number;
  /** Client IPs from X-Forwarded-For (the server's TRUST_PROXY). */
  trustProxy: boolean;
}

/** Inbound frames are tiny (handshake, pings, Close); the official hub caps them at 4 KB too. */
export const MAX_INBOUND_FRAME_BYTES = 4096;
/** As ASP.NET Core: the handshake must come within 15 s, and a client silent for 30 s is gone. */
const HANDSHAKE_TIMEOUT_MS = 15_000;
const CLIENT_TIMEOUT_MS = 30_000;
const HEARTBEAT_SLICE = 500;

/** The official method names (notifications.md §1.2, pitfall P7; the misspelling is the official one). */
export const HUB_METHODS = { receive: 'ReceiveMessage', heartbeat: 'Heartbeat', authRequestResponse: 'AuthRequestResponseRecieved' } as const;

type HubKind = 'hub' | 'anonymous';

interface Connection {
  readonly ws: WebSocket;
  readonly kind: HubKind;
  readonly ip: string;
  /** The user (`/hub`) or the auth request (`/anonymous-hub`) the connection belongs to. */
  readonly owner: string;
  /** When the access token the connection was opened with expires (ms, on the server's clock); never for `/anonymous-hub`. */
  readonly expiresAt: number;
  protocol: ProtocolName | null;
  handshake: Buffer | null;
  readonly openedAt: number;
  /** Up to a third of the keep-alive interval: how much earlier than the others this connection's ping is due. */
  readonly pingLead: number;
  lastSent: number;
  lastReceived: number;
}

/** The users an organization's pushes go to: its confirmed members, read when the push is delivered. */
export type OrganizationMembers = (organizationId: string) => Promise<string[]>;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

function refuse(socket: Duplex, status: number): void {
  if (socket.writable) {
    socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }
  setTimeout(() => socket.destroy(), 1000).unref();
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A query parameter by name, ignoring case as ASP.NET Core does (the apps send `Token`). */
function queryParam(url: URL, name: string): string | null {
  const wanted = name.toLowerCase();
  for (const [key, value] of url.searchParams) if (key.toLowerCase() === wanted) return value;
  return null;
}

function bearer(request: IncomingMessage, url: URL): string | null {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (match?.[1]) return match[1];
  }
  return queryParam(url, 'access_token');
}

function normalPath(path: string): string {
  return path.toLowerCase().replace(/\/+$/, '');
}

function add<K>(map: Map<K, Set<Connection>>, key: K, connection: Connection): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(connection);
}

function remove<K>(map: Map<K, Set<Connection>>, key: K, connection: Connection): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(connection);
  if (set.size === 0) map.delete(key);
}

/**
 * The SignalR hub: WebSocket connections to `/hub` (a user's apps, by bearer token) and
 * `/anonymous-hub` (a device waiting for its login request to be approved, by auth-request
 * id), and delivery of pushes to the connections of their target on this instance.
 */
export function createHub(deps: { settings: HubSettings; authenticate: Authenticator; members: OrganizationMembers; clock: Clock; log: () => HubLog }) {
  const { settings } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INBOUND_FRAME_BYTES, perMessageDeflate: false, clientTracking: false });
  const connections = new Set<Connection>();
  const byUser = new Map<string, Set<Connection>>();
  const byAuthRequest = new Map<string, Set<Connection>>();
  const perIp = new Map<string, number>();
  /** Upgrades between their first byte and the open socket, counted against the limits. */
  const pendingPerUser = new Map<string, number>();
  let closing = false;
  let timers: NodeJS.Timeout[] = [];

  function clientIp(request: IncomingMessage): string {
    if (settings.trustProxy) {
      const forwarded = request.headers['x-forwarded-for'];
      const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
      if (first) return first;
    }
    return request.socket.remoteAddress ?? 'unknown';
  }

  function send(connection: Connection, frame: Frame, now = Date.now()): void {
    const { ws } = connection;
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > settings.maxBufferedBytes) {
      deps.log().warn({ hub: connection.kind, bufferedBytes: ws.bufferedAmount }, 'notifications: dropping a connection that does not read its pushes');
      ws.terminate();
      return;
    }
    ws.send(frame.data, { binary: frame.binary });
    connection.lastSent = now;
  }

  function sendMessage(connection: Connection, message: EncodedMessage, now?: number): void {
    if (connection.protocol) send(connection, message[connection.protocol], now);
  }

  /** Sends a Close message, then closes the WebSocket normally (1000). */
  function close(connection: Connection, message: EncodedMessage): void {
    if (connection.protocol) sendMessage(connection, message);
    if (connection.ws.readyState === WebSocket.OPEN) connection.ws.close(1000);
  }

  function join(connection: Connection): void {
    if (connection.kind === 'anonymous') add(byAuthRequest, connection.owner, connection);
  }

  function forget(connection: Connection): void {
    if (!connections.delete(connection)) return;
    if (connection.kind === 'anonymous') remove(byAuthRequest, connection.owner, connection);
    else remove(byUser, connection.owner, connection);
    const count = (perIp.get(connection.ip) ?? 1) - 1;
    if (count > 0) perIp.set(connection.ip, count);
    else perIp.delete(connection.ip);
  }

  function onInbound(connection: Connection, data: RawData, isBinary: boolean): void {
    connection.lastReceived = Date.now();
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (!connection.protocol) {
      const buffered = connection.handshake ? Buffer.concat([connection.handshake, bytes]) : bytes;
      if (buffered.length > MAX_INBOUND_FRAME_BYTES) {
        connection.ws.close(1009);
        return;
      }
      const result = parseHandshake(buffered);
      if (!result) {
        connection.handshake = buffered;
        return;
      }
      connection.handshake = null;
      if (!result.protocol) {
        const frame = handshakeError(result.error ?? 'Handshake failed.');
        connection.ws.send(frame.data, { binary: frame.binary });
        connection.ws.close(1000);
        return;
      }
      connection.protocol = result.protocol;
      send(connection, handshakeOk(result.protocol));
      join(connection);
      if (result.rest.length === 0) return;
      handleMessages(connection, Buffer.from(result.rest), result.protocol === 'messagepack');
      return;
    }
    handleMessages(connection, bytes, isBinary);
  }

  function handleMessages(connection: Connection, bytes: Buffer, isBinary: boolean): void {
    let messages: InboundMessage[];
    try {
      // A MessagePack connection sends binary frames after the handshake, a JSON one text frames.
      if (connection.protocol === 'messagepack') {
        if (!isBinary) throw new ProtocolError('a text frame on a MessagePack connection');
        messages = parseMessagePack(bytes);
      } else {
        messages = parseJson(bytes.toString('utf8'));
      }
    } catch (error) {
      deps.log().debug({ hub: connection.kind, reason: (error as Error).message }, 'notifications: closing a connection that sent an invalid message');
      close(connection, closeMessage('Connection closed with an error.'));
      return;
    }
    for (const message of messages) {
      if (message.type === 'close') {
        connection.ws.close(1000);
        return;
      }
      if (message.type === 'invocation' && message.invocationId !== null && connection.protocol) {
        send(connection, completionError(connection.protocol, message.invocationId, 'The hub has no methods that clients can invoke.'));
      }
    }
  }

  function open(ws: WebSocket, init: Omit<Connection, 'ws' | 'protocol' | 'handshake' | 'openedAt' | 'pingLead' | 'lastSent' | 'lastReceived'>): void {
    const now = Date.now();
    const pingLead = Math.floor((Math.random() * keepAliveMs) / 3);
    const connection: Connection = { ws, ...init, protocol: null, handshake: null, openedAt: now, pingLead, lastSent: now, lastReceived: now };
    connections.add(connection);
    if (connection.kind === 'hub') add(byUser, connection.owner, connection);
    perIp.set(connection.ip, (perIp.get(connection.ip) ?? 0) + 1);
    ws.on('message', (data, isBinary) => onInbound(connection, data, isBinary));
    ws.on('close', () => forget(connection));
    ws.on('error', (error) => {
      deps.log().debug({ hub: connection.kind, err: error }, 'notifications: connection error');
      forget(connection);
    });
  }

  async function admit(
    request: IncomingMessage,
    kind: HubKind,
    url: URL,
    ip: string,
    reserve: (userId: string) => void,
  ): Promise<{ owner: string; expiresAt: number }> {
    if (closing) throw new Refusal(503, 'shutting down');
    // This upgrade is already counted in perIp (see onUpgrade).
    if ((perIp.get(ip) ?? 0) > settings.maxConnectionsPerIp) throw new Refusal(429, 'too many connections from this address');
    if (kind === 'anonymous') {
      const token = queryParam(url, 'Token');
      if (!token || !GUID.test(token)) throw new Refusal(400, 'the Token query parameter must be an auth request id');
      return { owner: token.toLowerCase(), expiresAt: Infinity };
    }
    const token = bearer(request, url);
    if (!token) throw new Refusal(401, 'no access token');
    const principal = await deps.authenticate(token);
    // The official hub's "Application" policy: a user token from a client login, scope api.
    if (
      principal?.kind !== 'user' ||
      !principal.scopes.includes('api') ||
      !principal.amr.some((amr) => amr === 'Application' || amr === 'external')
    ) {
      throw new Refusal(401, 'not a valid user access token');
    }
    const open = (byUser.get(principal.userId)?.size ?? 0) + (pendingPerUser.get(principal.userId) ?? 0);
    if (open >= settings.maxConnectionsPerUser) throw new Refusal(429, 'too many connections for this user');
    // Counted from here until the socket opens, so upgrades in flight together cannot pass the cap.
    reserve(principal.userId);
    // The token verified, so it has its `exp` (the signing keys require one).
    const { exp } = decodeJwt(token);
    if (typeof exp !== 'number') throw new Refusal(401, 'an access token without expiry');
    return { owner: principal.userId, expiresAt: exp * 1000 };
  }

  function onUpgrade(paths: { hub: string; anonymousHub: string }, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://hub.invalid');
    } catch {
      refuse(socket, 400);
      return;
    }
    const path = normalPath(url.pathname);
    const kind: HubKind | null = path === paths.hub ? 'hub' : path === paths.anonymousHub ? 'anonymous' : null;
    if (!kind) {
      refuse(socket, 404);
      return;
    }
    const ip = clientIp(request);
    // Counted while the token is checked, so a burst of upgrades cannot pass the per-IP cap.
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    let reservedUser: string | null = null;
    const reserve = (userId: string) => {
      reservedUser = userId;
      pendingPerUser.set(userId, (pendingPerUser.get(userId) ?? 0) + 1);
    };
    admit(request, kind, url, ip, reserve)
      .then(({ owner, expiresAt }) => {
        release();
        if (closing) throw new Refusal(503, 'shutting down');
        wss.handleUpgrade(request, socket, head, (ws) => open(ws, { kind, ip, owner, expiresAt }));
      })
      .catch((error: unknown) => {
        release();
        if (error instanceof Refusal) {
          deps.log().info({ hub: kind, status: error.status, reason: error.reason, ip }, 'notifications: connection refused');
          refuse(socket, error.status);
          return;
        }
        deps.log().error({ err: error, hub: kind }, 'notifications: could not admit a connection');
        refuse(socket, 503);
      })
      .finally(() => {
        if (reservedUser === null) return;
        const count = (pendingPerUser.get(reservedUser) ?? 1) - 1;
        if (count > 0) pendingPerUser.set(reservedUser, count);
        else pendingPerUser.delete(reservedUser);
      });
    let released = false;
    function release(): void {
      if (released) return;
      released = true;
      const count = (perIp.get(ip) ?? 1) - 1;
      if (count > 0) perIp.set(ip, count);
      else perIp.delete(ip);
    }
  }

  const keepAliveMs = settings.keepAliveSeconds * 1000;
  const TOKEN_EXPIRED = closeMessage('The access token expired.', true);
  /** How often the sweep runs: often enough that pings due at different moments go out at different moments. */
  const sweepMs = Math.min(1000, keepAliveMs / 3);

  /**
   * Pings the connections that have been quiet for nearly the keep-alive interval, and closes
   * those that timed out or whose access token expired. Each connection's ping is due a little
   * earlier by its own random `pingLead`, so thousands of connections opened together (after a
   * restart) do not all get their pings in the same tick and hold up the pushes behind them.
   */
  function sweep(): void {
    const now = Date.now();
    // Token expiry is on the server's clock, the one that verifies tokens.
    const tokenNow = deps.clock.now().getTime();
    for (const connection of connections) {
      if (!connection.protocol) {
        if (now - connection.openedAt > HANDSHAKE_TIMEOUT_MS) connection.ws.terminate();
        continue;
      }
      if (tokenNow >= connection.expiresAt) {
        // Reconnect allowed: a client that reconnects by itself asks its accessTokenFactory for a fresh token.
        close(connection, TOKEN_EXPIRED);
        continue;
      }
      if (now - connection.lastReceived > CLIENT_TIMEOUT_MS) {
        close(connection, closeMessage('Server timeout elapsed without receiving a message from the client.'));
        continue;
      }
      if (now - connection.lastSent >= keepAliveMs - sweepMs - connection.pingLead) sendMessage(connection, PING, now);
    }
  }

  const HEARTBEAT = invocation(HUB_METHODS.heartbeat, []);
  /** Organization pushes, one after the other, so that they arrive in the order they were sent. */
  let organizationDeliveries: Promise<void> = Promise.resolve();

  /**
   * Writes an organization's push to the connections of its confirmed members, read from the
   * database now rather than at connect time: a member removed or revoked (or whose organization
   * was deleted) stops getting them at once, on every instance, as all read the same database.
   */
  function deliverToOrganization(organizationId: string, envelope: Record<string, unknown>): void {
    if (byUser.size === 0) return;
    const message = invocation(HUB_METHODS.receive, [envelope]);
    organizationDeliveries = organizationDeliveries
      .then(async () => {
        if (closing) return;
        const members = await deps.members(organizationId);
        const now = Date.now();
        for (const userId of members) for (const connection of byUser.get(userId) ?? []) sendMessage(connection, message, now);
      })
      .catch((error: unknown) => deps.log().error({ err: error }, "notifications: an organization's push was dropped: its members could not be read"));
  }

  /** `Heartbeat` to every /hub connection, a slice per turn of the event loop so that pushes are not queued behind all of them. */
  function heartbeat(): void {
    const targets = [...connections].filter((connection) => connection.kind === 'hub');
    const slice = (from: number) => {
      const now = Date.now();
      for (const connection of targets.slice(from, from + HEARTBEAT_SLICE)) sendMessage(connection, HEARTBEAT, now);
      if (from + HEARTBEAT_SLICE < targets.length) setImmediate(() => slice(from + HEARTBEAT_SLICE));
    };
    slice(0);
  }

  return {
    /** Serves the two hub paths on the server's WebSocket upgrades (any other upgrade path gets 404). */
    attach(server: Server, paths: { hub: string; anonymousHub: string }): void {
      const normal = { hub: normalPath(paths.hub), anonymousHub: normalPath(paths.anonymousHub) };
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => onUpgrade(normal, request, socket, head));
      timers = [setInterval(sweep, sweepMs), setInterval(heartbeat, settings.heartbeatSeconds * 1000)];
      for (const timer of timers) timer.unref();
    },

    /** Writes a push to this instance's connections of its target. */
    deliver(push: Push): void {
      const target = push.target;
      const envelope = { Type: push.type, Payload: push.payload, ContextId: push.contextId };
      if ('organization' in target) {
        deliverToOrganization(target.organization, envelope);
        return;
      }
      const [set, method] =
        'user' in target ? [byUser.get(target.user), HUB_METHODS.receive] : [byAuthRequest.get(target.authRequest.toLowerCase()), HUB_METHODS.authRequestResponse];
      if (!set || set.size === 0) return;
      const message = invocation(method, [envelope]);
      const now = Date.now();
      const targets = [...set];
      for (const connection of targets) sendMessage(connection, message, now);
      // A LogOut means the security stamp changed: the connection's token is no longer valid.
      if (push.type === PushType.LogOut && 'user' in target) {
        const bye = closeMessage('The account was logged out.', false);
        for (const connection of targets) close(connection, bye);
      }
    },

    connectionCount(): number {
      return connections.size;
    },

    /** Stops accepting, then closes every connection with a Close message that allows reconnecting. */
    async shutdown(timeoutMs = 5000): Promise<void> {
      if (closing) return;
      closing = true;
      for (const timer of timers) clearInterval(timer);
      timers = [];
      const open = [...connections];
      const closed = open.map((connection) =>
        connection.ws.readyState === WebSocket.CLOSED ? Promise.resolve() : new Promise<void>((resolve) => connection.ws.once('close', () => resolve())),
      );
      const bye = closeMessage(null, true);
      for (const connection of open) {
        if (connection.protocol) close(connection, bye);
        else connection.ws.terminate();
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      for (const connection of connections) connection.ws.terminate();
    },
  };
}

export type Hub = ReturnType<typeof createHub>;
