import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { Email } from '../../http/schemas.js';
import { BadRequest } from '../../http/errors.js';
import { OPERATOR_INVITATION_DAYS } from '../accounts/operator.service.js';
import { TWO_STEP_LOGIN_NOT_ON } from '../two-factor/two-factor-setup.service.js';
import { adminAccess } from './admin-access.js';
import { Csrf, frameOf, Html, IdParam, PAGE_SIZE, PageQuery, pager, sendPage } from './admin.pages.js';
import { operatorOf, type AdminService } from './admin.service.js';

const NOTICES = {
  disabled: 'The account is disabled: it cannot log in and its sessions have ended.',
  enabled: 'The account is enabled again.',
  unchanged: 'Nothing to change: the account already was in that state.',
  deauthorized: "Every session of the account has ended: its apps must log in again.",
  deleted: 'The account and its vault are deleted.',
  twoStepLoginRemoved: 'Two-step login is off for the account: its password alone logs in until the user turns it on again.',
} as const;

const docs = {
  list: {
    summary: 'Users page',
    description: 'Every account, searchable by email or name, 50 a page: created, last activity, email verified, two-step login on, items, organizations, status (and whether it must set a new password at next login), a link to its details, and the actions. Access: an admin session.',
  },
  invite: {
    summary: 'Invite a user',
    description: 'Mails the registration link (`strongroom users invite`); without SMTP the page shows the link to pass on. The link opens registration for that email for 5 days, even when REGISTRATION_ENABLED is off. Access: an admin session and its CSRF token.',
  },
  disable: { summary: 'Disable a user', description: 'The account keeps its data but cannot log in; its access and refresh tokens stop at once. Access: an admin session and its CSRF token.' },
  enable: { summary: 'Enable a user', description: 'A disabled account may log in again. Access: an admin session and its CSRF token.' },
  deauthorize: { summary: "End a user's sessions", description: "A new security stamp: every access and refresh token of the account stops, as the user's own \"log out of all sessions\". Access: an admin session and its CSRF token." },
  resendVerification: {
    summary: 'Resend the verification mail',
    description: "Mails the account the link that verifies its email (as `POST /accounts/verify-email`); without SMTP the page shows the link. Refused (400) when the email is already verified. Access: an admin session and its CSRF token.",
  },
  removeTwoStepPage: {
    summary: 'Confirm removing two-step login',
    description: 'Asks the operator to type the email of the account whose two-step login to remove; 400 when it has none on. Access: an admin session.',
  },
  removeTwoStep: {
    summary: "Remove a user's two-step login",
    description:
      'Once `confirm` is the account\'s email: every provider off, the recovery code and "remember this device" tokens gone, User_Disabled2fa recorded, and the Two-step login policy revokes the user where it binds them (as the two-factor feature does when the last provider goes off); the user is told by mail. 400 when no provider is on. Access: an admin session and its CSRF token.',
  },
  deletePage: { summary: 'Confirm deleting a user', description: 'Asks the operator to type the email of the account to delete. Access: an admin session.' },
  delete: {
    summary: 'Delete a user',
    description: "Deletes the account and its vault once `confirm` is its email; refused while it is an organization's only confirmed owner. Access: an admin session and its CSRF token.",
  },
} satisfies Record<string, RouteDoc>;


export const userPages: FastifyPluginAsyncTypebox<{ service: AdminService; tags: string[] }> = async (app, { service, tags }) => {
  const session = { access: adminAccess.session };
  const Action = Type.Object({ _csrf: Csrf });

  app.get(
    '/users',
    {
      config: session,
      schema: { tags, ...docs.list, querystring: Type.Object({ ...PageQuery, notice: Type.Optional(Type.Enum(Object.keys(NOTICES) as (keyof typeof NOTICES)[])) }), response: { 200: Html } },
    },
    async (request, reply) => {
      const q = (request.query.q ?? '').trim();
      const number = request.query.page ?? 1;
      const { users, total } = await service.users(q, { offset: (number - 1) * PAGE_SIZE, limit: PAGE_SIZE });
      const notice = request.query.notice ? NOTICES[request.query.notice] : null;
      return sendPage(reply, 'users', frameOf(request, 'Users', '/admin/users'), { users, q, notice, page: pager('/admin/users', { q }, number, total) });
    },
  );

  app.post(
    '/users/invite',
    { config: session, schema: { tags, ...docs.invite, body: Type.Object({ _csrf: Csrf, email: Email }), response: { 200: Html } } },
    async (request, reply) => {
      const result = await service.invite(operatorOf(request), request.body.email);
      return sendPage(reply, 'invited', frameOf(request, 'Invitation', '/admin/users'), { ...result, days: OPERATOR_INVITATION_DAYS });
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post(
      `/users/:id/${action}`,
      { config: session, schema: { tags, ...docs[action], params: IdParam, body: Action, response: { 200: Html } } },
      async (request, reply) => {
        const { changed } = await service.setDisabled(operatorOf(request), request.params.id, disabled);
        return reply.redirect(`/admin/users?notice=${changed ? (disabled ? 'disabled' : 'enabled') : 'unchanged'}`, 303);
      },
    );
  }

  app.post(
    '/users/:id/resend-verification',
    { config: session, schema: { tags, ...docs.resendVerification, params: IdParam, body: Action, response: { 200: Html } } },
    async (request, reply) => {
      const result = await service.resendVerification(operatorOf(request), request.params.id);
      return sendPage(reply, 'verification', frameOf(request, 'Email verification', '/admin/users'), result);
    },
  );

  app.post(
    '/users/:id/deauthorize',
    { config: session, schema: { tags, ...docs.deauthorize, params: IdParam, body: Action, response: { 200: Html } } },
    async (request, reply) => {
      await service.endSessions(operatorOf(request), request.params.id);
      return reply.redirect('/admin/users?notice=deauthorized', 303);
    },
  );

  app.get(
    '/users/:id/remove-two-step-login',
    { config: session, schema: { tags, ...docs.removeTwoStepPage, params: IdParam, response: { 200: Html } } },
    async (request, reply) => {
      const { user, on } = await service.twoStepLoginOn(request.params.id);
      if (!on) throw new BadRequest(TWO_STEP_LOGIN_NOT_ON);
      return sendPage(reply, 'confirm', frameOf(request, 'Remove two-step login', '/admin/users'), {
        heading: `Remove two-step login of ${user.email}`,
        explanation:
          'Every two-step login method of the account is turned off, its recovery code and remembered devices stop working, and organizations whose Two-step login policy binds the user revoke them. Do this only for a user who proved who they are and lost their second factor.',
        expected: user.email,
        action: `/admin/users/${user.id}/remove-two-step-login`,
        button: 'Remove two-step login',
        back: '/admin/users',
      });
    },
  );

  app.post(
    '/users/:id/remove-two-step-login',
    { config: session, schema: { tags, ...docs.removeTwoStep, params: IdParam, body: Type.Object({ _csrf: Csrf, confirm: Type.String({ minLength: 1, maxLength: 256 }) }), response: { 200: Html } } },
    async (request, reply) => {
      await service.removeTwoStepLogin(operatorOf(request), request.params.id, request.body.confirm);
      return reply.redirect('/admin/users?notice=twoStepLoginRemoved', 303);
    },
  );

  app.get('/users/:id/delete', { config: session, schema: { tags, ...docs.deletePage, params: IdParam, response: { 200: Html } } }, async (request, reply) => {
    const user = await service.getUser(request.params.id);
    return sendPage(reply, 'confirm', frameOf(request, 'Delete a user', '/admin/users'), {
      heading: `Delete ${user.email}`,
      explanation: 'The account, its vault and its memberships are deleted. This cannot be undone.',
      expected: user.email,
      action: `/admin/users/${user.id}/delete`,
      button: 'Delete the account',
      back: '/admin/users',
    });
  });

  app.post(
    '/users/:id/delete',
    { config: session, schema: { tags, ...docs.delete, params: IdParam, body: Type.Object({ _csrf: Csrf, confirm: Type.String({ minLength: 1, maxLength: 256 }) }), response: { 200: Html } } },
    async (request, reply) => {
      await service.deleteUser(operatorOf(request), request.params.id, request.body.confirm);
      return reply.redirect('/admin/users?notice=deleted', 303);
    },
  );
};
