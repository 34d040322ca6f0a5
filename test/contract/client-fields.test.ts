/**
 * Every response field the official clients read (test/contract/official-client-fields.json,
 * read from a named clients release and sdk-internal by scripts/official-client-fields.ts) is in
 * Strongroom's OpenAPI answer schema for the routes that answer it, and in live answers of the
 * central routes, or is named in MISSING with the issue that will send it. A field a new client
 * release reads fails here, and so does a MISSING entry that is now sent or no longer read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, passwordGrantForm, type LoggedInUser } from '../support/accounts.js';
import { encryptText } from '../support/bw-crypto.js';
import { createOrganization } from '../support/org-founding.js';
import { ALL_ROUTES_ENV, openApiDocument, type JsonSchema, type OpenApiDocument } from '../support/openapi.js';
import { textSendBody } from '../support/sends.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { cipherBody } from '../support/vault.js';
import { tsModelsOf } from '../../scripts/official-client-fields.js';
import { rustReadsOf, rustStructsOf } from '../../scripts/official-client-fields.rust.js';
import { FIELD_LIST, keyFor, liveMisses, parseField, schemaMisses, type Miss } from './client-fields.js';
import { MISSING } from './client-fields.missing.js';

/** `GET /api/organizations/{orgId}/users` -> `get /api/organizations/{}/users`. */
const shapeOf = (route: string) => route.replace(/\{[^}]*\}/g, '{}').toLowerCase();

function answerSchema(doc: OpenApiDocument, route: string): JsonSchema | undefined {
  const [method, path] = route.split(' ') as [string, string];
  for (const [p, item] of Object.entries(doc.paths)) {
    if (shapeOf(`${method} ${p}`) !== shapeOf(route)) continue;
    const op = item[method.toLowerCase()] as { responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }> } | undefined;
    const ok = Object.entries(op?.responses ?? {}).find(([code]) => code.startsWith('2'))?.[1];
    return ok?.content?.['application/json']?.schema;
  }
  throw new Error(`${route} (${path}) is not in the OpenAPI document`);
}

/** Misses per route, deduplicated by where they are. */
const render = (route: string, misses: Miss[]) => [...new Set(misses.filter((m) => !(m.key in MISSING)).map((m) => `${route}: ${m.at} (${m.key}) ${m.problem}`))];

let server: TestServer;
let doc: OpenApiDocument;
const live = new Map<string, unknown>();

beforeAll(async () => {
  server = await startTestServer({ env: { ...ALL_ROUTES_ENV, DEPLOYMENT: 'cloud' } });
  doc = await openApiDocument(server);
  // One account with something of every kind the central answers carry.
  const user: LoggedInUser = await seedAccount(server, { email: 'contract@example.com' });
  const auth = { token: user.accessToken };
  const key = user.account.userKey;
  const call = async (method: string, path: string, json?: unknown) => {
    const res = await server.request(method, path, { ...auth, ...(json === undefined ? {} : { json }) });
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body as Record<string, unknown>;
  };
  const token = await server.request('POST', '/identity/connect/token', { form: passwordGrantForm(user.account) });
  live.set('POST /identity/connect/token', token.body);
  live.set('POST /identity/accounts/prelogin', (await server.request('POST', '/identity/accounts/prelogin', { json: { email: user.account.email } })).body);
  live.set('GET /api/config', (await server.request('GET', '/api/config')).body);
  const folder = await call('POST', '/api/folders', { name: encryptText('folder', key) });
  const cipher = await call('POST', '/api/ciphers', cipherBody('login', key, { folderId: folder.id }));
  const send = await call('POST', '/api/sends', textSendBody(new Date(Date.now() + 86_400_000).toISOString()));
  const org = await createOrganization(server, user);
  // Enabled after the Send is made, so that it does not refuse it.
  await call('PUT', `/api/organizations/${org.id}/policies/6`, { enabled: true });
  live.set('GET /api/sync', await call('GET', '/api/sync'));
  live.set('GET /api/accounts/profile', await call('GET', '/api/accounts/profile'));
  live.set('GET /api/ciphers/{id}', await call('GET', `/api/ciphers/${String(cipher.id)}`));
  live.set('GET /api/sends/{id}', await call('GET', `/api/sends/${String(send.id)}`));
  live.set('GET /api/organizations/{orgId}/users', await call('GET', `/api/organizations/${org.id}/users`));
  live.set('GET /api/organizations/{orgId}/policies', await call('GET', `/api/organizations/${org.id}/policies`));
});
afterAll(async () => {
  await server?.close();
});

const schemaMissesOf = (route: string) => FIELD_LIST.routes[route]!.flatMap((model) => schemaMisses(model, answerSchema(doc, route)));
const liveMissesOf = (route: string) => FIELD_LIST.routes[route]!.flatMap((model) => liveMisses(model, live.get(route)));

describe('the response fields the official clients read', () => {
  it('reads a list of fields from a named release', () => {
    expect(FIELD_LIST.read.some((r) => /^cli-v\d{4}\.\d+\.\d+$/.test(r.commit))).toBe(true);
    expect(Object.keys(FIELD_LIST.routes).length).toBeGreaterThan(30);
    expect(Object.keys(FIELD_LIST.models).length).toBeGreaterThan(80);
  });

  it('finds every one in the answer schema of each route that answers it, except those MISSING names', () => {
    const missing = Object.keys(FIELD_LIST.routes).flatMap((route) => render(route, schemaMissesOf(route)));
    expect(missing, 'fields the clients read that the OpenAPI answer lacks: send them, or add to test/contract/client-fields.missing.ts').toEqual([]);
  });

  it('finds every one in live answers of the central routes, except those MISSING names', () => {
    expect([...live.keys()].filter((route) => !(route in FIELD_LIST.routes))).toEqual([]);
    const missing = [...live.keys()].flatMap((route) => render(route, liveMissesOf(route)));
    expect(missing, 'fields the clients read that a live answer lacks: send them, or add to test/contract/client-fields.missing.ts').toEqual([]);
  });

  it('keeps no MISSING entry that is now sent or no longer read', () => {
    const missed = new Set([...Object.keys(FIELD_LIST.routes).flatMap(schemaMissesOf), ...[...live.keys()].flatMap(liveMissesOf)].map((m) => m.key));
    expect(Object.keys(MISSING).filter((key) => !missed.has(key)), 'remove these from MISSING').toEqual([]);
  });

  it('gives every MISSING entry a reason naming what will send it', () => {
    for (const [key, reason] of Object.entries(MISSING)) expect(reason, key).toMatch(/#\d+|not offered|sent only when|undescribed/);
  });
});

describe('the check itself', () => {
  it('looks a field up as the client does: any first-letter case, or the exact serde names', () => {
    const keys = new Set(['revisionDate', 'Object', 'kdfiterations']);
    expect(keyFor(parseField('RevisionDate'), keys)).toBe('revisionDate');
    expect(keyFor(parseField('object'), keys)).toBe('Object');
    expect(keyFor(parseField('KdfIterations'), keys)).toBe('kdfiterations');
    expect(keyFor(parseField('TrustedDeviceOption (exact)'), new Set(['trustedDeviceOption']))).toBeUndefined();
    expect(keyFor(parseField('privateKey|PrivateKey: string (exact)'), new Set(['PrivateKey']))).toBe('PrivateKey');
  });

  it('finds what a schema or an answer lacks, and a cipher `data` sent as an object', () => {
    const cipher = live.get('GET /api/ciphers/{id}') as Record<string, unknown>;
    const { revisionDate: _dropped, ...withoutDate } = cipher;
    expect(liveMisses('CipherResponse', withoutDate).map((m) => m.key)).toContain('CipherResponse.RevisionDate');
    expect(liveMisses('sdk:CipherResponseModel', { ...cipher, data: { name: 'x' } })).toContainEqual({ key: 'sdk:CipherResponseModel.data', at: 'data', problem: 'type string, sent object' });
    expect(liveMisses('sdk:CipherResponseModel', { ...cipher, revisionDate: null }).map((m) => m.problem)).toContain('null');
    const schema = answerSchema(doc, 'GET /api/folders/{id}')!;
    expect(schemaMisses('FolderResponse', { ...schema, properties: { id: { type: 'string' } } }).map((m) => m.key)).toEqual(['FolderResponse.Name', 'FolderResponse.RevisionDate']);
  });

  it('reads the fields of client models from their source shapes', () => {
    const ts = tsModelsOf(
      'x.response.ts',
      `class OuterResponse extends BaseResponse {
        constructor(response: any) {
          super(response);
          this.name = this.getResponseProperty("Name");
          const items = this.getResponseProperty("Items");
          this.items = items == null ? [] : items.map((i: any) => new InnerResponse(i));
          this.inner = new InnerResponse(this.getResponseProperty("Inner"));
        }
      }
      class InnerResponse extends BaseResponse {}
      class KeysModel {
        constructor(response: unknown) {
          if (!("publicKey" in response)) throw new TypeError("x");
          if ("signed" in response) this.signed = response.signed;
        }
      }`,
    );
    expect([...ts.get('OuterResponse')!.fields.values()]).toEqual([{ name: 'Name' }, { name: 'Items', model: 'InnerResponse', array: true }, { name: 'Inner', model: 'InnerResponse' }]);
    expect(ts.get('KeysModel')!.fields.get('publicKey')).toEqual({ name: 'publicKey', exact: true, required: true });
    expect(ts.get('KeysModel')!.fields.get('signed')?.required).toBeUndefined();
    const rust = `#[derive(Deserialize)]
      pub struct ThingResponseModel {
          /// A doc comment: with a colon
          #[serde(rename = "kdfType", alias = "KdfType")]
          pub kdf_type: Option<i32>,
          #[serde(default)]
          pub flag: bool,
          pub token: String,
      }
      fn parse(thing: ThingResponseModel, other: &str) -> Result<X, E> {
          let k = require!(thing.kdf_type);
          match k { 1 => Ok(require!(thing.token)), _ => Ok(thing.flag) }
      }`;
    const struct = rustStructsOf('x.rs', rust).get('ThingResponseModel')!;
    expect([...struct.fields.entries()].map(([k, f]) => [k, f.json, f.aliases, f.required])).toEqual([
      ['kdf_type', 'kdfType', ['KdfType'], false],
      ['flag', 'flag', [], false],
      ['token', 'token', [], true],
    ]);
    expect([...rustReadsOf('x.rs', rust, new Set(['ThingResponseModel'])).get('ThingResponseModel')!.fields]).toEqual([
      ['kdf_type', true],
      ['token', false],
      ['flag', false],
    ]);
  });
});
