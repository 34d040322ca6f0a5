/**
 * The route table as the OpenAPI document at /docs/json describes it, for the suites generated
 * from it (test/reliability/*): every operation with its path, parameters and body schema.
 * Routes added later are covered by those suites without a change here.
 */
import type { TestServer } from './test-server.js';

/** The settings of a test server whose /docs/json lists every route: all services, the health records, the docs. */
export const ALL_ROUTES_ENV = { API_DOCS_ENABLED: 'true', HEALTH_ENABLED: 'true', SERVICES: 'all' } as const;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  additionalProperties?: boolean | JsonSchema;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  description?: string;
  deprecated?: boolean;
}

export interface OpenApiDocument {
  paths: Record<string, Partial<Record<string, RawOperation>>>;
}

export interface Operation {
  /** Upper case. */
  method: string;
  /** The document's path, `{name}` for each parameter, with the service prefix (`/api/folders/{id}`). */
  path: string;
  /** `METHOD /path`. */
  name: string;
  pathParams: string[];
  query: Record<string, JsonSchema>;
  /** The body's media type and schema, when the operation takes one. */
  body?: { type: 'json' | 'form'; schema: JsonSchema };
  deprecated: boolean;
  description: string;
}

export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((lower) => {
      const raw = item[lower];
      if (!raw) return [];
      const method = lower.toUpperCase();
      const params = raw.parameters ?? [];
      const content = raw.requestBody?.content ?? {};
      const json = content['application/json']?.schema;
      const form = content['application/x-www-form-urlencoded']?.schema;
      const body = json ? { type: 'json' as const, schema: json } : form ? { type: 'form' as const, schema: form } : undefined;
      return [
        {
          method,
          path,
          name: `${method} ${path}`,
          pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
          query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema ?? {}])),
          ...(body ? { body } : {}),
          deprecated: raw.deprecated === true,
          description: raw.description ?? '',
        },
      ];
    }),
  );
}

/** The document a running test server publishes (it must run with API_DOCS_ENABLED). */
export async function openApiDocument(server: TestServer): Promise<OpenApiDocument> {
  const res = await server.request('GET', '/docs/json');
  if (res.status !== 200) throw new Error(`GET /docs/json answered ${res.status}: start the server with ALL_ROUTES_ENV`);
  return res.body as OpenApiDocument;
}
