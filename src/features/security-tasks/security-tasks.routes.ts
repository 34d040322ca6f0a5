import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { Guid, list, ListOf, OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { MAX_TASKS_PER_REQUEST, SecurityTaskStatus, SecurityTaskType, type SecurityTasks } from './security-tasks.service.js';

const tags = ['Security tasks'];

/** The official SecurityTasksResponseModel. */
const SecurityTaskResponse = Type.Object({
  object: Type.Literal('securityTask'),
  id: Type.String(),
  organizationId: Type.String(),
  cipherId: Type.Union([Type.String(), Type.Null()]),
  type: Type.Integer({ description: '0 UpdateAtRiskCredential' }),
  status: Type.Integer({ description: '0 Pending, 1 Completed' }),
  creationDate: Type.String(),
  revisionDate: Type.String(),
});

const MetricsResponse = Type.Object({ completedTasks: Type.Integer(), totalTasks: Type.Integer() });

const Status = Type.Optional(Type.Integer({ minimum: SecurityTaskStatus.Pending, maximum: SecurityTaskStatus.Completed, description: '0 Pending, 1 Completed; all without it' }));

const BulkCreateBody = Type.Object({
  tasks: Type.Array(Type.Object({ type: Type.Enum([SecurityTaskType.UpdateAtRiskCredential], { description: '0 UpdateAtRiskCredential' }), cipherId: Guid }), {
    minItems: 1,
    maxItems: MAX_TASKS_PER_REQUEST,
  }),
});

const ADMINS = 'owners, admins and custom members with accessReports (`orgPermission(accessReports)`); non-members get 404, other members 403';

/** Security tasks ({base_url}/tasks, as the official SecurityTaskController) and their metrics. */
export const securityTaskRoutes: FastifyPluginAsyncTypebox<{ tasks: SecurityTasks; orgAccess: OrgAccess }> = async (app, { tasks, orgAccess }) => {
  const admins = orgAccess.right('accessReports');

  app.get(
    '/tasks',
    {
      config: { access: access.application },
      schema: {
        tags,
        summary: 'List your security tasks',
        description: "The tasks of organizations you are a confirmed member of, for items you may edit, newest first; `status` keeps one status. Access: a user token with scope `api` from a client login.",
        querystring: Type.Object({ status: Status }),
        response: { 200: ListOf(SecurityTaskResponse) },
      },
    },
    async (request) => list(await tasks.forUser(userCaller(request), request.query.status)),
  );

  app.patch(
    '/tasks/:taskId/complete',
    {
      config: { access: access.application },
      schema: {
        tags,
        summary: 'Complete a security task',
        description: 'Marks the task completed and tells your apps to refresh their tasks; answers 204. Access: a member who may edit the task\'s item; anyone else gets 404, as for a task that does not exist.',
        params: Type.Object({ taskId: Guid }),
        response: { 204: Type.Null({ description: 'No content' }) },
      },
    },
    async (request, reply) => {
      await tasks.complete(userCaller(request), request.params.taskId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/tasks/organization',
    {
      config: { access: orgAccess.right('accessReports', '?organizationId') },
      schema: {
        tags,
        summary: "List an organization's security tasks",
        description: `Every task of the organization, newest first; \`status\` keeps one status. Access: ${ADMINS}.`,
        querystring: Type.Object({ organizationId: Guid, status: Status }),
        response: { 200: ListOf(SecurityTaskResponse) },
      },
    },
    async (request) => list(await tasks.forOrganization(memberCaller(request), request.query.status)),
  );

  const metrics = {
    config: { access: admins },
    schema: {
      tags,
      summary: "Count an organization's security tasks",
      description: `\`completedTasks\` and \`totalTasks\` (every status). Access: ${ADMINS}.`,
      params: OrgParams,
      response: { 200: MetricsResponse },
    },
  };
  app.get('/tasks/:orgId/metrics', metrics, async (request) => tasks.metrics(memberCaller(request)));
  app.get('/organizations/:orgId/security-tasks/metrics', metrics, async (request) => tasks.metrics(memberCaller(request)));

  app.post(
    '/tasks/:orgId/bulk-create',
    {
      config: { access: admins, callerLimit: 'bulk' },
      schema: {
        tags,
        summary: 'Create security tasks',
        description: `Creates a pending UpdateAtRiskCredential task for each item that has no pending task yet, and answers the new tasks with the pending ones already there. Every item must belong to the organization, else 400 and nothing is created. The members who can edit an item are told to refresh their tasks (push RefreshSecurityTasks). Access: ${ADMINS}.`,
        params: OrgParams,
        body: BulkCreateBody,
        response: { 200: ListOf(SecurityTaskResponse) },
      },
    },
    async (request) => list(await tasks.bulkCreate(memberCaller(request), request.body.tasks)),
  );
};
