/**
 * The permission matrices cover the route table: every operation of the OpenAPI document that
 * takes an organization, collection, item, group, policy, secret, project or machine-account id
 * in its path has a row in test/permission-matrix.test.ts or test/sm-permission-matrix.test.ts,
 * or a reasoned entry in EXEMPT below. A new route without a row fails here, naming it.
 *
 * The covered operations are read from the two files' own text, so a row counts only as written:
 * - the administrative and item rows are named `'METHOD /path …'` (permission-matrix.test.ts);
 * - the Secrets Manager rows call `call(c, 'METHOD', \`/path/${id}\`)` (sm-permission-matrix.test.ts).
 * An older form of a route (deprecated, "Older clients' form of `METHOD /path`", the same
 * handler) is covered by the row of its current form.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ROUTES_ENV, openApiDocument, operationsOf, type Operation } from '../support/openapi.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ROOT = new URL('../', import.meta.url);
const MATRIX = readFileSync(new URL('permission-matrix.test.ts', ROOT), 'utf8');
const SM_MATRIX = readFileSync(new URL('sm-permission-matrix.test.ts', ROOT), 'utf8');

/** The path segment before an id, and the names of id parameters, that put a route in scope. */
const OWNING_SEGMENTS = new Set(['organizations', 'organization', 'sm', 'sso', 'collections', 'ciphers', 'groups', 'policies', 'secrets', 'secret-versions', 'projects', 'service-accounts', 'service-account']);
const ID_NAMES = /^(orgId|organizationId|collectionId|cipherId|groupId|policyId|secretId|projectId|serviceAccountId)$/;

/**
 * Routes in scope that the matrices leave out on purpose, each with its reason. Every entry must
 * still be a route in scope that no row covers: a stale entry fails too.
 */
const EXEMPT: Record<string, string> = {
  'POST /organizations/{orgId}/users/{id}/accept':
    'Joining: the caller is the invited user, not a member yet (no role applies); the invitation token decides, tested in src/features/members/invitations.test.ts.',
  'GET /organizations/{orgId}/policies/token':
    'Registering from an invitation: the caller has no account yet (no role applies); the invitation token, its email and membership id decide, tested in src/features/policies/invited-policies.test.ts.',
  'POST /ciphers/{id}/attachment/{attachmentId}':
    "A multipart upload the matrix's JSON calls cannot make; it takes the same edit right as POST /ciphers/{id}/attachment/v2 (a row here), tested by role in src/features/vault/attachments.test.ts.",
  'POST /ciphers/{id}/attachment':
    "Older clients' multipart one-step upload the matrix's JSON calls cannot make; the same edit right as POST /ciphers/{id}/attachment/v2 (a row here), tested in src/features/vault/attachments.test.ts.",
  'POST /ciphers/{id}/attachment-admin':
    "The admin console's older multipart one-step upload the matrix's JSON calls cannot make; the same admin rule as POST /ciphers/{id}/attachment/v2 with adminRequest (a row here), tested by role in src/features/vault/attachments.test.ts.",
  'POST /ciphers/{id}/attachment/{attachmentId}/share':
    "Older clients' multipart re-upload before a share, which the matrix's JSON calls cannot make; only the item's owner who is a confirmed member of the organization, tested in src/features/vault/attachments.test.ts.",
};

type Pair = { method: string; segments: string[] };

/** `/api/organizations/{orgId}/users` -> ['organizations', '{}', 'users'] (no service prefix, parameters unnamed). */
function segmentsOf(path: string): string[] {
  return path
    .replace(/^\/(api|identity|events|notifications)(?=\/)/, '')
    .split('?')[0]!
    .split('/')
    .filter(Boolean)
    .map((s) => (/^\{[^}]*\}$/.test(s) ? '{}' : /^\$\{[^}]*\}$/.test(s) ? '*' : s.toLowerCase()));
}

function matches(pair: Pair, operation: Operation): boolean {
  const route = segmentsOf(operation.path);
  return pair.method === operation.method && pair.segments.length === route.length && pair.segments.every((s, i) => s === '*' || s === route[i]);
}

/** The rows of permission-matrix.test.ts, by the `METHOD /path` their names start with. */
const MATRIX_ROWS: Pair[] = [...MATRIX.matchAll(/^\s*\[?\s*['`](GET|PUT|POST|DELETE|PATCH) (\/[^\s'`:]*)/gm)].map((m) => ({ method: m[1]!, segments: segmentsOf(m[2]!) }));
/** The calls of sm-permission-matrix.test.ts's rows. */
const SM_ROWS: Pair[] = [...SM_MATRIX.matchAll(/call\(c, '(GET|PUT|POST|DELETE|PATCH)', ['`]([^'`]+)['`]/g)].map((m) => ({ method: m[1]!, segments: segmentsOf(m[2]!) }));

function inScope(operation: Operation): boolean {
  const segments = operation.path.split('/');
  return segments.some((segment, i) => {
    const param = /^\{([^}]+)\}$/.exec(segment)?.[1];
    return param !== undefined && (ID_NAMES.test(param) || OWNING_SEGMENTS.has(segments[i - 1] ?? ''));
  });
}

/** `GET /organizations/{orgId}/users`, the name EXEMPT and the messages use. */
const nameOf = (operation: Operation) => `${operation.method} ${operation.path.replace(/^\/(api|identity|events|notifications)(?=\/)/, '')}`;

let server: TestServer;
let operations: Operation[];
beforeAll(async () => {
  server = await startTestServer({ env: { ...ALL_ROUTES_ENV, DEPLOYMENT: 'cloud' } });
  operations = operationsOf(await openApiDocument(server));
});
afterAll(async () => server?.close());

describe('the permission matrices cover the route table', () => {
  it('reads the rows of both matrices', () => {
    expect(MATRIX_ROWS.length).toBeGreaterThan(50);
    expect(SM_ROWS.length).toBeGreaterThan(40);
  });

  it('has a matrix row for every route taking an organization, collection, item, group, policy, secret, project or machine-account id', () => {
    const rows = [...MATRIX_ROWS, ...SM_ROWS];
    const byName = new Map(operations.map((o) => [nameOf(o), o]));
    const covered = (operation: Operation): boolean => {
      if (rows.some((row) => matches(row, operation))) return true;
      // An older form is covered by its current form's row.
      const current = operation.deprecated ? /Older clients' form of `(\w+) ([^`]+)`/.exec(operation.description) : null;
      const target = current ? byName.get(`${current[1]} ${current[2]}`) : undefined;
      return target !== undefined && target !== operation && rows.some((row) => matches(row, target));
    };
    const scoped = operations.filter(inScope);
    expect(scoped.length).toBeGreaterThan(100);
    const missing = scoped.filter((o) => !covered(o) && !(nameOf(o) in EXEMPT)).map(nameOf);
    expect(
      missing,
      'Add a row to test/permission-matrix.test.ts (named "METHOD /path ...") or test/sm-permission-matrix.test.ts (calling call(c, METHOD, path)) for each, or an entry with its reason to EXEMPT in this file.',
    ).toEqual([]);

    const stale = Object.keys(EXEMPT).filter((name) => {
      const operation = byName.get(name);
      return !operation || !inScope(operation) || covered(operation);
    });
    expect(stale, 'EXEMPT entries that are no route in scope, or that a matrix row now covers: remove them').toEqual([]);
  });

  it('names only routes that exist in its rows', () => {
    const unknown = [...MATRIX_ROWS, ...SM_ROWS].filter((row) => !operations.some((o) => matches(row, o))).map((row) => `${row.method} /${row.segments.join('/')}`);
    expect(unknown, 'matrix rows whose METHOD /path is no route (renamed or removed?)').toEqual([]);
  });
});
