import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { custom, eventsOf, freshOrgWithOwner, orgWithCallers, ROLES, type Actor } from '../../../test/support/admin.js';
import { seedPolicy } from '../../../test/support/members.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { createSecretBox } from '../../platform/auth/secret-box.js';
import { PolicyType } from '../policies/policy-type.js';
import { readSsoConfig, ssoSecretPurpose } from './sso-config.repository.js';

// The identity provider is the real oidc-provider on loopback; the broken ones are plain loopback
// servers answering what a misconfigured authority would.

const SECRETS_KEY = randomBytes(32).toString('base64');
const CLIENT_SECRET = `client-secret-${randomUUID()}`;

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const OIDC_PROVIDER = 'oidc-provider';
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
}

/** oidc-provider on 127.0.0.1 with one client: its issuer is the authority the tests configure. */
async function startIdp(): Promise<Running> {
  const server = createServer();
  const url = await listen(server);
  // Its warnings (Node 20, the development adapter, keys and interactions) are expected here.
  const warn = console.warn;
  console.warn = () => undefined;
  let provider: OidcProvider;
  try {
    // By a computed name: the package has no types, and the login tests declare the part they use.
    const { default: Provider } = (await import(OIDC_PROVIDER)) as { default: new (issuer: string, config: object) => OidcProvider };
    provider = new Provider(url, { clients: [{ client_id: 'strongroom', client_secret: CLIENT_SECRET, redirect_uris: ['http://127.0.0.1/sso/oidc-signin'] }] });
  } finally {
    console.warn = warn;
  }
  server.on('request', provider.callback());
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A loopback server answering every request with `body` (status 200). */
async function startStatic(body: string, contentType = 'application/json'): Promise<Running> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': contentType }).end(body));
  const url = await listen(server);
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let server: TestServer;
let idp: Running;
beforeAll(async () => {
  [server, idp] = await Promise.all([startTestServer({ env: { SSO_ALLOW_PRIVATE_ADDRESSES: 'true', SECRETS_KEY } }), startIdp()]);
});
afterAll(async () => {
  await Promise.all([server.close(), idp.close()]);
});

/** The caller's profile entry for an organization (`GET /organizations`). */
const profileOf = (body: { data: { id: string }[] }, org: string) => body.data.find((o) => o.id === org);

const sso = (org: string) => `/api/organizations/${org}/sso`;
let identifiers = 0;
const freshIdentifier = () => `acme-${++identifiers}-${randomUUID().slice(0, 6)}`;

function oidc(overrides: Record<string, unknown> = {}) {
  return { configType: 1, memberDecryptionType: 0, authority: idp.url, clientId: 'strongroom', clientSecret: CLIENT_SECRET, redirectBehavior: 0, getClaimsFromUserInfoEndpoint: false, ...overrides };
}

function body(enabled: boolean, identifier: string | null, data: Record<string, unknown> = oidc()) {
  return { enabled, identifier, data };
}

const post = (token: string, org: string, json: unknown) => server.request('POST', sso(org), { token, json });

describe('who may read and save the SSO settings', () => {
  let org: string;
  let actors: Record<string, Actor> = {};
  beforeAll(async () => {
    ({ org, actors } = await orgWithCallers(server, { ...ROLES, manageSso: custom('manageSso'), managePolicies: custom('managePolicies') }));
  });

  it.each([
    ['owner', 200],
    ['admin', 200],
    ['manageSso', 200],
    ['user', 403],
    ['manager', 403],
    ['managePolicies', 403],
    ['invited', 404],
    ['accepted', 404],
    ['revoked', 404],
    ['stranger', 404],
  ] as const)('%s: read and save answer %i', async (who, status) => {
    const token = actors[who]?.token ?? '';
    expect((await server.request('GET', sso(org), { token })).status).toBe(status);
    // A disabled save: no provider is asked.
    expect((await post(token, org, body(false, null, { configType: 0 }))).status).toBe(status);
  });
});

describe('SSO settings', () => {
  it('answers an organization without settings with null data and the URLs to give the provider', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await server.request('GET', sso(org), { token: owner.token });
    expect(res.status).toBe(200);
    const base = `${server.config.publicUrl.replace(/\/$/, '')}/sso`;
    expect(res.body).toEqual({
      object: 'organizationSso',
      enabled: false,
      identifier: null,
      data: null,
      urls: {
        callbackPath: `${base}/oidc-signin`,
        signedOutCallbackPath: `${base}/oidc-signedout`,
        spEntityId: `${base}/saml2/${org}`,
        spEntityIdStatic: `${base}/saml2`,
        spMetadataUrl: `${base}/saml2/${org}`,
        spAcsUrl: `${base}/saml2/${org}/Acs`,
      },
    });
  });

  it('saves and reads back the settings, the secret sealed, never answered and never logged', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const identifier = freshIdentifier();
    const saved = await post(owner.token, org, body(true, identifier, oidc({ additionalScopes: 'groups, offline_access', additionalEmailClaimTypes: 'mail', acrValues: 'mfa', redirectBehavior: 1 })));
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({
      object: 'organizationSso',
      enabled: true,
      identifier,
      data: { configType: 1, memberDecryptionType: 0, keyConnectorEnabled: false, authority: idp.url, clientId: 'strongroom', clientSecret: null, redirectBehavior: 1, additionalScopes: 'groups, offline_access', additionalEmailClaimTypes: 'mail', acrValues: 'mfa', idpBindingType: 1, spUniqueEntityId: true },
    });
    const read = await server.request('GET', sso(org), { token: owner.token });
    expect(read.body).toEqual(saved.body);
    expect(read.text).not.toContain(CLIENT_SECRET);

    // Stored sealed under the organization's purpose: it opens with the server's key, and only for this organization.
    const stored = await readSsoConfig(server.database.db, org);
    expect(stored?.data.clientSecret).not.toContain(CLIENT_SECRET);
    const box = createSecretBox(Buffer.from(SECRETS_KEY, 'base64'));
    expect(box.open(stored!.data.clientSecret, ssoSecretPurpose(org))).toBe(CLIENT_SECRET);
    expect(() => box.open(stored!.data.clientSecret, ssoSecretPurpose(randomUUID()))).toThrow();

    const profile = await server.request('GET', '/api/organizations', { token: owner.token });
    expect(profileOf(profile.body as { data: { id: string }[] }, org)).toMatchObject({ useSso: true, ssoEnabled: true, ssoMemberDecryptionType: 0, identifier });
    expect((await server.request('GET', `/api/organizations/${org}`, { token: owner.token })).body).toMatchObject({ useSso: true, identifier });
    expect(server.logs.text()).not.toContain(CLIENT_SECRET);
  });

  it("takes the web vault form's request, nulls and empty strings included", async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    // What SsoConfigApi.fromView sends for an OpenID Connect form left at its defaults.
    const form = {
      configType: 1,
      memberDecryptionType: 0,
      keyConnectorUrl: '',
      authority: idp.url,
      clientId: 'strongroom',
      clientSecret: CLIENT_SECRET,
      metadataAddress: null,
      redirectBehavior: 0,
      getClaimsFromUserInfoEndpoint: null,
      additionalScopes: null,
      additionalUserIdClaimTypes: null,
      additionalEmailClaimTypes: null,
      additionalNameClaimTypes: null,
      acrValues: null,
      expectedReturnAcrValue: null,
    };
    const res = await post(owner.token, org, { enabled: true, identifier: freshIdentifier(), data: form });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ metadataAddress: null, getClaimsFromUserInfoEndpoint: false, additionalScopes: null, keyConnectorUrl: null, clientSecret: null });
  });

  it('keeps the stored secret on a save without one, and replaces it with a new one', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const identifier = freshIdentifier();
    expect((await post(owner.token, org, body(true, identifier))).status).toBe(200);
    const box = createSecretBox(Buffer.from(SECRETS_KEY, 'base64'));
    const secretOf = async () => box.open((await readSsoConfig(server.database.db, org))!.data.clientSecret, ssoSecretPurpose(org));

    expect((await post(owner.token, org, body(true, identifier, oidc({ clientSecret: '' })))).status).toBe(200);
    expect(await secretOf()).toBe(CLIENT_SECRET);
    const { clientSecret: _absent, ...withoutSecret } = oidc();
    expect((await post(owner.token, org, body(true, identifier, withoutSecret))).status).toBe(200);
    expect(await secretOf()).toBe(CLIENT_SECRET);
    expect((await post(owner.token, org, body(true, identifier, oidc({ clientSecret: null })))).status).toBe(200);
    expect(await secretOf()).toBe(CLIENT_SECRET);

    expect((await post(owner.token, org, body(true, identifier, oidc({ clientSecret: 'rotated-secret' })))).status).toBe(200);
    expect(await secretOf()).toBe('rotated-secret');
  });

  it('asks for the secret again when the authority, metadata address or client ID change', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const identifier = freshIdentifier();
    expect((await post(owner.token, org, body(true, identifier))).status).toBe(200);
    const before = await readSsoConfig(server.database.db, org);
    // Disabled saves too: the kept secret would follow the change when SSO is turned on later.
    for (const [enabled, change] of [
      [true, { authority: `${idp.url}/` }],
      [false, { authority: 'http://127.0.0.1:1/elsewhere' }],
      [false, { metadataAddress: 'http://127.0.0.1:1/.well-known/openid-configuration' }],
      [true, { clientId: 'another-client' }],
    ] as const) {
      const res = await post(owner.token, org, body(enabled, identifier, oidc({ clientSecret: null, ...change })));
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.body.validationErrors['data.clientSecret'][0]).toMatch(/client secret is required when the (authority|metadata address|client ID) changes/);
    }
    expect(await readSsoConfig(server.database.db, org)).toEqual(before);
  });

  it('refuses to turn SSO on without a secret when none is stored', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await post(owner.token, org, body(true, freshIdentifier(), oidc({ clientSecret: '' })));
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toHaveProperty(['data.clientSecret']);
    expect(await readSsoConfig(server.database.db, org)).toBeUndefined();
  });

  const long = (n: number) => 'x'.repeat(n);
  it.each([
    ['SAML 2.0', { configType: 2 }, 'data.configType', /not offered yet/],
    ['no type', { configType: 0 }, 'data.configType', /OpenID Connect/],
    ['an unknown type', { configType: 7 }, 'data.configType', /OpenID Connect/],
    ['SAML fields', { idpEntityId: 'https://idp.example.com' }, 'data.configType', /SAML/],
    ['Key Connector', { memberDecryptionType: 1 }, 'data.memberDecryptionType', /Key Connector is not offered/],
    ['Key Connector, older form', { memberDecryptionType: undefined, keyConnectorEnabled: true }, 'data.memberDecryptionType', /Key Connector/],
    ['an unknown decryption option', { memberDecryptionType: 5 }, 'data.memberDecryptionType', /master password/],
    ['no authority', { authority: '' }, 'data.authority', /required/],
    ['a relative authority', { authority: 'idp.example.com' }, 'data.authority', /absolute URL/],
    ['an http authority', { authority: 'http://idp.example.com' }, 'data.authority', /https/],
    ['an ftp authority', { authority: 'ftp://idp.example.com' }, 'data.authority', /https/],
    ['credentials in the authority', { authority: 'https://me:pw@idp.example.com' }, 'data.authority', /user name/],
    ['a bad metadata address', { metadataAddress: 'not a url' }, 'data.metadataAddress', /absolute URL/],
    ['no client id', { clientId: ' ' }, 'data.clientId', /required/],
    ['a redirect behavior of 2', { redirectBehavior: 2 }, 'data.redirectBehavior', /0 .* or 1/],
    ['too many scopes', { additionalScopes: Array.from({ length: 21 }, (_, i) => `s${i}`).join(',') }, 'data.additionalScopes', /at most 20/],
    ['a long claim name', { additionalUserIdClaimTypes: long(201) }, 'data.additionalUserIdClaimTypes', /200 characters/],
    ['a claim with a quote', { additionalNameClaimTypes: 'name,"x' }, 'data.additionalNameClaimTypes', /not a claim/],
  ] as const)('refuses %s, naming the field', async (_name, data, field, message) => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await post(owner.token, org, body(true, freshIdentifier(), oidc(data)));
    expect(res.status, res.text).toBe(400);
    expect((res.body as { validationErrors?: Record<string, string[]> }).validationErrors?.[field]?.join(' ')).toMatch(message);
    expect(await readSsoConfig(server.database.db, org)).toBeUndefined();
  });

  it.each([
    ['a client id', { clientId: long(1025) }, 'data.clientId'],
    ['a client secret', { clientSecret: long(4097) }, 'data.clientSecret'],
    ['an authority', { authority: `https://idp.example.com/${long(2048)}` }, 'data.authority'],
    ['the scopes', { additionalScopes: long(1025) }, 'data.additionalScopes'],
  ])('refuses an oversized %s, naming it', async (_name, data, field) => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await post(owner.token, org, body(false, null, oidc(data)));
    expect(res.status).toBe(400);
    expect((res.body as { validationErrors: Record<string, string[]> }).validationErrors[field]).toEqual([expect.stringMatching(/must be at most \d+ characters/)]);
    expect(await readSsoConfig(server.database.db, org)).toBeUndefined();
  });

  it('requires an identifier to turn SSO on, and refuses one another organization has', async () => {
    const first = await freshOrgWithOwner(server);
    const second = await freshOrgWithOwner(server);
    const noIdentifier = await post(first.owner.token, first.org, body(true, null));
    expect(noIdentifier.status).toBe(400);
    expect(noIdentifier.body.validationErrors).toHaveProperty(['identifier']);

    const identifier = freshIdentifier();
    expect((await post(first.owner.token, first.org, body(true, identifier))).status).toBe(200);
    for (const taken of [identifier, identifier.toUpperCase()]) {
      const res = await post(second.owner.token, second.org, body(false, taken));
      expect(res.status).toBe(400);
      expect(res.body.validationErrors.identifier).toEqual(['Organization with this identifier already exists.']);
    }
    expect(await readSsoConfig(server.database.db, second.org)).toBeUndefined();
    // The organization's own identifier, in another case, is its own to keep.
    expect((await post(first.owner.token, first.org, body(true, identifier.toUpperCase()))).status).toBe(200);
  });

  it('gives one identifier to only one of two organizations saving it at once', async () => {
    const [first, second] = await Promise.all([freshOrgWithOwner(server), freshOrgWithOwner(server)]);
    const identifier = freshIdentifier();
    const answers = await Promise.all([first, second].map(({ org, owner }) => post(owner.token, org, body(false, identifier))));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const owners = await server.database.db.selectFrom('organizations').select('id').where('identifier', '=', identifier).execute();
    expect(owners).toHaveLength(1);
  });

  it('saves a disabled configuration without asking the provider, and clears the identifier when none is given', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await post(owner.token, org, body(false, freshIdentifier(), oidc({ authority: 'https://idp.invalid' })));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ enabled: false, data: { authority: 'https://idp.invalid' } });
    expect((await post(owner.token, org, body(false, null, oidc({ authority: 'https://idp.invalid' })))).body.identifier).toBeNull();
  });

  it('turns on Single organization, automatic account recovery and Require SSO with trusted devices, as officially', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    // An Account recovery policy already on, without automatic enrollment: it is switched to it.
    await seedPolicy(server, org, PolicyType.ResetPassword);
    const tde = body(true, freshIdentifier(), oidc({ memberDecryptionType: 2 }));
    const res = await post(owner.token, org, tde);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.memberDecryptionType).toBe(2);
    const policies = await server.request('GET', `/api/organizations/${org}/policies`, { token: owner.token });
    const state = (type: PolicyType) => (policies.body.data as { type: number; enabled: boolean; data: unknown }[]).find((p) => p.type === (type as number));
    expect(state(PolicyType.SingleOrg)).toMatchObject({ enabled: true });
    expect(state(PolicyType.RequireSso)).toMatchObject({ enabled: true });
    expect(state(PolicyType.ResetPassword)).toMatchObject({ enabled: true, data: { autoEnrollEnabled: true } });
    // Each through the policies' own writer: one Policy_Updated each, by the admin who saved.
    const updated = await eventsOf(server, EventType.Policy_Updated, org);
    expect(updated.map((e) => e.acting_user_id)).toEqual([owner.userId, owner.userId, owner.userId]);
    const profile = await server.request('GET', '/api/organizations', { token: owner.token });
    expect(profileOf(profile.body as { data: { id: string }[] }, org)).toMatchObject({ ssoEnabled: true, ssoMemberDecryptionType: 2 });

    // A second save finds them on and writes no policy again; the policies now refuse being turned off.
    expect((await post(owner.token, org, tde)).status).toBe(200);
    expect(await eventsOf(server, EventType.Policy_Updated, org)).toHaveLength(3);
    const off = await server.request('PUT', `/api/organizations/${org}/policies/${PolicyType.RequireSso}`, { token: owner.token, json: { type: PolicyType.RequireSso, enabled: false, data: null } });
    expect([off.status, off.body.message]).toEqual([400, 'Trusted device encryption is on and requires this policy.']);
  });

  it('saves nothing when a policy trusted devices need cannot be turned on', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    // A member who also belongs to another organization: Single organization is refused, naming them.
    const other = await freshOrgWithOwner(server);
    const { user_id: userId } = await server.database.db.selectFrom('organization_users').select('user_id').where('organization_id', '=', other.org).executeTakeFirstOrThrow();
    await seedMembership(server, { organizationId: org, userId, status: OrganizationUserStatusType.Confirmed });
    const res = await post(owner.token, org, body(true, freshIdentifier(), oidc({ memberDecryptionType: 2 })));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/also belong to other organizations/);
    expect(await readSsoConfig(server.database.db, org)).toBeUndefined();
    expect(await server.database.db.selectFrom('policies').select('type').where('organization_id', '=', org).execute()).toEqual([]);
    expect(await eventsOf(server, EventType.Policy_Updated, org)).toEqual([]);
    expect((await server.request('GET', sso(org), { token: owner.token })).body.identifier).toBeNull();
  });

  it('records Organization_EnabledSso and Organization_DisabledSso when SSO is turned on or off, not on other saves', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const identifier = freshIdentifier();
    await post(owner.token, org, body(false, identifier));
    await post(owner.token, org, body(true, identifier));
    await post(owner.token, org, body(true, identifier, oidc({ acrValues: 'mfa' })));
    await post(owner.token, org, body(false, identifier));
    await post(owner.token, org, body(false, identifier));
    const enabled = await eventsOf(server, EventType.Organization_EnabledSso, org);
    const disabled = await eventsOf(server, EventType.Organization_DisabledSso, org);
    expect(enabled.map((e) => e.acting_user_id)).toEqual([owner.userId]);
    expect(disabled.map((e) => e.acting_user_id)).toEqual([owner.userId]);
    expect(Number(enabled[0]!.seq)).toBeLessThan(Number(disabled[0]!.seq));
  });
});

describe('the discovery check when SSO is turned on', () => {
  const refused = async (authority: string, metadataAddress?: string) => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await post(owner.token, org, body(true, freshIdentifier(), oidc({ authority, ...(metadataAddress ? { metadataAddress } : {}) })));
    expect(res.status, res.text).toBe(400);
    expect(await readSsoConfig(server.database.db, org)).toBeUndefined();
    expect((await server.request('GET', sso(org), { token: owner.token })).body.identifier).toBeNull();
    return res.body.validationErrors as Record<string, string[]>;
  };

  it('refuses an authority nothing listens on', async () => {
    const closed = createServer();
    const url = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect((await refused(url))['data.authority']![0]).toMatch(/could not be read: it could not be reached \(ECONNREFUSED\)/);
  });

  it('refuses an answer that is not JSON', async () => {
    const html = await startStatic('<html><body>Welcome</body></html>', 'text/html');
    try {
      expect((await refused(html.url))['data.authority']![0]).toMatch(/is not JSON/);
    } finally {
      await html.close();
    }
  });

  it('refuses a document naming another issuer', async () => {
    const other = await startStatic(JSON.stringify({ issuer: 'https://elsewhere.example.com', authorization_endpoint: 'https://e/a', token_endpoint: 'https://e/t', jwks_uri: 'https://e/j' }));
    try {
      expect((await refused(other.url))['data.authority']![0]).toMatch(/names the issuer "https:\/\/elsewhere.example.com", not the authority/);
    } finally {
      await other.close();
    }
  });

  it('compares the issuer with the authority exactly, as the login does: a trailing slash counts', async () => {
    const realm = createServer((req, res) => {
      const issuer = `http://${req.headers.host}/realms/acme`;
      if (req.url !== '/realms/acme/.well-known/openid-configuration') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }));
    });
    const url = await listen(realm);
    try {
      const message = (await refused(`${url}/realms/acme/`))['data.authority']![0];
      expect(message).toContain(`names the issuer "${url}/realms/acme", not the authority ${url}/realms/acme/`);
      const { org, owner } = await freshOrgWithOwner(server);
      const ok = await post(owner.token, org, body(true, freshIdentifier(), oidc({ authority: `${url}/realms/acme` })));
      expect(ok.status, ok.text).toBe(200);
    } finally {
      await new Promise((resolve) => realm.close(resolve));
    }
  });

  it('refuses a document without the endpoints a login needs', async () => {
    const bare = createServer((req, res) => {
      const issuer = `http://${req.headers.host}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth` }));
    });
    const url = await listen(bare);
    try {
      expect((await refused(url))['data.authority']![0]).toMatch(/lacks token_endpoint, jwks_uri/);
    } finally {
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it('reads the metadata address when one is given, and names it when it fails', async () => {
    const html = await startStatic('not json', 'text/plain');
    try {
      const errors = await refused(idp.url, `${html.url}/.well-known/openid-configuration`);
      expect(errors['data.metadataAddress']![0]).toMatch(/is not JSON/);
      // The login would take an address without /.well-known/ for an issuer: refused here.
      expect((await refused(idp.url, `${html.url}/metadata`))['data.metadataAddress']![0]).toMatch(/full address of the discovery document, with \/\.well-known\//);
    } finally {
      await html.close();
    }
    const { org, owner } = await freshOrgWithOwner(server);
    const ok = await post(owner.token, org, body(true, freshIdentifier(), oidc({ metadataAddress: `${idp.url}/.well-known/openid-configuration` })));
    expect(ok.status, ok.text).toBe(200);
  });

  it('refuses a loopback provider unless the operator allows private addresses', async () => {
    const guarded = await startTestServer({ env: { SECRETS_KEY } });
    try {
      const { org, owner } = await freshOrgWithOwner(guarded);
      const res = await guarded.request('POST', sso(org), { token: owner.token, json: body(true, freshIdentifier()) });
      expect(res.status).toBe(400);
      expect(res.body.validationErrors['data.authority'][0]).toMatch(/SSO_ALLOW_PRIVATE_ADDRESSES/);
      expect(await readSsoConfig(guarded.database.db, org)).toBeUndefined();
    } finally {
      await guarded.close();
    }
  });
});

describe('a provider on a private address, named to the tenant', () => {
  it('tells the admin it is private without the address it resolved to, and logs that for the operator', async () => {
    const guarded = await startTestServer({ env: { SECRETS_KEY } });
    try {
      const { org, owner } = await freshOrgWithOwner(guarded);
      const authority = idp.url.replace('127.0.0.1', 'localhost');
      const res = await guarded.request('POST', sso(org), { token: owner.token, json: body(true, freshIdentifier(), oidc({ authority })) });
      expect(res.status).toBe(400);
      const message = res.body.validationErrors['data.authority'][0] as string;
      expect(message).toMatch(/localhost is on a private, loopback or link-local address.*SSO_ALLOW_PRIVATE_ADDRESSES/);
      expect(message).not.toMatch(/127\.0\.0\.1|::1|resolves to/);
      expect(guarded.logs.text()).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
    } finally {
      await guarded.close();
    }
  });
});

describe('the SSO login page asking for verified domains', () => {
  it('answers no verified domain, as the official server does when none matches', async () => {
    const res = await server.request('POST', '/api/organizations/domain/sso/verified', { json: { email: 'someone@example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'list', data: [], continuationToken: null });
    expect((await server.request('POST', '/api/organizations/domain/sso/verified', { json: { email: 'not an email' } })).status).toBe(400);
  });
});
