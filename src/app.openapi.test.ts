import { afterEach, describe, expect, it } from 'vitest';
import { adminTokenHash } from '../test/support/admin-console.js';
import { startTestServer, type TestServer } from '../test/support/test-server.js';
import { API_DOC_TAGS } from './http/api-docs.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const DECLARED: readonly string[] = API_DOC_TAGS.map((tag) => tag.name);

const HOW_TO_FIX = [
  'Every route needs, in its `schema`:',
  '- `summary`: a short imperative phrase ("Create a folder");',
  '- `description`: one to three sentences: what it does, who may call it (its `config.access` rule) and any Bitwarden-compatibility note;',
  `- \`tags\`: exactly one of the feature tags declared in API_DOC_TAGS (src/http/api-docs.ts): ${DECLARED.join(', ')}.`,
  'The route files keep these in a `docs` table of RouteDoc (src/http/route-docs.ts) spread into the schema; an older alias of a route takes `olderForm(doc, current)`.',
].join('\n');

interface Operation {
  summary?: unknown;
  description?: unknown;
  tags?: unknown;
}

/** Every operation of the document, named `METHOD /path`. */
function operations(document: { paths: Record<string, Partial<Record<string, Operation>>> }): [string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      return operation ? [[`${method.toUpperCase()} ${path}`, operation] as [string, Operation]] : [];
    }),
  );
}

const filled = (value: unknown) => typeof value === 'string' && value.trim() !== '';

/** The document's tag list: names and descriptions. */
const tagsOf = (document: { tags?: { name: string; description?: string }[] }) => document.tags ?? [];

describe('the OpenAPI document at /docs/json', () => {
  it('documents every operation with a summary, a description and exactly one declared feature tag, and uses every declared tag', async () => {
    // Every service and every optional route, so that the check covers them all.
    server = await startTestServer({
      env: { API_DOCS_ENABLED: 'true', HEALTH_ENABLED: 'true', SERVICES: 'all', METRICS_ENABLED: 'true', METRICS_TOKEN: 'openapi-check-token-0123', ADMIN_TOKEN: await adminTokenHash() },
    });
    const res = await server.request('GET', '/docs/json');
    expect(res.status).toBe(200);
    const all = operations(res.body);
    expect(all.length).toBeGreaterThan(100);

    const offenders = all.flatMap(([name, operation]) => {
      const problems: string[] = [];
      if (!filled(operation.summary)) problems.push('no summary');
      if (!filled(operation.description)) problems.push('no description');
      const tags = Array.isArray(operation.tags) ? (operation.tags as unknown[]) : [];
      if (tags.length !== 1) problems.push(`${tags.length} tags (${tags.join(', ') || 'none'}) instead of one`);
      const undeclared = tags.filter((tag) => typeof tag !== 'string' || !DECLARED.includes(tag));
      if (undeclared.length > 0) problems.push(`tag ${undeclared.join(', ')} is not in API_DOC_TAGS`);
      return problems.length > 0 ? [`${name}: ${problems.join('; ')}`] : [];
    });
    expect.soft(offenders, `${HOW_TO_FIX}\n\nOperations to fix:\n${offenders.join('\n')}\n`).toEqual([]);

    const used = new Set(all.flatMap(([, operation]) => (Array.isArray(operation.tags) ? (operation.tags as string[]) : [])));
    const unused = DECLARED.filter((tag) => !used.has(tag));
    expect.soft(unused, `These tags are declared in API_DOC_TAGS (src/http/api-docs.ts) but no route uses them: remove them or tag the routes of that feature with them.`).toEqual([]);
    expect(tagsOf(res.body).map((tag) => tag.name)).toEqual(DECLARED);
  });

  it('lists, in the declared order, only the tags of the services a server runs', async () => {
    server = await startTestServer({ env: { API_DOCS_ENABLED: 'true', SERVICES: 'identity' } });
    const res = await server.request('GET', '/docs/json');
    const tags = tagsOf(res.body);
    expect(tags.map((tag) => tag.name)).toEqual(['Health', 'Identity', 'Accounts']);
    for (const tag of tags) expect(tag.description).toBeTruthy();
  });
});
