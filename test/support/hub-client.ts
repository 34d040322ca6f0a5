import { HttpTransportType, HubConnectionBuilder, JsonHubProtocol, LogLevel, type HubConnection } from '@microsoft/signalr';
import { MessagePackHubProtocol } from '@microsoft/signalr-protocol-msgpack';

/** What a hub connection heard, in order. */
export interface HeardMessage {
  method: string;
  args: unknown[];
}

export interface TestHubClient {
  connection: HubConnection;
  heard: HeardMessage[];
  /** Resolves with onclose's error (undefined for a clean close). */
  closed: Promise<Error | undefined>;
  /** The ReceiveMessage arguments heard so far. */
  received(): Record<string, unknown>[];
  stop(): Promise<void>;
}

export interface HubClientOptions {
  /** The access token, sent as the apps' accessTokenFactory sends it (a Bearer header from Node). */
  token?: string;
  /** 'messagepack' (what the apps use, default) or 'json'. */
  protocol?: 'messagepack' | 'json';
  /** Skip negotiation as the apps do (default); false goes through POST …/negotiate first. */
  skipNegotiation?: boolean;
}

/**
 * A hub connection built with the real `@microsoft/signalr` client as the official apps build
 * it (notifications.md §1.2): skipNegotiation, WebSockets only, accessTokenFactory, the
 * MessagePack protocol, no automatic reconnect. It listens to every method the apps listen to.
 */
export async function connectHub(url: string, options: HubClientOptions = {}): Promise<TestHubClient> {
  const { token } = options;
  const builder = new HubConnectionBuilder()
    .withUrl(url, {
      ...(token ? { accessTokenFactory: () => token } : {}),
      skipNegotiation: options.skipNegotiation ?? true,
      transport: HttpTransportType.WebSockets,
    })
    .configureLogging(LogLevel.None);
  const connection = (options.protocol === 'json' ? builder.withHubProtocol(new JsonHubProtocol()) : builder.withHubProtocol(new MessagePackHubProtocol())).build();
  const heard: HeardMessage[] = [];
  for (const method of ['ReceiveMessage', 'Heartbeat', 'AuthRequestResponseRecieved']) {
    connection.on(method, (...args: unknown[]) => heard.push({ method, args }));
  }
  const closed = new Promise<Error | undefined>((resolve) => connection.onclose((error) => resolve(error)));
  await connection.start();
  return {
    connection,
    heard,
    closed,
    received: () => heard.filter((m) => m.method === 'ReceiveMessage').map((m) => m.args[0] as Record<string, unknown>),
    stop: () => connection.stop(),
  };
}

export async function waitFor(condition: () => boolean, timeoutMs = 5000, what = 'the condition'): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
