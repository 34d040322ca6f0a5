import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { SLICE_MS, yieldToLoop } from '../../shared/work-slices.js';
import { MEMBER_ACCESS_LIMITS, type MemberAccessReport } from './member-access.service.js';
import { MemberAccessRow } from './member-access.schemas.js';

const tags = ['Reports'];

/**
 * The rows as one JSON array, written a slice at a time: a large organization's report runs to
 * tens of megabytes, which one JSON.stringify would hold the event loop for.
 */
async function* jsonArrayInSlices(rows: readonly MemberAccessRow[]): AsyncGenerator<string> {
  let chunk = '[';
  let sliceStarted = performance.now();
  for (let i = 0; i < rows.length; i++) {
    chunk += (i === 0 ? '' : ',') + JSON.stringify(rows[i]);
    if (performance.now() - sliceStarted > SLICE_MS) {
      yield chunk;
      chunk = '';
      await yieldToLoop();
      sliceStarted = performance.now();
    }
  }
  yield `${chunk}]`;
}

/** The organization member access report ({base_url}/reports/member-access/{orgId}, as the official ReportsController). */
export const memberAccessRoutes: FastifyPluginAsyncTypebox<{ memberAccess: MemberAccessReport; orgAccess: OrgAccess }> = async (app, { memberAccess, orgAccess }) => {
  app.get(
    '/reports/member-access/:orgId',
    {
      config: { access: orgAccess.right('accessReports'), callerLimit: 'export' },
      schema: {
        tags,
        summary: "Get an organization's member access report",
        description:
          "Who reaches which collection, and how: one row per member and way they reach a collection (directly, `groupId` null, or through each group), with that way's access (`readOnly`, `hidePasswords`, `manage`) and the ids of the collection's items not in the trash (`cipherIds`); a member who reaches no collection has one row with the collection fields null. Members of every status but revoked are listed (invited and accepted ones hold their assignments before they are confirmed); `userGuid` is the membership id. Access to all collections, from the membership or a group, is a row per collection with full access; the Manager role manages what it is assigned. " +
          `An organization whose report would pass ${MEMBER_ACCESS_LIMITS.rows} rows or ${MEMBER_ACCESS_LIMITS.itemIds} item ids in all gets 400. ` +
          "Limited per caller as the exports are (`RATE_LIMIT_EXPORT`). Access: owners, admins and custom members with accessReports (`orgPermission(accessReports)`) of an organization whose plan has reports (Enterprise; 400 otherwise); non-members get 404, other members 403.",
        params: OrgParams,
        response: { 200: Type.Array(MemberAccessRow) },
      },
    },
    async (request, reply) => {
      const rows = await memberAccess.report(memberCaller(request));
      // Streamed, so the schema above documents the answer rather than serializing it.
      return reply.type('application/json; charset=utf-8').send(Readable.from(jsonArrayInSlices(rows)) as unknown as MemberAccessRow[]);
    },
  );
};
