import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { fileSendBody, textSendBody } from '../../../test/support/sends.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { schemaErrors } from '../../../test/support/vault.js';
import { createMemoryStore } from '../rate-limits/limit-store.js';
import { createSendCodes, SEND_CODE_GUESSES_PER_DAY, SEND_CODE_MAILS, SEND_CODE_MINUTES, SEND_CODE_TRIES } from './send-codes.js';
import { MAX_EMAILS_CHARS } from './send-auth.js';
import { SendResponse } from './sends.schemas.js';

/**
 * Email-verified Sends (authType 0): the owner lists addresses; a recipient asks the identity
 * service for a `send_access` token with one of them, gets a code by mail, and trades the code
 * for the token. The answers never tell a listed address from another one.
 */

const HASH = 'c2VuZC1wYXNzd29yZC1oYXNoLWZyb20tdGhlLWNsaWVudA==';
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;

const clock = testClock();
let server: TestServer;
let sink: SmtpSink;
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ clock, env: { ...sink.env, SEND_ACCESS_PER_MINUTE: '10000' } });
  alice = await createUser(server, { email: 'send-email-owner@example.com' });
  bob = await createUser(server, { email: 'send-email-other@example.com' });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const soon = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
const textSend = (overrides: Record<string, unknown> = {}) => textSendBody(soon(7 * DAY), overrides);
const as = (who: LoggedInUser, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: who.accessToken, ...(json === undefined ? {} : { json }) });
const grant = (form: Record<string, string>) => server.request('POST', '/identity/connect/token', { form: { grant_type: 'send_access', client_id: 'send', scope: 'api.send.access', ...form } });
const open = (token: string) => server.request('POST', '/api/sends/access', { token });
const eventsOf = async (sendId: string) => (await server.database.db.selectFrom('events').select('type').where('send_id', '=', sendId).orderBy('seq').execute()).map((r) => r.type);
const sendCount = async () => (await as(alice, 'GET', '/sends')).body.data.length as number;
const storedCode = async (sendId: string) => (await server.database.db.selectFrom('send_access_codes').select('code_hash').where('send_id', '=', sendId).executeTakeFirst())?.code_hash;

/** The answer to every email step short of a token, as the official server gives it. */
const EMAIL_AND_OTP = { error: 'invalid_request', send_access_error_type: 'email_and_otp_required' };

async function emailSend(emails: string, overrides: Record<string, unknown> = {}) {
  const res = await as(alice, 'POST', '/sends', textSend({ authType: 0, emails, ...overrides }));
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; accessId: string; authType: number; emails: string | null };
}

/** Asks for a code for `email` and reads it from the mail that arrives. */
async function mailedCode(accessId: string, email: string): Promise<string> {
  const asked = await grant({ send_id: accessId, email });
  expect(asked.body, asked.text).toMatchObject(EMAIL_AND_OTP);
  const mail = await sink.waitFor(email.trim());
  const code = /verification code is (\d{6})/.exec(mail.text)?.[1];
  expect(code, mail.text).toBeDefined();
  return code as string;
}

describe('email-verified Sends', () => {
  it('are made with authType 0 and their addresses, which the owner reads back lowercased', async () => {
    const send = await emailSend(' Friend@Example.com, other@example.org ,friend@example.com');
    expect(schemaErrors(SendResponse, send)).toEqual([]);
    expect(send).toMatchObject({ authType: 0, emails: 'friend@example.com,other@example.org', password: null });
    expect((await as(alice, 'GET', '/sync')).body.sends).toContainEqual(send);
    expect(await eventsOf(send.id)).toEqual([2501]);

    const file = await as(alice, 'POST', '/sends/file/v2', fileSendBody(soon(7 * DAY), 10, { authType: 0, emails: 'friend@example.com' }));
    expect(file.status, file.text).toBe(200);
    expect(file.body.sendResponse).toMatchObject({ authType: 0, emails: 'friend@example.com' });
    expect(await eventsOf(file.body.sendResponse.id as string)).toEqual([2504]);
  });

  it('are refused with a 400 naming emails when the list is empty, wrong or too long, and nothing is written', async () => {
    const count = await sendCount();
    const long = Array.from({ length: 200 }, (_, i) => `recipient${i}@example.com`).join(',');
    expect(long.length).toBeGreaterThan(MAX_EMAILS_CHARS);
    for (const emails of [null, '', ' , ', 'not-an-address', 'a@example.com,two words@example.com', long]) {
      const res = await as(alice, 'POST', '/sends', textSend({ authType: 0, emails }));
      expect(res.status, `${JSON.stringify(emails)}: ${res.text}`).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), res.text).toEqual(['emails']);
    }
    expect(await sendCount()).toBe(count);
    const send = await emailSend('friend@example.com');
    const edited = await as(alice, 'PUT', `/sends/${send.id}`, textSend({ authType: 0, emails: 'nobody', maxAccessCount: 4 }));
    expect(Object.keys(edited.body.validationErrors ?? {})).toEqual(['emails']);
    expect((await as(alice, 'GET', `/sends/${send.id}`)).body).toMatchObject({ maxAccessCount: null, emails: 'friend@example.com' });
  });

  it('follow authType when given, and the addresses when older clients send none', async () => {
    expect((await as(alice, 'POST', '/sends', textSend({ authType: null, emails: 'Friend@example.com' }))).body).toMatchObject({ authType: 0, emails: 'friend@example.com' });
    expect((await as(alice, 'POST', '/sends', textSend({ authType: 2, emails: 'friend@example.com' }))).body).toMatchObject({ authType: 2, emails: null });
    expect((await as(alice, 'POST', '/sends', textSend({ authType: 1, password: HASH, emails: 'friend@example.com' }))).body).toMatchObject({ authType: 1, emails: null });
    // An edit from an older client, which never shows the addresses, keeps them (the official server would open the Send).
    const send = await emailSend('friend@example.com');
    expect((await as(alice, 'PUT', `/sends/${send.id}`, textSend({ authType: null, emails: null, maxAccessCount: 3 }))).body).toMatchObject({ authType: 0, emails: 'friend@example.com', maxAccessCount: 3 });
    expect((await as(alice, 'PUT', `/sends/${send.id}`, textSend({ authType: undefined, emails: undefined, password: HASH }))).body).toMatchObject({ authType: 1, emails: null });
    // A password replaces the addresses, and addresses the password.
    const protectedSend = await as(alice, 'POST', '/sends', textSend({ authType: 1, password: HASH }));
    const switched = await as(alice, 'PUT', `/sends/${protectedSend.body.id as string}`, textSend({ authType: 0, emails: 'friend@example.com' }));
    expect(switched.body).toMatchObject({ authType: 0, emails: 'friend@example.com', password: null });
    const back = await as(alice, 'PUT', `/sends/${protectedSend.body.id as string}`, textSend({ authType: 1 }));
    expect(Object.keys(back.body.validationErrors ?? {})).toEqual(['password']);
  });
});

describe('the send_access grant of an email-verified Send', () => {
  it('asks for an address, mails a code to a listed one, and trades address and code for a token', async () => {
    const send = await emailSend('reader@example.com');
    const bare = await grant({ send_id: send.accessId });
    expect([bare.status, bare.body]).toEqual([400, expect.objectContaining({ error: 'invalid_request', send_access_error_type: 'email_required' })]);

    const code = await mailedCode(send.accessId, ' Reader@Example.com ');
    const mail = sink.messages.find((m) => m.to.includes('reader@example.com'));
    expect(mail?.text).toContain(`expires in ${SEND_CODE_MINUTES} minutes`);
    const granted = await grant({ send_id: send.accessId, email: 'reader@example.com', otp: code });
    expect(granted.status, granted.text).toBe(200);
    expect(granted.body).toMatchObject({ token_type: 'Bearer', scope: 'api.send.access' });
    const opened = await open(granted.body.access_token as string);
    expect(opened.status, opened.text).toBe(200);
    expect(opened.body).toMatchObject({ object: 'send-access', id: send.accessId, authType: 0, creatorIdentifier: 'send-email-owner@example.com' });
    expect((await as(alice, 'GET', `/sends/${send.id}`)).body.accessCount).toBe(1);
    expect(await eventsOf(send.id)).toEqual([2501, 2510]);

    // The code worked once.
    expect((await grant({ send_id: send.accessId, email: 'reader@example.com', otp: code })).body).toMatchObject(EMAIL_AND_OTP);
    // The older routes carry no address or code: they cannot open it.
    expect((await server.request('POST', `/api/sends/access/${send.accessId}`, { json: {} })).status).toBe(400);
    expect((await server.request('POST', `/api/sends/access/${send.accessId}`, { json: { password: HASH } })).status).toBe(400);
  });

  it('answers an address not on the list exactly as a listed one, and mails it nothing', async () => {
    const send = await emailSend('listed@example.com');
    const stranger = await grant({ send_id: send.accessId, email: 'stranger@example.com' });
    const listed = await grant({ send_id: send.accessId, email: 'listed@example.com' });
    expect(stranger.status).toBe(400);
    expect(stranger.body).toEqual(listed.body);
    const code = /verification code is (\d{6})/.exec((await sink.waitFor('listed@example.com')).text)?.[1] as string;
    expect(sink.messages.some((m) => m.to.includes('stranger@example.com'))).toBe(false);
    // Nor does the listed address's code open the Send for another address.
    const guessed = await grant({ send_id: send.accessId, email: 'stranger@example.com', otp: code });
    expect(guessed.body).toEqual(listed.body);
    expect((await grant({ send_id: send.accessId, email: 'listed@example.com', otp: code })).status).toBe(200);
  });

  it('refuses wrong, replaced and expired codes alike, and a code past its tries', async () => {
    const send = await emailSend('tries@example.com');
    const first = await mailedCode(send.accessId, 'tries@example.com');
    const other = (...codes: string[]) => ['000000', '111111', '222222'].find((c) => !codes.includes(c)) as string;
    const answers = [await grant({ send_id: send.accessId, email: 'tries@example.com', otp: other(first) })];

    // A new code replaces the one before, which then counts as a wrong try of the new one.
    const second = await mailedCode(send.accessId, 'tries@example.com');
    const tries = [second === first ? other(second) : first, ...Array.from({ length: SEND_CODE_TRIES - 1 }, () => other(first, second))];
    for (const otp of tries) answers.push(await grant({ send_id: send.accessId, email: 'tries@example.com', otp }));
    // Past its tries, the right code is refused too.
    answers.push(await grant({ send_id: send.accessId, email: 'tries@example.com', otp: second }));
    for (const answer of answers) expect([answer.status, answer.body]).toEqual([400, expect.objectContaining(EMAIL_AND_OTP)]);

    clock.advance(SEND_CODE_MINUTES * MINUTE);
    const late = await mailedCode(send.accessId, 'tries@example.com');
    clock.advance(SEND_CODE_MINUTES * MINUTE + 1000);
    expect((await grant({ send_id: send.accessId, email: 'tries@example.com', otp: late })).body).toMatchObject(EMAIL_AND_OTP);
    const fresh = await mailedCode(send.accessId, 'tries@example.com');
    expect((await grant({ send_id: send.accessId, email: 'tries@example.com', otp: fresh })).status).toBe(200);
  });

  it(`checks at most ${SEND_CODE_TRIES} of many wrong codes sent at once`, async () => {
    const send = await emailSend('race@example.com');
    const code = await mailedCode(send.accessId, 'race@example.com');
    const wrong = code === '000000' ? '111111' : '000000';
    // Straight to the service: HTTP requests of one test client rarely overlap enough to race.
    const unusedMailer = { enabled: false, send: async () => undefined, check: async () => undefined };
    const codes = createSendCodes({ db: server.database.db, clock, mailer: unusedMailer, brand: { serverName: 'x', publicUrl: 'https://x' }, limits: createMemoryStore({ maxKeys: 10 }) });
    const answers = await Promise.all(Array.from({ length: 3 * SEND_CODE_TRIES }, () => codes.use(send.id, 'race@example.com', wrong)));
    expect(answers).toEqual(answers.map(() => false));
    // Each check spends a try first, so the count stops at the limit (or the spent code is gone).
    const row = await server.database.db.selectFrom('send_access_codes').select('attempts').where('send_id', '=', send.id).executeTakeFirst();
    expect([undefined, SEND_CODE_TRIES]).toContain(row?.attempts);
    expect((await grant({ send_id: send.accessId, email: 'race@example.com', otp: code })).body).toMatchObject(EMAIL_AND_OTP);
  });

  it(`allows one address ${SEND_CODE_GUESSES_PER_DAY} wrong codes a day, however many codes it is mailed`, async () => {
    clock.advance(SEND_CODE_MINUTES * MINUTE);
    const send = await emailSend('guesser@example.com,other-guesser@example.com');
    const wrongFor = (code: string) => (code === '000000' ? '111111' : '000000');
    let guessed = 0;
    while (guessed < SEND_CODE_GUESSES_PER_DAY) {
      clock.advance(SEND_CODE_MINUTES * MINUTE);
      const code = await mailedCode(send.accessId, 'guesser@example.com');
      for (let i = 0; i < SEND_CODE_TRIES && guessed < SEND_CODE_GUESSES_PER_DAY; i++, guessed++) {
        expect((await grant({ send_id: send.accessId, email: 'guesser@example.com', otp: wrongFor(code) })).body).toMatchObject(EMAIL_AND_OTP);
      }
    }
    // A fresh code has all its tries, but the address has no guess left today: even the right code is refused.
    clock.advance(SEND_CODE_MINUTES * MINUTE);
    const refused = await mailedCode(send.accessId, 'guesser@example.com');
    expect((await grant({ send_id: send.accessId, email: 'guesser@example.com', otp: refused })).body).toMatchObject(EMAIL_AND_OTP);
    // Another address of the same Send keeps its own guesses.
    const otherCode = await mailedCode(send.accessId, 'other-guesser@example.com');
    expect((await grant({ send_id: send.accessId, email: 'other-guesser@example.com', otp: otherCode })).status).toBe(200);

    clock.advance(DAY);
    // A day later the test's access tokens have run out too.
    [alice, bob] = [await loginAccount(server, alice.account), await loginAccount(server, bob.account)];
    const next = await mailedCode(send.accessId, 'guesser@example.com');
    expect((await grant({ send_id: send.accessId, email: 'guesser@example.com', otp: next })).status).toBe(200);
  });

  it(`mails one address at most ${SEND_CODE_MAILS} codes for a Send in ${SEND_CODE_MINUTES} minutes`, async () => {
    clock.advance(SEND_CODE_MINUTES * MINUTE);
    const send = await emailSend('flood@example.com');
    for (let i = 0; i < SEND_CODE_MAILS; i++) await mailedCode(send.accessId, 'flood@example.com');
    const kept = await storedCode(send.id);
    expect((await grant({ send_id: send.accessId, email: 'flood@example.com' })).body).toMatchObject(EMAIL_AND_OTP);
    expect(await storedCode(send.id)).toBe(kept);
    clock.advance(SEND_CODE_MINUTES * MINUTE);
    await mailedCode(send.accessId, 'flood@example.com');
    expect(await storedCode(send.id)).not.toBe(kept);
  });

  it('gives tokens that stop working once the address leaves the list or the Send stops being email-verified', async () => {
    const send = await emailSend('keep@example.com,drop@example.com');
    const tokenFor = async (email: string) => (await grant({ send_id: send.accessId, email, otp: await mailedCode(send.accessId, email) })).body.access_token as string;
    const kept = await tokenFor('keep@example.com');
    const dropped = await tokenFor('drop@example.com');
    expect((await as(alice, 'PUT', `/sends/${send.id}`, textSend({ authType: 0, emails: 'keep@example.com,new@example.com' }))).status).toBe(200);
    expect((await open(kept)).status).toBe(200);
    expect((await open(dropped)).status).toBe(401);

    const removed = await as(alice, 'PUT', `/sends/${send.id}/remove-auth`);
    expect(removed.body).toMatchObject({ authType: 2, emails: null, password: null });
    expect((await open(kept)).status).toBe(401);
    const openToAll = await grant({ send_id: send.accessId });
    expect(openToAll.status, openToAll.text).toBe(200);
    expect((await open(openToAll.body.access_token as string)).status).toBe(200);
  });
});

describe('remove-auth', () => {
  it('removes the addresses or the password, records an edit, and answers 404 for a Send not the caller\'s', async () => {
    const email = await emailSend('gone@example.com');
    expect((await as(bob, 'PUT', `/sends/${email.id}/remove-auth`)).status).toBe(404);
    const removed = await as(alice, 'PUT', `/sends/${email.id}/remove-auth`);
    expect(removed.status, removed.text).toBe(200);
    expect(schemaErrors(SendResponse, removed.body)).toEqual([]);
    expect(removed.body).toMatchObject({ authType: 2, emails: null, password: null });
    expect(await eventsOf(email.id)).toEqual([2501, 2506]);
    expect(await server.database.db.selectFrom('sends').select(['emails', 'password_hash']).where('id', '=', email.id).executeTakeFirst()).toEqual({ emails: null, password_hash: null });

    const withPassword = await as(alice, 'POST', '/sends', textSend({ authType: 1, password: HASH }));
    const viaPassword = await as(alice, 'PUT', `/sends/${withPassword.body.id as string}/remove-auth`);
    expect(viaPassword.body).toMatchObject({ authType: 2, password: null });
    // The older route does the same.
    const older = await emailSend('older@example.com');
    expect((await as(alice, 'PUT', `/sends/${older.id}/remove-password`)).body).toMatchObject({ authType: 2, emails: null });
    expect((await as(alice, 'PUT', '/sends/00000000-0000-0000-0000-000000000000/remove-auth')).status).toBe(404);
  });
});
