import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Guid } from '../../http/schemas.js';
import { renderPage, type PageFrame } from './admin.views.js';

/** What every page route of the console shares: schemas, rendering, paging. */
export const Html = Type.String({ description: 'HTML page' });
/** Every form carries the CSRF token; the hooks check it before the body's schema. */
export const Csrf = Type.String({ minLength: 1, maxLength: 100 });
export const IdParam = Type.Object({ id: Guid });
export const PageQuery = {
  q: Type.Optional(Type.String({ maxLength: 200 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
};

/** Pages are sent as HTML, never serialized against the schema; redirects carry no body. */
export function sendPage(reply: FastifyReply, name: string, frame: PageFrame, data: Record<string, unknown>, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(renderPage(name, frame, data));
}

export function frameOf(request: FastifyRequest, title: string, active?: string, chart = false): PageFrame {
  return { title, active, chart, ...(request.adminSession ? { csrf: request.adminSession.csrfToken } : {}) };
}

export const PAGE_SIZE = 50;

/** The pager's links keep the other query parameters. */
export function pager(path: string, query: Record<string, string | number | undefined>, number: number, total: number) {
  const count = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const link = (n: number) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '' && key !== 'page') params.set(key, String(value));
    params.set('page', String(n));
    return `${path}?${params.toString()}`;
  };
  return { number, count, total, previous: number > 1 ? link(number - 1) : null, next: number < count ? link(number + 1) : null };
}

