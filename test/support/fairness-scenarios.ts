/**
 * The abuse scenarios of issue #36 for the fairness harness (fairness.ts): each prepares its
 * accounts and request bodies before the clock starts, attacks from 127.0.0.1 in one or more
 * loops, and checks afterwards that what it attempted was written whole or not at all.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { passwordGrantForm, testAccount } from './accounts.js';
import { encryptText, registerFinishBody } from './bw-crypto.js';
import { ATTACKER_ADDRESS, newItem, send, type Move, type RequestOptions, type Scenario, type Setup, type User } from './fairness.js';

const JSON_TYPE = { 'content-type': 'application/json' };
/** The size of the probe's JSON bombs: under the 16 MiB body limit of the server it probed. */
const BOMB_BYTES = 16_000_000;
/** The issue's import: 7,000 items. */
const IMPORT_ITEMS = 7000;
/** The largest batch /events/collect takes (COLLECT_MAX_EVENTS). */
const COLLECT_BATCH = 10_000;
const COLLECT_NUMBERS = 2_000_000;
/** Cipher_ClientViewed and Cipher_AttachmentCreated (EventType). */
const CLIENT_VIEWED = 1107;
const ATTACHMENT_CREATED = 1103;

/** `count(*)` of `table`, of the rows where `column` is `value` when given. */
async function count(db: Db, table: string, column?: string, value?: string | number): Promise<number> {
  const where = column === undefined ? sql`` : sql`where ${sql.ref(column)} = ${value}`;
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} ${where}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** A move that sends one request built by `next` and answers its status. */
function requester(setup: Setup, next: () => { method?: string; path: string } & RequestOptions): Move {
  return async (signal) => {
    const { method = 'POST', path, ...options } = next();
    return String((await send(setup.attacker, setup.baseUrl, method, path, { ...options, signal })).status);
  };
}

let bombs: { nested: Buffer; wide: Buffer } | undefined;
/** A deeply nested array and an object of about 1.3 million keys, BOMB_BYTES each; made once a process. */
function jsonBombs(): { nested: Buffer; wide: Buffer } {
  if (!bombs) {
    const wide = Array.from({ length: Math.floor((BOMB_BYTES - 2) / 13) }, (_, i) => `"k${String(i).padStart(7, '0')}":0`).join(',');
    bombs = { nested: Buffer.from('['.repeat(BOMB_BYTES / 2) + ']'.repeat(BOMB_BYTES / 2)), wide: Buffer.from(`{${wide}}`) };
  }
  return bombs;
}

/** (a) Anonymous JSON bombs: `attackers` at once, each in turn to every anonymous route that takes JSON, nested then wide. */
export function anonymousJsonBombs(attackers: number): Scenario {
  const routes = ['/identity/accounts/register/finish', '/api/auth-requests', `/api/sends/access/${randomBytes(16).toString('base64url')}`, '/api/accounts/password-hint', '/api/two-factor/recover'];
  return {
    name: `anonymous JSON bombs (16 MB, nested and wide), ${attackers} at once`,
    async prepare(setup) {
      const { nested, wide } = jsonBombs();
      return {
        attackers: Array.from({ length: attackers }, (_, a) => {
          let n = a;
          return requester(setup, () => {
            n += 1;
            return { path: routes[n % routes.length] as string, body: Math.floor(n / routes.length) % 2 === 0 ? nested : wide, headers: JSON_TYPE };
          });
        }),
        async verify(db) {
          const problems: string[] = [];
          if ((await count(db, 'users')) !== 1) problems.push('a bomb created an account');
          if ((await count(db, 'auth_requests')) !== 0) problems.push('a bomb created an auth request');
          return problems;
        },
      };
    },
  };
}

/** (b) One account posting the largest /events/collect batches in a loop, and a body of 2,000,000 numbers in another. */
export function eventLogFlood(): Scenario {
  return {
    name: `event-log flood: ${COLLECT_BATCH.toLocaleString('en-US')}-event batches in a loop, and ${COLLECT_NUMBERS.toLocaleString('en-US')} numbers`,
    async prepare(setup) {
      const user = await setup.newUser('collector');
      const item = await newItem(setup.attacker, setup.baseUrl, user);
      const batch = Buffer.from(JSON.stringify(Array.from({ length: COLLECT_BATCH }, () => ({ type: CLIENT_VIEWED, cipherId: item, date: null }))));
      const numbers = Buffer.from(`[${Array.from({ length: COLLECT_NUMBERS }, (_, i) => 1_000_000 + i).join(',')}]`);
      let accepted = 0;
      const collect: Move = async (signal) => {
        const res = await send(setup.attacker, setup.baseUrl, 'POST', '/events/collect', { token: user.token, body: batch, headers: JSON_TYPE, signal });
        if (res.status === 200) accepted += 1;
        return String(res.status);
      };
      return {
        attackers: [collect, requester(setup, () => ({ path: '/events/collect', token: user.token, body: numbers, headers: JSON_TYPE }))],
        async verify(db) {
          const read = async () => Number((await db.selectFrom('events').select(sql<number | string>`count(*)`.as('n')).where('cipher_id', '=', item).where('type', '=', CLIENT_VIEWED).executeTakeFirstOrThrow()).n);
          const written = await atRest(read, (n) => n % COLLECT_BATCH === 0);
          // Whole batches only once the server is at rest, at least every acknowledged one.
          if (written % COLLECT_BATCH !== 0 || written < accepted * COLLECT_BATCH) return [`${written} events written for ${accepted} acknowledged batches of ${COLLECT_BATCH}`];
          return [];
        },
      };
    },
  };
}

/**
 * Reads `read` until `whole` holds of its figure, for up to 60 s: work the server took on before
 * the attack stopped (an import, a batch of events) runs on in slices after its client gave up,
 * and is checked once it has come to rest. The last figure read.
 */
async function atRest(read: () => Promise<number>, whole: (figure: number) => boolean): Promise<number> {
  const deadline = Date.now() + 60_000;
  let figure = await read();
  while (!whole(figure) && Date.now() < deadline) {
    await sleep(250);
    figure = await read();
  }
  return figure;
}

/** (c) One user importing a 7,000-item vault, `attackers` imports at once, again and again. */
export function vaultImports(attackers: number): Scenario {
  return {
    name: `${IMPORT_ITEMS.toLocaleString('en-US')}-item imports by one user, ${attackers === 1 ? 'one at a time' : `${attackers} at once`}`,
    async prepare(setup) {
      const user = await setup.newUser('importer');
      // Every encrypted field the same valid EncString: the server never reads them, and the body is made in milliseconds.
      const e = encryptText('imported', user.account.userKey);
      const item = { type: 1, name: e, notes: null, favorite: false, reprompt: 0, login: { uris: [{ uri: e, match: null }], username: e, password: e, totp: null }, fields: [] };
      const body = Buffer.from(JSON.stringify({ folders: [], ciphers: Array.from({ length: IMPORT_ITEMS }, () => item), folderRelationships: [] }));
      let accepted = 0;
      const importing: Move = async (signal) => {
        const res = await send(setup.attacker, setup.baseUrl, 'POST', '/api/ciphers/import', { token: user.token, body, headers: JSON_TYPE, signal });
        if (res.status === 200) accepted += 1;
        return String(res.status);
      };
      return {
        attackers: Array.from({ length: attackers }, () => importing),
        async verify(db) {
          const items = await atRest(() => count(db, 'ciphers', 'user_id', user.userId), (n) => n % IMPORT_ITEMS === 0);
          if (items % IMPORT_ITEMS !== 0 || items < accepted * IMPORT_ITEMS) return [`${items} items stored for ${accepted} acknowledged imports of ${IMPORT_ITEMS}`];
          return [];
        },
      };
    },
  };
}

/** Multipart bodies that are not well formed: no boundary, an empty one, one far over RFC 2046's 70 characters, a body cut short. */
function malformedUploads(key: string): { contentType: string; body: string }[] {
  const part = (boundary: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\n${key}\r\n--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="${key}"\r\nContent-Type: application/octet-stream\r\n\r\n${'x'.repeat(1000)}`;
  const long = 'b'.repeat(1000);
  return [
    { contentType: 'multipart/form-data', body: part('b0undary') + '\r\n--b0undary--\r\n' },
    { contentType: 'multipart/form-data; boundary=', body: part('') + '\r\n----\r\n' },
    { contentType: `multipart/form-data; boundary=${long}`, body: part(long) + `\r\n--${long}--\r\n` },
    { contentType: 'multipart/form-data; boundary=b0undary', body: part('b0undary').slice(0, -500) },
  ];
}

/** (d) Malformed multipart uploads in a loop to the upload routes: the one-step attachment upload, a reserved attachment's, a file Send's. */
export function malformedMultipart(attackers: number): Scenario {
  return {
    name: `malformed multipart uploads, ${attackers} at once`,
    async prepare(setup) {
      const user = await setup.newUser('uploader');
      const key = encryptText('attachment key', user.account.userKey);
      const call = async (method: string, path: string, json: unknown) => {
        const res = await send(setup.attacker, setup.baseUrl, method, path, { token: user.token, json });
        if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
        return JSON.parse(res.text) as Record<string, unknown>;
      };
      const legacy = await newItem(setup.attacker, setup.baseUrl, user);
      const reserved = await newItem(setup.attacker, setup.baseUrl, user);
      const attachment = await call('POST', `/api/ciphers/${reserved}/attachment/v2`, { key, fileName: key, fileSize: 1000, adminRequest: false, lastKnownRevisionDate: null });
      const deletion = new Date(Date.now() + 86_400_000).toISOString();
      const sendFile = await call('POST', '/api/sends/file/v2', { type: 1, name: key, notes: null, key, maxAccessCount: null, expirationDate: null, deletionDate: deletion, text: null, file: { fileName: key }, fileLength: 1000, password: null, emails: null, disabled: false, hideEmail: false, authType: 2 });
      const before = await call('GET', `/api/ciphers/${legacy}`, undefined);
      const routes = [`/api/ciphers/${legacy}/attachment`, `/api/ciphers/${reserved}/attachment/${String(attachment.attachmentId)}`, `/api${String(sendFile.url)}`];
      const uploads = malformedUploads(key);
      let n = 0;
      return {
        attackers: Array.from({ length: attackers }, () =>
          requester(setup, () => {
            const upload = uploads[n % uploads.length]!;
            const path = routes[Math.floor(n++ / uploads.length) % routes.length] as string;
            return { path, token: user.token, body: upload.body, headers: { 'content-type': upload.contentType } };
          }),
        ),
        async verify(db, attacks) {
          // Every upload was malformed: none may be taken, and the one-step upload's item must be as it was.
          const problems: string[] = [];
          if (attacks['200']) problems.push(`${attacks['200']} malformed upload(s) accepted (200)`);
          const after = await call('GET', `/api/ciphers/${legacy}`, undefined);
          if (after.revisionDate !== before.revisionDate) problems.push("the one-step upload's item has a new revision date");
          if (JSON.stringify(after.attachments) !== JSON.stringify(before.attachments)) problems.push("the one-step upload's item has an attachment");
          if (await db.selectFrom('events').select('id').where('cipher_id', '=', legacy).where('type', '=', ATTACHMENT_CREATED).executeTakeFirst()) {
            problems.push("the one-step upload's item has a Cipher_AttachmentCreated event");
          }
          return problems;
        },
      };
    },
  };
}

/** One raw connection that declares a 10 MB JSON body to an anonymous route and sends a byte a second, until the server closes it or the run ends. */
async function slowBody(baseUrl: string, signal: AbortSignal): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port), localAddress: ATTACKER_ADDRESS });
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  socket.once('connect', () => {
    socket.write(`POST /identity/accounts/prelogin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n{"email":"`);
    timer = setInterval(() => socket.writable && socket.write('a'), 1000);
  });
  const onAbort = () => socket.destroy();
  signal.addEventListener('abort', onAbort, { once: true });
  await closed;
  clearInterval(timer);
  signal.removeEventListener('abort', onAbort);
  if (signal.aborted) return 'held to the end';
  // Closed by the server (the cap on one address's connections, a timeout): the attacker comes back a second later.
  await sleep(1000);
  const status = /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1];
  return status ? `closed after ${status}` : 'closed';
}

/** (e) Slow bodies: `connections` at once from one address, each reopened when the server closes it. */
export function slowBodies(connections: number): Scenario {
  return {
    name: `slow bodies: ${connections} connections trickling a 10 MB body`,
    async prepare(setup) {
      return {
        attackers: Array.from({ length: connections }, () => (signal: AbortSignal) => slowBody(setup.baseUrl, signal)),
        async verify(db) {
          return (await count(db, 'users')) === 1 ? [] : ['a slow body created an account'];
        },
      };
    },
  };
}

/** (f) Password logins with wrong passwords (a real account and unknown ones) and registrations of new accounts, `each` of both at once. */
export function loginAndRegistrationFloods(each: number): Scenario {
  return {
    name: `login and registration floods, ${each} of each at once`,
    async prepare(setup) {
      const target: User = await setup.newUser('flood-target');
      const template = 'flood-template@fairness.test';
      const registration = JSON.stringify(registerFinishBody(testAccount(template)));
      const wrong = { password: randomBytes(32).toString('base64') };
      const acknowledged: string[] = [];
      let attempted = 0;
      let n = 0;
      const login: Move = async (signal) => {
        const username = ++n % 2 === 0 ? target.account.email : `nobody-${n}@fairness.test`;
        const form = { ...passwordGrantForm(target.account), ...wrong, username };
        return `login ${(await send(setup.attacker, setup.baseUrl, 'POST', '/identity/connect/token', { form, signal })).status}`;
      };
      const register: Move = async (signal) => {
        const email = `flood-${randomUUID()}@fairness.test`;
        attempted += 1;
        const res = await send(setup.attacker, setup.baseUrl, 'POST', '/identity/accounts/register/finish', { body: registration.replaceAll(template, email), headers: JSON_TYPE, signal });
        if (res.status === 200) acknowledged.push(email);
        return `registration ${res.status}`;
      };
      return {
        attackers: [...Array.from({ length: each }, () => login), ...Array.from({ length: each }, () => register)],
        async verify(db) {
          // The victim, the target and the registrations: every acknowledged one, at most every one attempted.
          const made = (await count(db, 'users')) - 2;
          const found = acknowledged.length === 0 ? 0 : Number((await db.selectFrom('users').select(sql<number | string>`count(*)`.as('n')).where('email', 'in', acknowledged).executeTakeFirstOrThrow()).n);
          if (found !== acknowledged.length || made < acknowledged.length || made > attempted) return [`${made} accounts made by ${attempted} registrations, ${acknowledged.length} acknowledged, ${found} of them found`];
          return [];
        },
      };
    },
  };
}

/** No attack: the victim's figures with nothing else going on, to read the others against (the machine's own noise). */
export function noAttack(): Scenario {
  return {
    name: 'no attack (the victim alone)',
    async prepare() {
      return { attackers: [], verify: async () => [] };
    },
  };
}

/** The scenarios the CI test runs: each of the issue's, at its heavier setting. */
export const CI_SCENARIOS: Scenario[] = [
  anonymousJsonBombs(6),
  eventLogFlood(),
  vaultImports(5),
  malformedMultipart(4),
  slowBodies(200),
  loginAndRegistrationFloods(10),
];
