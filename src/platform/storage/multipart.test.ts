import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, type Actor } from '../../../test/support/admin.js';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { seedOrgItem, seedPersonalItem } from '../../../test/support/org-items.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { BadRequest } from '../../http/errors.js';
import { OrganizationUserType } from '../access/roles.js';
import { guarded } from './multipart.js';

const NAME = '2.BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=';
const SIZE = 1000;
const DAY = 24 * 60 * 60 * 1000;

let server: TestServer;
let alice: LoggedInUser;
let owner: Actor;
let org: string;

beforeAll(async () => {
  server = await startTestServer({ env: { ATTACHMENT_USER_QUOTA_MB: '2', FILE_MAX_MB: '1' } });
  alice = await createUser(server, { email: 'alice@example.com' });
  org = await seedOrganization(server, { name: 'Multipart Org' });
  owner = await actor(server, org, 'multipart-owner@example.com', { type: OrganizationUserType.Owner });
  await seedMembership(server, { organizationId: org, userId: alice.userId, email: 'alice@example.com' });
});
afterAll(async () => {
  await server?.close();
});

const api = (who: { accessToken: string }, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: who.accessToken, ...(json === undefined ? {} : { json }) });

/** Where one of the upload routes takes a file, freshly set up for one request, and who may post there. */
interface Target {
  path: string;
  token: string;
  /** The form field the file goes in. */
  field: string;
  /** False where a failed upload drops the reservation it was for (a v2 attachment, a Send), as the client then starts again. */
  keepsRows?: boolean;
}

/** The five attachment and Send upload routes, and the organization license upload. */
const ROUTES: Record<string, () => Promise<Target>> = {
  'a reserved attachment (v2)': async () => {
    const id = await seedPersonalItem(server, alice.userId);
    const begun = await api(alice, 'POST', `/ciphers/${id}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: SIZE });
    expect(begun.status, begun.text).toBe(200);
    return { path: `/api/ciphers/${id}/attachment/${begun.body.attachmentId as string}`, token: alice.accessToken, field: 'data', keepsRows: false };
  },
  'the one-step upload': async () => ({ path: `/api/ciphers/${await seedPersonalItem(server, alice.userId)}/attachment`, token: alice.accessToken, field: 'data' }),
  "the admin console's one-step upload": async () => ({ path: `/api/ciphers/${await seedOrgItem(server, org)}/attachment-admin`, token: owner.token, field: 'data' }),
  'a re-upload for a share': async () => {
    const id = await seedPersonalItem(server, alice.userId);
    const original = { fileName: NAME, key: null, size: SIZE, validated: true, uploadStarted: new Date().toISOString() };
    await server.database.db.updateTable('ciphers').set({ attachments: JSON.stringify({ original }) }).where('id', '=', id).execute();
    return { path: `/api/ciphers/${id}/attachment/original/share?organizationId=${org}`, token: alice.accessToken, field: 'data' };
  },
  "a Send's file": async () => {
    const send = { type: 1, name: ENC, key: ENC, deletionDate: new Date(Date.now() + DAY).toISOString(), file: { fileName: ENC }, fileLength: SIZE, disabled: false, hideEmail: false };
    const created = await api(alice, 'POST', '/sends/file/v2', send);
    expect(created.status, created.text).toBe(200);
    return { path: `/api${created.body.url as string}`, token: alice.accessToken, field: 'data', keepsRows: false };
  },
  'the organization license': async () => ({ path: '/api/organizations/license', token: alice.accessToken, field: 'license' }),
};

const BOUNDARY = 'strongroom-probe-boundary';
const LONG = 'b'.repeat(71);

/** A form as the clients send it: the key field, then the file. */
function form(boundary: string, field: string, bytes: Buffer): { head: Buffer; file: Buffer; tail: Buffer } {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\n${ENC}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${NAME}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  return { head, file: bytes, tail: Buffer.from(`\r\n--${boundary}--\r\n`) };
}

interface Shape {
  contentType: string;
  body: (field: string) => Buffer;
  /** Declares the whole body but sends only `body`, then closes the connection. */
  hangUp?: boolean;
  message: RegExp;
}

const whole = (boundary: string) => (field: string) => {
  const { head, file, tail } = form(boundary, field, randomBytes(SIZE));
  return Buffer.concat([head, file, tail]);
};
const SHAPES: Record<string, Shape> = {
  'no boundary parameter': { contentType: 'multipart/form-data', body: whole(BOUNDARY), message: /no boundary parameter/ },
  'an empty boundary': { contentType: 'multipart/form-data; boundary=', body: whole(BOUNDARY), message: /boundary is empty/ },
  'a boundary over 70 characters': { contentType: `multipart/form-data; boundary=${LONG}`, body: whole(LONG), message: /longer than 70 characters/ },
  'a body cut off inside the file': {
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body: (field) => {
      const { head, file } = form(BOUNDARY, field, randomBytes(SIZE));
      return Buffer.concat([head, file.subarray(0, SIZE / 2)]);
    },
    message: /ends before its closing boundary/,
  },
  'a body without its closing delimiter': {
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body: (field) => {
      const { head, file } = form(BOUNDARY, field, randomBytes(SIZE));
      return Buffer.concat([head, file, Buffer.from('\r\n')]);
    },
    message: /ends before its closing boundary/,
  },
  'a client that hangs up mid-upload': {
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body: (field) => {
      const { head, file } = form(BOUNDARY, field, randomBytes(SIZE));
      return Buffer.concat([head, file.subarray(0, SIZE / 2)]);
    },
    hangUp: true,
    message: /./,
  },
};

/**
 * Sends a request byte for byte on a socket of its own (fetch cannot send a malformed body or
 * hang up on purpose): answers the status and the JSON body, or null after hanging up.
 */
function rawPost(target: Target, shape: Shape): Promise<{ status: number; body: { message: string } } | null> {
  const url = new URL(server.baseUrl);
  const body = shape.body(target.field);
  const declared = shape.hangUp ? body.length + SIZE : body.length;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      const head = [`POST ${target.path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close', `Authorization: Bearer ${target.token}`, `Content-Type: ${shape.contentType}`, `Content-Length: ${declared}`];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      socket.write(body);
      // Long enough for the server to have started on the part before the connection goes.
      if (shape.hangUp) setTimeout(() => (socket.destroy(), resolve(null)), 150);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const [head = '', json = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: json ? (JSON.parse(json) as { message: string }) : { message: '' } });
    });
    socket.on('error', reject);
  });
}

/** Every file in the store, temporary files of uploads in progress included. */
async function storedFiles(): Promise<string[]> {
  const entries = await readdir(server.filesDir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => `${e.parentPath}/${e.name}`);
}

/**
 * Waits until the server has finished with the request: no upload is still being written. After
 * a hang-up there is no answer to wait for; the server is done within milliseconds.
 */
async function settled(hungUp: boolean): Promise<void> {
  if (hungUp) await sleep(300);
  for (let i = 0; i < 100 && (await storedFiles()).some((f) => f.endsWith('.tmp')); i++) await sleep(20);
}

/**
 * What a refused upload must leave as it was: the events, every revision date, the storage counted,
 * and (unless the upload was for a reservation, which a failed upload drops) the items'
 * attachments and the Sends.
 */
async function written(keepsRows = true) {
  const db = server.database.db;
  return {
    events: (await db.selectFrom('events').select('id').execute()).length,
    items: await db.selectFrom('ciphers').select(keepsRows ? ['id', 'revision_date', 'attachments'] : ['id', 'revision_date']).orderBy('id').execute(),
    accounts: await db.selectFrom('users').select(['id', 'revision_date', 'account_revision_date', 'storage_bytes']).orderBy('id').execute(),
    organizations: await db.selectFrom('organizations').select(['id', 'storage_bytes']).orderBy('id').execute(),
    sends: keepsRows ? await db.selectFrom('sends').select(['id', 'data', 'revision_date']).orderBy('id').execute() : null,
  };
}

describe('malformed multipart uploads', () => {
  it('answers every malformed shape on every upload route with a 400 naming the problem, and writes nothing', async () => {
    for (const [route, setUp] of Object.entries(ROUTES)) {
      for (const [what, shape] of Object.entries(SHAPES)) {
        const target = await setUp();
        const filesBefore = await storedFiles();
        const before = await written(target.keepsRows);
        const logged = server.logs.lines.length;
        const answer = await rawPost(target, shape);
        await settled(answer === null);
        const context = `${route}: ${what}`;
        // Soft: one run reports every route and shape that fails.
        if (answer) {
          expect.soft(answer.status, context).toBe(400);
          expect.soft(answer.body.message, context).toMatch(shape.message);
        }
        expect.soft(server.logs.lines.slice(logged).filter((l) => l.includes('"level":50')), context).toEqual([]);
        expect.soft(await storedFiles(), context).toEqual(filesBefore);
        expect.soft(await written(target.keepsRows), context).toEqual(before);
      }
    }
  });
});

describe('the file stream handed to the services', () => {
  // Through HTTP this depends on timing: on PostgreSQL the table above hung on it (the parser
  // failed the part between handing it over and the stream being wrapped).
  it('carries a failure of the part from before it was handed over, as a 400, instead of never ending', async () => {
    const part = new PassThrough();
    part.on('error', () => undefined);
    part.destroy(new Error('Part terminated early due to unexpected end of multipart data'));
    await sleep(10);
    const stream = guarded(part);
    const read = pipeline(stream, new Writable({ write: (_chunk, _encoding, done) => done() })).then(() => 'ended', (error: unknown) => error);
    const failure = await Promise.race([read, sleep(2000).then(() => 'never ended')]);
    expect(failure).toBeInstanceOf(BadRequest);
    expect((failure as BadRequest).message).toMatch(/ends before its closing boundary/);
  });
});

describe('the one-step upload (older clients)', () => {
  it('records nothing for a body cut off inside the file: no attachment, event, revision, storage or file', async () => {
    const id = await seedPersonalItem(server, alice.userId);
    const db = server.database.db;
    const item = () => db.selectFrom('ciphers').select(['attachments', 'revision_date']).where('id', '=', id).executeTakeFirstOrThrow();
    const account = () => db.selectFrom('users').select(['account_revision_date', 'storage_bytes']).where('id', '=', alice.userId).executeTakeFirstOrThrow();
    const [itemBefore, accountBefore] = [await item(), await account()];
    const answer = await rawPost({ path: `/api/ciphers/${id}/attachment`, token: alice.accessToken, field: 'data' }, SHAPES['a body cut off inside the file']!);
    expect(answer?.status).toBe(400);
    await settled(false);
    expect(await item()).toEqual(itemBefore);
    expect(await account()).toEqual(accountBefore);
    expect(await db.selectFrom('events').select('type').where('cipher_id', '=', id).execute()).toEqual([]);
    expect((await storedFiles()).filter((f) => f.includes(id))).toEqual([]);
  });
});

describe('files at the size limit', () => {
  it('refuses a file longer than announced at the largest size allowed, rather than storing it cut short', async () => {
    const max = server.config.fileMaxMb * 1024 * 1024;
    const id = await seedPersonalItem(server, alice.userId);
    const begun = await api(alice, 'POST', `/ciphers/${id}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: max });
    expect(begun.status, begun.text).toBe(200);
    const { head, file, tail } = form(BOUNDARY, 'data', randomBytes(max + 10));
    const shape: Shape = { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body: () => Buffer.concat([head, file, tail]), message: /./ };
    const answer = await rawPost({ path: `/api/ciphers/${id}/attachment/${begun.body.attachmentId as string}`, token: alice.accessToken, field: 'data' }, shape);
    expect([answer?.status, answer?.body.message]).toEqual([400, 'File received does not match expected file length.']);
    expect((await storedFiles()).filter((f) => f.includes(id))).toEqual([]);
  });
});
