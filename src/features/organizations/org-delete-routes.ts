import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { AccessRule } from '../../http/access.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { BulkIdsBody, emptyOk, EmptyResponse, OrgIdParams, OrgParams } from '../../http/schemas.js';
import { memberCaller, type MemberCaller } from '../../platform/access/org-access.js';

type TypeBoxApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * The delete routes an organization's groups and collections share: one (`DELETE {base}/{id}`)
 * and many (`DELETE {base}` with `{ids}`), each also in the `POST …/delete` form older clients
 * send. Every form answers 200 with an empty body. `docs` documents the DELETE forms; the POST
 * forms are documented as their older forms.
 */
export function registerOrgDeleteRoutes(
  app: TypeBoxApp,
  opts: {
    base: string;
    access: AccessRule;
    tags: string[];
    docs: { one: RouteDoc; many: RouteDoc };
    remove: (caller: MemberCaller, ids: string[]) => Promise<void>;
  },
): void {
  const { base, access, tags, docs, remove } = opts;
  const path = base.replace(':orgId', '{orgId}');
  for (const [method, url] of [
    ['DELETE', `${base}/:id`],
    ['POST', `${base}/:id/delete`],
  ] as const) {
    app.route({
      method,
      url,
      config: { access },
      schema: { tags, ...(method === 'DELETE' ? docs.one : olderForm(docs.one, `DELETE ${path}/{id}`)), params: OrgIdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await remove(memberCaller(request), [request.params.id]);
        return emptyOk(reply);
      },
    });
  }
  for (const [method, url] of [
    ['DELETE', base],
    ['POST', `${base}/delete`],
  ] as const) {
    app.route({
      method,
      url,
      config: { access },
      schema: { tags, ...(method === 'DELETE' ? docs.many : olderForm(docs.many, `DELETE ${path}`)), params: OrgParams, body: BulkIdsBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await remove(memberCaller(request), request.body.ids);
        return emptyOk(reply);
      },
    });
  }
}
