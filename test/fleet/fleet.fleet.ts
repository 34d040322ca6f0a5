/**
 * The fleet test (docs/operations.md): three instances on one PostgreSQL, Redis and RabbitMQ
 * behind nginx (round-robin, no sticky sessions, WebSocket upgrade), driven through the balancer.
 * Run with `npm run test:fleet` (its own CI step: `.ci/run`); needs DATABASE_URL (PostgreSQL),
 * STRONGROOM_TEST_REDIS_URL, STRONGROOM_TEST_AMQP_URL and nginx. Prints the rolling-restart
 * failures and the throughput / latency figures for 1, 2 and 3 instances.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BitwardenClient, DeviceType } from '@bitwarden/sdk-napi';
import autocannon from 'autocannon';
import { Agent } from 'undici';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, startFleet, type Fleet } from '../../fleet/fleet.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { systemClock } from '../../src/shared/clock.js';
import type { Actor } from '../support/admin.js';
import { createUser, passwordGrantForm, registerAccount } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { encryptText, rsaEncryptToEncString } from '../support/bw-crypto.js';
import { ENC } from '../support/admin.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { cipherBody } from '../support/vault.js';
import { acceptedIds, emitEvents, organizationWithHook } from '../support/forwarding.js';
import { connectHub, waitFor } from '../support/hub-client.js';
import { seedOrganization } from '../support/orgs.js';
import { loginThroughIdp, startOidcIdp } from '../support/oidc-idp.js';
import { createAccessToken, createMachineAccount, smOrg } from '../support/sm.js';
import { orgApiToken } from '../support/public-api.js';
import { testService } from '../support/services.js';
import { httpRequest, testConfig, type RequestOptions, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { startRelayDouble, type RelayDouble } from '../support/relay-double.js';
import { startPushService, type TestPushService } from '../support/push-service.js';
import { jobRunsIn } from '../support/scheduled-job-runs.js';
import { seedUser } from '../support/admin.js';
import { EventType } from '../../src/platform/audit/event-type.js';

const SLOW = 600_000;
const databaseUrl = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined;
const redisUrl = testService('redis');
const amqpUrl = testService('amqp');
/** The RabbitMQ node behind it (`rabbitmqctl -n`), for the test that stops the broker. */
const amqpNode = amqpUrl ? testService('amqpNode') : undefined;
const ready = Boolean(databaseUrl && redisUrl && amqpUrl);
if (!databaseUrl) console.warn('\n!!! SKIPPING the fleet test: it needs DATABASE_URL=postgres://… !!!\n');
const LOAD_SECONDS = Number(process.env.FLEET_SECONDS ?? 10);
/** How often each instance reads again which users have a phone or a browser to push to. */
const AUDIENCE_SECONDS = 2;

let dir: string;
let tls: TestTls;
let fleet: Fleet;
let database: Database;
let dispatcher: Agent;
let bw: BwCli | undefined;
let memberBw: BwCli | undefined;
let sink: SmtpSink | undefined;
let relay: RelayDouble | undefined;
let pushService: TestPushService | undefined;
/** The Send purge's interval on the fleet: short, so that the test sees several runs. */
const PURGE_SECONDS = 2;
/** The emergency access jobs' interval on the fleet, short for the same reason. */
const EMERGENCY_SECONDS = 2;
const DAY_MS = 86_400_000;

/** The balancer as the test helpers see a server: requests through nginx, the fleet's database. */
function through(base: () => string): TestServer {
  return {
    request: (method: string, path: string, options?: RequestOptions) => httpRequest(base(), method, path, options, base().startsWith('https') ? dispatcher : undefined),
    get database() {
      return database;
    },
    // The instances' own settings, as far as the helpers read them (self-hosted).
    config: testConfig(),
    // The instances run on the system clock; seeded accounts are dated by it.
    clock: systemClock,
  } as unknown as TestServer;
}
const lb = through(() => fleet.url);
const instance = (i: number) => through(() => fleet.instances[i]?.url ?? '');

/** A SignalR JSON-protocol client on a raw WebSocket through nginx (wss, trusting the test CA). */
async function hubThroughBalancer(token: string): Promise<{ messages: unknown[]; close(): void }> {
  const url = `${fleet.url.replace('https', 'wss')}/notifications/hub?access_token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(url, { ca: tls.caPem });
  const messages: unknown[] = [];
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send('{"protocol":"json","version":1}\u001e');
  ws.on('message', (data: Buffer) => {
    for (const frame of data.toString().split('\u001e').filter(Boolean)) {
      const message = JSON.parse(frame) as { type?: number; target?: string; arguments?: unknown[] };
      if (message.type === 1 && message.target === 'ReceiveMessage') messages.push(message.arguments?.[0]);
    }
  });
  return { messages, close: () => ws.close() };
}

/** How often each running instance ran a scheduled job (holding its lease) or skipped it, from its /metrics. */
async function jobRuns(job: string): Promise<{ ran: number; skipped: number }[]> {
  return Promise.all(
    fleet.instances.map(async (one) => {
      if (!one.proc) return { ran: 0, skipped: 0 };
      const text = await fetch(`${one.url}/metrics`).then((r) => r.text());
      return jobRunsIn(text, job);
    }),
  );
}
const purgeRuns = () => jobRuns('send-purge');

const minus = (after: { ran: number; skipped: number }[], before: { ran: number; skipped: number }[]) =>
  after.map((r, i) => ({ ran: r.ran - (before[i]?.ran ?? 0), skipped: r.skipped - (before[i]?.skipped ?? 0) }));

/** The instances whose relay holds the fleet's lease, from their /healthz/extended. */
async function relayLeaders(): Promise<number[]> {
  const leaders: number[] = [];
  for (const one of fleet.instances) {
    if (!one.proc) continue;
    const report = (await fetch(`${one.url}/api/healthz/extended`).then((r) => r.json())) as { results: Record<string, { data: { relay?: { leader?: boolean } } }> };
    if (report.results.integrations?.data.relay?.leader) leaders.push(one.index);
  }
  return leaders;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

/** nginx's error log lines of this run (why a request got a 502), for a failing test's output. */
function nginxErrors(): string {
  try {
    return readFileSync(join(dir, 'nginx', 'error.log'), 'utf8').split('\n').filter((line) => /\[error\]/.test(line)).slice(-10).join('\n');
  } catch {
    return '(no nginx error log)';
  }
}

function figures(result: autocannon.Result): Figures {
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, non2xx: result.non2xx, errors: result.errors };
}

beforeAll(async () => {
  if (!ready || !databaseUrl || !redisUrl || !amqpUrl) return;
  buildServer();
  dir = await mkdtemp(join(tmpdir(), 'strongroom-fleet-'));
  tls = await createTestTls();
  dispatcher = new Agent({ connect: { ca: tls.caPem } });
  // Invitations are mailed: every instance sends through this sink.
  sink = await startSmtpSink();
  // Mobile pushes go to a relay double on loopback, never to Bitwarden's relay.
  relay = await startRelayDouble();
  const relayEnv = { INSTALLATION_ID: relay.installationId, INSTALLATION_KEY: relay.installationKey, PUSH_RELAY_URI: relay.url, PUSH_IDENTITY_URI: relay.url };
  // And Web Push to a browser push service on loopback (web-push-testing), which a private address needs allowed.
  pushService = await startPushService();
  Object.assign(relayEnv, { WEB_PUSH_ALLOW_PRIVATE_ADDRESSES: 'true', PUSH_AUDIENCE_REFRESH_SECONDS: String(AUDIENCE_SECONDS) });
  fleet = await startFleet({
    databaseUrl,
    redisUrl,
    amqpUrl,
    dir,
    tls,
    instances: 3,
    // The test identity provider listens on loopback.
    env: { SSO_ALLOW_PRIVATE_ADDRESSES: 'true', PUBLIC_API_RATE_LIMIT: '60', PUBLIC_API_BURST: '5', SEND_PURGE_INTERVAL_SECONDS: String(PURGE_SECONDS), EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS: String(EMERGENCY_SECONDS), ...sink.env, ...relayEnv },
  });
  database = openDatabase(fleet.databaseUrl, { poolSize: 2 });
}, SLOW);

afterAll(async () => {
  await bw?.dispose();
  await memberBw?.dispose();
  await database?.close();
  await fleet?.close();
  await dispatcher?.close();
  await sink?.close();
  await relay?.close();
  await pushService?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.runIf(ready)('a fleet of three instances behind nginx', () => {
  it('spreads requests over every instance, round-robin', async () => {
    for (let i = 0; i < 6; i++) expect((await lb.request('GET', '/api/alive')).status).toBe(200);
    for (const one of fleet.instances) {
      const metrics = await fetch(`${one.url}/metrics`).then((r) => r.text());
      expect(metrics, `instance ${one.index} served none`).toMatch(/strongroom_http_requests_total\{method="GET",route="\/api\/alive",status_code="200"\} [1-9]/);
    }
  });

  it('serves the official bw client: login, an item edit and a sync', async () => {
    const account = await registerAccount(lb, { email: 'fleet-bw@example.com', derivation: 'real' });
    bw = await createBwCli({ serverUrl: fleet.url, caPath: tls.caPath });
    await bw.configServer();
    const login = await bw.login(account.email, account.password);
    expect(login.code, login.stderr).toBe(0);
    const template = { type: 2, name: 'fleet note', notes: 'first', favorite: false, secureNote: { type: 0 }, reprompt: 0 };
    const created = await bw.json<{ id: string }>(['create', 'item', Buffer.from(JSON.stringify(template)).toString('base64')]);
    const edited = await bw.json<{ notes: string }>(['edit', 'item', created.id, Buffer.from(JSON.stringify({ ...template, notes: 'edited' })).toString('base64')]);
    expect(edited.notes).toBe('edited');
    const sync = await bw.run(['sync', '-f']);
    expect(sync.code, sync.stderr).toBe(0);
    const items = await bw.json<{ name: string; notes: string }[]>(['list', 'items']);
    expect(items.map((i) => [i.name, i.notes])).toEqual([['fleet note', 'edited']]);
  }, SLOW);

  it('invites on one instance, accepts on another, confirms on a third; the member sees the shared item in bw', async () => {
    // An organization whose owner holds its key, a collection and an item in it, as the web vault makes them.
    const { orgId, owner, orgKey } = await smOrg(lb);
    const collection = await instance(0).request('POST', `/api/organizations/${orgId}/collections`, {
      token: owner.token,
      json: { name: encryptText('Fleet team', orgKey), externalId: null, groups: [], users: [{ id: owner.memberId, readOnly: false, hidePasswords: false, manage: true }] },
    });
    expect(collection.status, collection.text).toBe(200);
    const collectionId = String(collection.body.id);
    const item = await lb.request('POST', '/api/ciphers/create', {
      token: owner.token,
      json: { cipher: cipherBody('login', orgKey, { organizationId: orgId, name: encryptText('Fleet shared login', orgKey) }), collectionIds: [collectionId] },
    });
    expect(item.status, item.text).toBe(200);

    // Invited on instance 0: the mail carries the token.
    const email = 'fleet-member@example.com';
    const invite = await instance(0).request('POST', `/api/organizations/${orgId}/users/invite`, {
      token: owner.token,
      json: { emails: [email], type: 2, collections: [{ id: collectionId, readOnly: true, hidePasswords: false, manage: false }], groups: [] },
    });
    expect(invite.status, invite.text).toBe(200);
    if (!sink) throw new Error('no SMTP sink');
    const invitation = invitationFrom(await sink.waitFor(email));

    // Registers and accepts on instance 1: it checks a token instance 0 signed.
    const member = await createUser(instance(1), { email, name: 'Fleet Member', derivation: 'real' });
    const accept = await instance(1).request('POST', `/api/organizations/${orgId}/users/${invitation.organizationUserId}/accept`, {
      token: member.accessToken,
      json: { token: invitation.token },
    });
    expect(accept.status, accept.text).toBe(200);

    // Confirmed on instance 2 with the calls the clients make: the member list, the member's public key, the org key wrapped to it.
    const listed = await instance(2).request('GET', `/api/organizations/${orgId}/users`, { token: owner.token });
    expect(listed.status, listed.text).toBe(200);
    const row = (listed.body.data as { id: string; userId: string | null; status: number }[]).find((m) => m.id === invitation.organizationUserId);
    expect(row).toMatchObject({ status: 1, userId: member.userId });
    const publicKey = await instance(2).request('GET', `/api/users/${member.userId}/public-key`, { token: owner.token });
    expect(publicKey.status, publicKey.text).toBe(200);
    const confirm = await instance(2).request('POST', `/api/organizations/${orgId}/users/${invitation.organizationUserId}/confirm`, {
      token: owner.token,
      json: { key: rsaEncryptToEncString(orgKey.raw, String(publicKey.body.publicKey)) },
    });
    expect(confirm.status, confirm.text).toBe(200);

    // The member's official client, through the balancer, decrypts the shared item with the org key it was given.
    memberBw = await createBwCli({ serverUrl: fleet.url, caPath: tls.caPath });
    await memberBw.configServer();
    const login = await memberBw.login(email, member.account.password);
    expect(login.code, login.stderr).toBe(0);
    const sync = await memberBw.run(['sync', '-f']);
    expect(sync.code, sync.stderr).toBe(0);
    const items = await memberBw.json<{ name: string; organizationId?: string; collectionIds: string[]; login?: { username?: string } }[]>(['list', 'items']);
    expect(items.map((i) => [i.name, i.organizationId, i.collectionIds, i.login?.username])).toEqual([['Fleet shared login', orgId, [collectionId], 'alice']]);
  }, SLOW);

  it('finishes a single sign-on login on other instances than the one it started on', async () => {
    // A real OpenID provider; the organization's settings saved on instance 1 (sealed with the fleet's one SECRETS_KEY).
    const idp = await startOidcIdp({
      clients: [{ client_id: 'fleet', client_secret: 'fleet-secret', redirect_uris: [`${fleet.url}/sso/oidc-signin`] }],
      users: [{ sub: 'fleet-sso', email: 'fleet-sso@example.com', email_verified: true, name: 'Fleet SSO', password: 'pw-fleet-sso' }],
    });
    try {
      const { orgId, owner } = await smOrg(lb);
      const identifier = `fleet-${randomUUID().slice(0, 8)}`;
      const saved = await instance(1).request('POST', `/api/organizations/${orgId}/sso`, {
        token: owner.token,
        json: { enabled: true, identifier, data: { configType: 1, memberDecryptionType: 0, authority: idp.issuer, clientId: 'fleet', clientSecret: 'fleet-secret', redirectBehavior: 0 } },
      });
      expect(saved.status, saved.text).toBe(200);

      // The CLI's PKCE pair and state; prevalidate and authorize on instance 0.
      const prevalidate = await instance(0).request('GET', `/identity/sso/prevalidate?domainHint=${identifier}`);
      expect(prevalidate.status, prevalidate.text).toBe(200);
      const verifier = randomBytes(48).toString('base64url');
      const query = new URLSearchParams({
        client_id: 'cli', redirect_uri: 'http://localhost:8065', response_type: 'code', scope: 'api offline_access', state: 'fleet-state',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', response_mode: 'query',
        domain_hint: identifier, ssoToken: String(prevalidate.body.token),
      });
      // The identity provider sends the browser back to PUBLIC_URL (the balancer); it is sent to instance 2 here, so the callback surely lands elsewhere.
      const callbackHost = new URL(fleet.url).host;
      const browser = await loginThroughIdp(`${fleet.instances[0]!.url}/identity/connect/authorize?${query.toString()}`, { login: 'fleet-sso', password: 'pw-fleet-sso' }, {
        rewrite: (url) => (url.host === callbackHost ? new URL(`${fleet.instances[2]!.url}${url.pathname}${url.search}`) : url),
      });
      expect(browser.visited.some((url) => url.startsWith(`${fleet.instances[2]!.url}/sso/oidc-signin`)), browser.visited.join('\n')).toBe(true);
      const code = browser.location?.searchParams.get('code');
      expect(code, browser.body).toBeTruthy();
      expect(browser.location?.searchParams.get('state')).toBe('fleet-state');

      // The code is redeemed on instance 1: a just-in-time member of the organization.
      const form = { grant_type: 'authorization_code', code: code!, code_verifier: verifier, redirect_uri: 'http://localhost:8065', client_id: 'cli', scope: 'api offline_access', deviceType: '8', deviceIdentifier: randomUUID(), deviceName: 'linux' };
      const token = await instance(1).request('POST', '/identity/connect/token', { form });
      expect(token.status, token.text).toBe(200);
      const profile = await lb.request('GET', '/api/accounts/profile', { token: String(token.body.access_token) });
      expect(profile.status, profile.text).toBe(200);
      // Accepted, not yet confirmed: listed with the memberships the owner has still to confirm.
      expect((profile.body.organizationsNew as { id: string; ssoBound: boolean; status: number }[]).map((o) => [o.id, o.ssoBound, o.status])).toEqual([[orgId, true, 1]]);
      // A second redemption of the same code, on yet another instance, is refused.
      expect((await instance(0).request('POST', '/identity/connect/token', { form })).status).toBe(400);
    } finally {
      await idp.close();
    }
  }, SLOW);

  it('delivers a push to a client connected to another instance, and through the balancer (WebSocket upgrade)', async () => {
    const user = await createUser(lb);
    // Connected to instance 0; the change is made on instance 1.
    const direct = await connectHub(`${fleet.instances[0]?.url}/notifications/hub`, { token: user.accessToken });
    const balanced = await hubThroughBalancer(user.accessToken);
    const folder = await instance(1).request('POST', '/api/folders', { token: user.accessToken, json: { name: encryptText('pushed', user.account.userKey) } });
    expect(folder.status).toBe(200);
    await waitFor(() => direct.received().length >= 1, 10_000, 'the push on instance 0');
    expect(direct.received()[0]).toMatchObject({ Type: 7 });
    // Three changes through the balancer land on three instances; each reaches the balanced hub.
    for (let i = 0; i < 3; i++) {
      expect((await lb.request('POST', '/api/folders', { token: user.accessToken, json: { name: encryptText(`via lb ${i}`, user.account.userKey) } })).status).toBe(200);
    }
    await waitFor(() => balanced.messages.length >= 4, 10_000, 'four pushes through nginx');
    expect(balanced.messages).toHaveLength(4);
    await direct.stop();
    balanced.close();
  }, SLOW);

  it('sends each push once to the mobile relay and to a browser by Web Push, whichever instance made the change', async () => {
    const user = await createUser(lb);
    const phone = randomUUID();
    const login = await lb.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account, { deviceType: '0', deviceIdentifier: phone, deviceName: 'Pixel' }), devicePushToken: 'fcm-fleet' } });
    expect(login.status, login.text).toBe(200);
    await waitFor(() => Boolean(relay?.calls.some((call) => call.path === '/push/register' && (call.body as { identifier?: string }).identifier === phone)), 20_000, 'the phone registered');
    // The browser extension: it reads the VAPID key from /config, subscribes, and registers the subscription.
    const extension = { deviceType: '2', deviceIdentifier: randomUUID(), deviceName: 'chrome' };
    const browserLogin = await lb.request('POST', '/identity/connect/token', { form: passwordGrantForm(user.account, extension) });
    expect(browserLogin.status, browserLogin.text).toBe(200);
    const config = await lb.request('GET', '/api/config');
    expect(config.body.push.pushTechnology).toBe(1);
    const subscription = await pushService!.subscribe(config.body.push.vapidPublicKey as string);
    const registered = await lb.request('PUT', `/api/devices/identifier/${extension.deviceIdentifier}/web-push-auth`, {
      token: browserLogin.body.access_token as string,
      json: { endpoint: subscription.endpoint, ...subscription.keys },
    });
    expect(registered.status, registered.text).toBe(200);
    // The phone and the browser registered on one instance each; the others learn of them at
    // their next read of the audience.
    await new Promise((r) => setTimeout(r, AUDIENCE_SECONDS * 1000 + 500));
    // Six changes through the balancer: two on each instance.
    const folders: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await lb.request('POST', '/api/folders', { token: user.accessToken, json: { name: encryptText(`relayed ${i}`, user.account.userKey) } });
      expect(res.status).toBe(200);
      folders.push(res.body.id as string);
    }
    const sent = () => (relay?.calls ?? []).filter((call) => call.path === '/push/send' && (call.body as { userId?: string }).userId === user.userId);
    await waitFor(() => sent().length >= 6, 30_000, 'six relayed pushes');
    await new Promise((r) => setTimeout(r, 2000));
    expect(sent().map((call) => (call.body as { payload: { id: string } }).payload.id).sort()).toEqual([...folders].sort());
    // The browser got each change once too, decrypted by its push service.
    const received = async () => (await pushService!.messages(subscription)).map((text) => JSON.parse((JSON.parse(text) as { data: { payload: string } }).data.payload) as { Id: string });
    let got: { Id: string }[] = [];
    for (const end = Date.now() + 30_000; got.length < 6 && Date.now() < end; await new Promise((r) => setTimeout(r, 250))) got = await received();
    await new Promise((r) => setTimeout(r, 1000));
    expect((await received()).map((payload) => payload.Id).sort()).toEqual([...folders].sort());
  }, SLOW);

  it('serves the Secrets Manager SDK: a machine account logs in, writes, lists and syncs secrets', async () => {
    // The SDK's rustls reads the trusted roots from SSL_CERT_FILE when a client is made.
    process.env.SSL_CERT_FILE = tls.caPath;
    const { orgId, owner, orgKey } = await smOrg(lb);
    const project = await lb.request('POST', `/api/organizations/${orgId}/projects`, { token: owner.token, json: { name: encryptText('fleet project', orgKey) } });
    expect(project.status, project.text).toBe(200);
    const machine = await createMachineAccount(lb, owner.token, orgId, encryptText('fleet deployer', orgKey));
    const grant = await lb.request('PUT', `/api/service-accounts/${machine}/granted-policies`, {
      token: owner.token,
      json: { projectGrantedPolicyRequests: [{ grantedId: project.body.id, read: true, write: true }] },
    });
    expect(grant.status, grant.text).toBe(200);
    const access = await createAccessToken(lb, owner.token, machine, orgKey);
    const sdk = new BitwardenClient({ apiUrl: `${fleet.url}/api`, identityUrl: `${fleet.url}/identity`, userAgent: 'strongroom-fleet', deviceType: DeviceType.SDK }, 3);
    await sdk.auth().loginAccessToken(access.accessToken);
    const created = await sdk.secrets().create(orgId, 'FLEET_KEY', 'fleet value', '', [String(project.body.id)]);
    // Each call goes to the next instance; all of them see the same secret.
    for (let i = 0; i < 3; i++) expect((await sdk.secrets().get(created.id)).value).toBe('fleet value');
    expect((await sdk.secrets().list(orgId)).data.map((s) => s.key)).toEqual(['FLEET_KEY']);
    const synced = await sdk.secrets().sync(orgId);
    expect(synced.secrets?.map((s) => s.id)).toEqual([created.id]);
  }, SLOW);

  it('enforces the public API limit once across the fleet (Redis)', async () => {
    const org = await seedOrganization(lb);
    const { token } = await orgApiToken(lb, org);
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 18; i++) statuses.push((await lb.request('GET', '/api/public/members', { token })).status);
    const seconds = (Date.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    // A burst of 5 and one more a second, for the fleet; three separate buckets would allow 15.
    expect(allowed).toBeGreaterThanOrEqual(5);
    expect(allowed).toBeLessThanOrEqual(5 + Math.ceil(seconds) + 1);
    expect(statuses.filter((s) => s === 429).length).toBe(18 - allowed);
  }, SLOW);

  it('runs a scheduled job once per fleet: the Send purge, on the holder of its lease, handed over when the holder stops', async () => {
    const user = await createUser(lb);
    const hub = await hubThroughBalancer(user.accessToken);
    const textSend = { type: 0, name: ENC, notes: null, key: ENC, maxAccessCount: null, expirationDate: null, text: { text: ENC, hidden: false }, file: null };
    const send = await lb.request('POST', '/api/sends', {
      token: user.accessToken,
      json: { ...textSend, deletionDate: new Date(Date.now() + 86_400_000).toISOString(), password: null, emails: null, disabled: false, hideEmail: false, authType: 2 },
    });
    expect(send.status, send.text).toBe(200);
    const sendId = String(send.body.id);
    // Its deletion date passes (the API refuses one less than a minute ahead).
    await database.db.updateTable('sends').set({ deletion_date: new Date(Date.now() - 1000).toISOString() }).where('id', '=', sendId).execute();

    // Over three intervals, one instance purges each interval and the others skip.
    const before = await purgeRuns();
    await new Promise((r) => setTimeout(r, 3 * PURGE_SECONDS * 1000 + 500));
    const window = minus(await purgeRuns(), before);
    const holders = window.flatMap((r, i) => (r.ran > 0 ? [i] : []));
    expect(holders, JSON.stringify(window)).toHaveLength(1);
    const fleetRuns = window.reduce((n, r) => n + r.ran, 0);
    expect(fleetRuns).toBeGreaterThanOrEqual(2);
    expect(fleetRuns).toBeLessThanOrEqual(4);
    for (const r of window.filter((r) => r.ran === 0)) expect(r.skipped).toBeGreaterThanOrEqual(2);

    // The expired Send is gone, purged once: its owner heard one deletion, through whichever instance.
    const row = await database.db.selectFrom('sends').select('id').where('id', '=', sendId).executeTakeFirst();
    expect(row).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1000));
    // The JSON hub protocol names the fields in camelCase (MessagePack clients get Type, Payload).
    const deletions = hub.messages.filter((m) => (m as { type?: number; payload?: { id?: string } }).type === 14);
    expect(deletions.map((m) => (m as { payload: { id: string } }).payload.id)).toEqual([sendId]);
    expect(deletions).toHaveLength(1);
    hub.close();

    // The holder stops (SIGTERM gives the lease back): another instance takes the job within an interval or two.
    const holder = holders[0] ?? 0;
    await fleet.kill(holder, 'SIGTERM');
    const handed = await purgeRuns();
    await new Promise((r) => setTimeout(r, 3 * PURGE_SECONDS * 1000 + 500));
    const afterStop = minus(await purgeRuns(), handed);
    const takers = afterStop.flatMap((r, i) => (r.ran > 0 ? [i] : []));
    expect(takers, JSON.stringify(afterStop)).toHaveLength(1);
    expect(takers[0]).not.toBe(holder);

    // Back again, the old holder skips: the lease stays where it is.
    await fleet.start(holder);
    await new Promise((r) => setTimeout(r, 2 * PURGE_SECONDS * 1000 + 500));
    const back = (await purgeRuns())[holder];
    expect(back?.ran).toBe(0);
    expect(back?.skipped).toBeGreaterThanOrEqual(1);
  }, SLOW);

  it('grants a recovery whose wait is over once per fleet: the emergency access timeout job, on the holder of its lease', async () => {
    if (!sink) throw new Error('no SMTP sink');
    // Two recoveries the contacts started, seeded as the API leaves them: one waited two days of a
    // one-day wait, the other one day of seven (not yet due, nor due for a reminder).
    const seed = async (waitTimeDays: number, startedDaysAgo: number) => {
      const tag = randomUUID().slice(0, 8);
      const grantorEmail = `fleet-grantor-${tag}@example.com`;
      const granteeEmail = `fleet-grantee-${tag}@example.com`;
      const grantor = await seedUser(lb, grantorEmail);
      const grantee = await seedUser(lb, granteeEmail);
      const started = new Date(Date.now() - startedDaysAgo * DAY_MS).toISOString();
      const id = randomUUID();
      await database.db
        .insertInto('emergency_access')
        .values({ id, grantor_id: grantor, grantee_id: grantee, email: null, key_encrypted: ENC, type: 1, status: 3, wait_time_days: waitTimeDays, recovery_initiated_date: started, last_notification_date: started, creation_date: started, revision_date: started })
        .execute();
      return { id, grantor, grantorEmail, granteeEmail };
    };
    const before = await jobRuns('emergency-access-timeout');
    const due = await seed(1, 2);
    const waiting = await seed(7, 1);

    // Over three intervals, one instance runs the job each interval and the others skip.
    await new Promise((r) => setTimeout(r, 3 * EMERGENCY_SECONDS * 1000 + 500));
    const window = minus(await jobRuns('emergency-access-timeout'), before);
    const holders = window.flatMap((r, i) => (r.ran > 0 ? [i] : []));
    expect(holders, JSON.stringify(window)).toHaveLength(1);
    const fleetRuns = window.reduce((n, r) => n + r.ran, 0);
    expect(fleetRuns, JSON.stringify(window)).toBeGreaterThanOrEqual(2);
    expect(fleetRuns, JSON.stringify(window)).toBeLessThanOrEqual(4);
    for (const r of window.filter((r) => r.ran === 0)) expect(r.skipped, JSON.stringify(window)).toBeGreaterThanOrEqual(2);

    // The due grant was approved once, whichever instance ran it: one event, one mail to each party.
    const statusOf = async (id: string) => (await database.db.selectFrom('emergency_access').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    expect(await statusOf(due.id)).toBe(4);
    const approvals = (grantor: string) =>
      database.db.selectFrom('events').select('id').where('type', '=', EventType.EmergencyAccess_RecoveryApproved).where('user_id', '=', grantor).execute();
    expect(await approvals(due.grantor)).toHaveLength(1);
    const mailsTo = (address: string) => sink?.messages.filter((m) => m.to.includes(address)).map((m) => /^Subject: (.*)$/m.exec(m.text)?.[1]) ?? [];
    expect(mailsTo(due.granteeEmail)).toEqual(['Emergency access approved']);
    expect(mailsTo(due.grantorEmail)).toEqual(['Emergency access granted']);

    // The grant still waiting is untouched.
    expect(await statusOf(waiting.id)).toBe(3);
    expect(await approvals(waiting.grantor)).toHaveLength(0);
    expect([...mailsTo(waiting.granteeEmail), ...mailsTo(waiting.grantorEmail)]).toEqual([]);
  }, SLOW);

  it('relays each event to an integration once per fleet, and again after the relaying instance dies', async () => {
    const receiver = await startReceiver();
    try {
      const owner = await createUser(lb);
      const hook = await organizationWithHook(lb, { userId: owner.userId, token: owner.accessToken } as Actor, `${receiver.url}/hook`);
      const ids = await emitEvents(lb, hook.org, 30);
      await waitFor(() => acceptedIds(receiver.received).length >= 30, 60_000, '30 deliveries');
      await new Promise((r) => setTimeout(r, 2000));
      expect(acceptedIds(receiver.received).sort()).toEqual([...ids].sort());
      const leases = await database.db.selectFrom('integration_relay').select(['lease_owner']).execute();
      expect(leases).toHaveLength(1);

      // The instance relaying dies (kill -9): another takes the lease over once it runs out.
      const leaders = await relayLeaders();
      expect(leaders).toHaveLength(1);
      const leader = leaders[0] ?? 0;
      await fleet.kill(leader, 'SIGKILL');
      const later = await emitEvents(lb, hook.org, 10);
      await waitFor(() => later.every((id) => acceptedIds(receiver.received).includes(id)), 90_000, 'the events written after the relay died');
      const survivors = await relayLeaders();
      expect(survivors).toHaveLength(1);
      expect(survivors[0]).not.toBe(leader);
      await fleet.start(leader);
      expect(await relayLeaders()).toEqual(survivors);
    } finally {
      await receiver.close();
    }
  }, SLOW);

  it('restarts every instance in turn under a fixed-rate load, failing no request', async () => {
    const user = await createUser(lb);
    let finished: (result: autocannon.Result) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve) => (finished = resolve));
    const load = autocannon(
      {
      url: fleet.url,
      connections: 8,
      overallRate: 40,
      duration: 600,
      requests: [
        { method: 'GET', path: '/api/sync', headers: { authorization: `Bearer ${user.accessToken}` } },
        { method: 'POST', path: '/api/folders', headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: encryptText('load', user.account.userKey) }) },
      ],
      },
      (_error, result) => finished(result),
    );
    const statuses = new Map<number, number>();
    load.on('response', (_client: unknown, status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
    await new Promise((r) => setTimeout(r, 3000));
    const restarted: number[] = [];
    for (const one of fleet.instances) {
      await fleet.restart(one.index);
      restarted.push(one.index);
      await new Promise((r) => setTimeout(r, 2000));
    }
    load.stop();
    const result = await done;
    const f = figures(result);
    if (f.non2xx + f.errors > 0) console.log(`nginx: ${nginxErrors()}`);
    console.log(`\nRolling restart of ${restarted.length} instances under ${40} requests/s: ${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors; statuses ${JSON.stringify(Object.fromEntries(statuses))}; p50 ${f.p50} ms, p99 ${f.p99} ms\n`);
    expect(f.requests).toBeGreaterThan(100);
    expect(f.errors).toBe(0);
    expect(f.non2xx).toBe(0);
  }, SLOW);

  it('keeps serving when an instance is killed (kill -9) mid-load; idempotent requests are retried by nginx', async () => {
    const user = await createUser(lb);
    let finished: (result: autocannon.Result) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve) => (finished = resolve));
    const load = autocannon(
      { url: fleet.url, connections: 8, overallRate: 40, duration: 600, requests: [{ method: 'GET', path: '/api/sync', headers: { authorization: `Bearer ${user.accessToken}` } }] },
      (_error, result) => finished(result),
    );
    await new Promise((r) => setTimeout(r, 2000));
    await fleet.kill(1, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 4000));
    const report = (await fetch(`${fleet.instances[0]?.url}/api/healthz/extended`).then((r) => r.json())) as { status: string };
    expect(report.status).toBe('Healthy');
    await fleet.start(1);
    await new Promise((r) => setTimeout(r, 2000));
    load.stop();
    const f = figures(await done);
    console.log(`\nInstance 1 killed and restarted under 40 syncs/s: ${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors\n`);
    expect(f.requests).toBeGreaterThan(100);
    expect(f.errors + f.non2xx).toBe(0);
  }, SLOW);

  it('keeps serving while Redis is down, shows it degraded, and recovers by itself', async () => {
    const port = new URL(redisUrl ?? '').port;
    const user = await createUser(lb);
    let finished: (result: autocannon.Result) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve) => (finished = resolve));
    const load = autocannon(
      {
        url: fleet.url,
        connections: 4,
        overallRate: 20,
        duration: 600,
        requests: [
          { method: 'GET', path: '/api/sync', headers: { authorization: `Bearer ${user.accessToken}` } },
          { method: 'POST', path: '/api/folders', headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: encryptText('redis down', user.account.userKey) }) },
        ],
      },
      (_error, result) => finished(result),
    );
    await new Promise((r) => setTimeout(r, 2000));
    execFileSync('redis-cli', ['-p', port, 'shutdown', 'nosave']);
    try {
      await new Promise((r) => setTimeout(r, 3000));
      const degraded = (await fetch(`${fleet.instances[0]?.url}/api/healthz/extended`).then((r) => r.json())) as { status: string; results: Record<string, { status: string }> };
      expect(degraded.status).toBe('Degraded');
      expect(degraded.results.redis?.status).toBe('Degraded');
    } finally {
      execFileSync('redis-server', ['--port', port, '--bind', '127.0.0.1', '--daemonize', 'yes', '--save', '', '--appendonly', 'no']);
    }
    for (const one of fleet.instances) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const report = (await fetch(`${one.url}/api/healthz/extended`).then((r) => r.json())) as { status: string };
        if (report.status === 'Healthy') break;
        if (Date.now() > deadline) throw new Error(`instance ${one.index} did not recover: ${JSON.stringify(report)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    load.stop();
    const f = figures(await done);
    console.log(`\nRedis stopped and restarted under 20 requests/s: ${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors\n`);
    expect(f.errors + f.non2xx).toBe(0);

    // Pushes cross instances through Redis again.
    const direct = await connectHub(`${fleet.instances[0]?.url}/notifications/hub`, { token: user.accessToken });
    expect((await instance(2).request('POST', '/api/folders', { token: user.accessToken, json: { name: encryptText('after redis', user.account.userKey) } })).status).toBe(200);
    await waitFor(() => direct.received().length >= 1, 20_000, 'a push after Redis came back');
    await direct.stop();
  }, SLOW);

  it.runIf(Boolean(amqpNode))('loses no event while RabbitMQ is down, shows it degraded, and keeps serving', async () => {
    const rabbitmqctl = (command: string) => execFileSync('rabbitmqctl', ['-n', amqpNode ?? '', command], { timeout: 60_000, stdio: 'ignore' });
    const receiver = await startReceiver();
    const user = await createUser(lb);
    let finished: (result: autocannon.Result) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve) => (finished = resolve));
    const load = autocannon(
      { url: fleet.url, connections: 4, overallRate: 20, duration: 600, requests: [{ method: 'GET', path: '/api/sync', headers: { authorization: `Bearer ${user.accessToken}` } }] },
      (_error, result) => finished(result),
    );
    try {
      const hook = await organizationWithHook(lb, { userId: user.userId, token: user.accessToken } as Actor, `${receiver.url}/hook`);
      const before = await emitEvents(lb, hook.org, 20);
      await waitFor(() => acceptedIds(receiver.received).length > 0, 60_000, 'the first deliveries');
      rabbitmqctl('stop_app');
      let during: string[] = [];
      try {
        during = await emitEvents(lb, hook.org, 20);
        const deadline = Date.now() + 30_000;
        for (;;) {
          const report = (await fetch(`${fleet.instances[1]?.url}/api/healthz/extended`).then((r) => r.json())) as { results: Record<string, { status: string }> };
          if (report.results.integrations?.status === 'Degraded') break;
          if (Date.now() > deadline) throw new Error('the broker was never seen as down');
          await new Promise((r) => setTimeout(r, 500));
        }
      } finally {
        rabbitmqctl('start_app');
      }
      const after = await emitEvents(lb, hook.org, 20);
      const all = [...before, ...during, ...after];
      await waitFor(() => all.every((id) => acceptedIds(receiver.received).includes(id)), 120_000, 'every event delivered');
      load.stop();
      const f = figures(await done);
      console.log(`\nRabbitMQ stopped and started under 20 requests/s: ${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors; ${all.length} events, all delivered\n`);
      expect(f.errors + f.non2xx).toBe(0);
    } finally {
      load.stop();
      await receiver.close();
    }
  }, SLOW);

  it('measures a mixed workload on 1, 2 and 3 instances', async () => {
    // The measurement needs the public API unlimited, and room for its logins: its 12 connections
    // log one account in from one address, and each login in flight holds one of the 10 attempts
    // LOGIN_ATTEMPTS_PER_ACCOUNT allows until its password is checked. A rolling restart applies both.
    fleet.setEnv({ PUBLIC_API_RATE_LIMIT: '0', LOGIN_ATTEMPTS_PER_ACCOUNT: '100' });
    for (const one of fleet.instances) await fleet.restart(one.index);
    const user = await createUser(lb);
    const item = await lb.request('POST', '/api/folders', { token: user.accessToken, json: { name: encryptText('bench', user.account.userKey) } });
    expect(item.status).toBe(200);
    const org = await seedOrganization(lb);
    const { token: orgToken } = await orgApiToken(lb, org);
    const login = new URLSearchParams(passwordGrantForm(user.account)).toString();
    const auth = { authorization: `Bearer ${user.accessToken}` };
    const requests: autocannon.Request[] = [
      { method: 'GET', path: '/api/sync', headers: auth },
      { method: 'POST', path: '/api/folders', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: encryptText('bench', user.account.userKey) }) },
      { method: 'GET', path: '/api/public/members', headers: { authorization: `Bearer ${orgToken}` } },
      { method: 'GET', path: '/api/sync', headers: auth },
      { method: 'POST', path: '/identity/connect/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: login },
      { method: 'GET', path: '/api/public/members', headers: { authorization: `Bearer ${orgToken}` } },
    ];
    const rows: string[] = [];
    const measured: Figures[] = [];
    for (const count of [1, 2, 3]) {
      await fleet.route(fleet.instances.slice(0, count).map((i) => i.index));
      const statuses = new Map<number, number>();
      const result = await new Promise<autocannon.Result>((resolve, reject) => {
        const run = autocannon({ url: fleet.url, connections: 12, duration: LOAD_SECONDS, requests }, (error: Error | null, done) => (error ? reject(error) : resolve(done)));
        run.on('response', (_client: unknown, status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
      });
      const f = figures(result);
      if (f.non2xx + f.errors > 0) console.log(`${count} instance(s): statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${result.errors} errors, ${result.timeouts} timeouts; nginx: ${nginxErrors()}`);
      measured.push(f);
      rows.push(`| ${count} | ${f.rps.toFixed(1)} | ${f.p50} | ${f.p99} | ${f.requests} | ${f.non2xx + f.errors} |`);
    }
    await fleet.route(fleet.instances.map((i) => i.index));
    console.log(
      `\nFleet mixed workload (sync 2/6, folder create 1/6, public API 2/6, login 1/6), 12 connections, ${LOAD_SECONDS} s per run, Node ${process.version}\n\n` +
        `| instances | req/s | p50 ms | p99 ms | requests | errors |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n\n` +
        `Scaling: 2 instances ${((measured[1]?.rps ?? 0) / (measured[0]?.rps ?? 1)).toFixed(2)}x, 3 instances ${((measured[2]?.rps ?? 0) / (measured[0]?.rps ?? 1)).toFixed(2)}x of one\n`,
    );
    for (const f of measured) expect(f.non2xx + f.errors).toBe(0);
  }, SLOW);
});
