import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

/**
 * A Web Push service on loopback for tests: web-push-testing's server (npm), which takes a VAPID
 * subscription like a browser's push service, checks each message's VAPID signature, decrypts it
 * with the subscription's private key (aes128gcm, RFC 8291) and keeps the plain text for the test
 * to read. Its CLI forks a daemon on a fixed port; the test runs its Express app in-process
 * instead, on a free port.
 */

interface PushApiModel {
  notifyUrl: string;
}
interface TestingServer {
  _app: { listen(port: number, host: string): Server };
  setRequestHandlers(): void;
}

const require = createRequire(import.meta.url);
const { PushApiModel } = require('web-push-testing/src/PushApiModel.js') as { PushApiModel: new () => PushApiModel };
const WebPushTestingServer = require('web-push-testing/src/server.js') as new (model: PushApiModel, port: number) => TestingServer;

/** A subscription as the browser would hand it to the extension, and the service's handle on it. */
export interface TestSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  clientHash: string;
}

export interface TestPushService {
  /** Subscribes a "browser" to pushes signed with this VAPID public key. */
  subscribe(vapidPublicKey: string): Promise<TestSubscription>;
  /** The decrypted messages the subscription received, oldest first. */
  messages(subscription: TestSubscription): Promise<string[]>;
  /** Makes the service answer 410 Gone for the subscription from now on. */
  expire(subscription: TestSubscription): Promise<void>;
  close(): Promise<void>;
}

export async function startPushService(): Promise<TestPushService> {
  const model = new PushApiModel();
  const testing = new WebPushTestingServer(model, 0);
  const server = testing._app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  model.notifyUrl = `${base}/notify/`;
  testing.setRequestHandlers();

  const post = async (path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    // /expire-subscription answers a plain "OK".
    const text = await res.text();
    return text.startsWith('{') ? (JSON.parse(text) as { data: unknown }) : { data: null };
  };
  return {
    async subscribe(vapidPublicKey) {
      return (await post('/subscribe', { applicationServerKey: vapidPublicKey, userVisibleOnly: 'false' })).data as TestSubscription;
    },
    async messages(subscription) {
      return ((await post('/get-notifications', { clientHash: subscription.clientHash })).data as { messages: string[] }).messages;
    },
    async expire(subscription) {
      await post(`/expire-subscription/${subscription.clientHash}`);
    },
    close: () => closeServer(server),
  };
}

/**
 * A push service that answers every message with `status` (settable), for the failures
 * web-push-testing does not make: 404, 503, no answer.
 */
export async function startAnsweringService(status: number): Promise<{ endpoint: (name: string) => string; status: number; received: string[]; close(): Promise<void> }> {
  const state = { status, received: [] as string[] };
  const server = createServer((req, res) => {
    state.received.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(state.status).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, { endpoint: (name: string) => `${base}/push/${name}`, close: () => closeServer(server) });
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
