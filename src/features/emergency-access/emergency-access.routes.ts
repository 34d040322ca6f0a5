import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, IdParams, ListOf, emptyOk, list } from '../../http/schemas.js';
import { PolicyResponse } from '../policies/policies.schemas.js';
import { AttachmentResponseSchema } from '../vault/attachments.schemas.js';
import type { EmergencyAccessService } from './emergency-access.service.js';
import type { EmergencyRecovery } from './emergency-recovery.js';
import {
  AcceptBody,
  AttachmentParams,
  ConfirmBody,
  GranteeDetailsResponse,
  GrantorDetailsResponse,
  InviteBody,
  PasswordBody,
  TakeoverResponse,
  UpdateBody,
  ViewResponse,
} from './emergency-access.schemas.js';

const tags = ['Emergency access'];

const WHO = 'Another user, or an unknown id, answers 404; a step the grant\'s status (or type) does not allow answers 400 "Emergency Access not valid.".';
const GRANTOR = `${WHO} Access: a signed-in user of an official client (\`application\`), as the grant's grantor.`;
const GRANTEE = `${WHO} Access: a signed-in user of an official client (\`application\`), as the grant's grantee.`;
const EITHER = `${WHO} Access: a signed-in user of an official client (\`application\`), as the grant's grantor or grantee.`;
const GRANTED = 'Only once the recovery is approved (status 4), by the grantor or after the wait time, and only for a grant of that type.';

const docs = {
  trusted: { summary: 'Emergency contacts the caller named', description: 'Every grant the caller made, invited to approved, with each contact\'s name and email. Access: a signed-in user of an official client (`application`).' },
  granted: { summary: 'Accounts that named the caller', description: 'Every grant made to the caller since they accepted it, with each grantor\'s name and email. Access: a signed-in user of an official client (`application`).' },
  get: { summary: 'Read an emergency contact', description: `One grant the caller made. ${GRANTOR}` },
  invite: {
    summary: 'Name an emergency contact',
    description:
      'Invites an email address as a contact who may view (type 0) or take over (type 1) the account after `waitTimeDays` (1 to 32,767), records EmergencyAccess_Invited (9100) and mails a link to the web vault\'s accept page, valid 5 days (502 when the mail server refuses, after the grant is saved; without SMTP the link is logged). Refused (400) for the caller\'s own address, an address already named, and a member of an organization that uses Automatic User Confirmation. Free for every account. Access: a signed-in user of an official client (`application`).',
  },
  reinvite: { summary: 'Resend an emergency access invitation', description: `Mails a fresh invitation link while the contact has not accepted (status 0). ${GRANTOR}` },
  accept: {
    summary: 'Accept an emergency access invitation',
    description:
      'The invited account takes up the grant with the mailed token: the token must be this server\'s, unexpired, for this grant and for the caller\'s email (400 "Invalid token." otherwise); records EmergencyAccess_Accepted (9101) and mails the grantor. An unknown id answers 404. Access: a signed-in user of an official client (`application`), the invited one.',
  },
  confirm: { summary: 'Confirm an emergency contact', description: `The grantor hands over the user key wrapped with the contact's public key (\`key\`) once the contact has accepted (status 1); records EmergencyAccess_Confirmed (9102) and mails the contact. ${GRANTOR}` },
  update: { summary: 'Change an emergency contact', description: `Sets the type and wait time; \`keyEncrypted\` replaces the wrapped key only on a grant that holds one (key rotation). Records EmergencyAccess_Updated (9103). ${GRANTOR}` },
  remove: { summary: 'Remove an emergency contact', description: `Deletes the grant, whatever its status, and records EmergencyAccess_Removed (9104). ${EITHER}` },
  initiate: { summary: 'Ask for emergency access', description: `Starts the wait on a confirmed grant (status 2 → 3), records EmergencyAccess_RecoveryInitiated (9105) and mails the grantor, who is reminded daily on the last day; after the wait the access is granted unless the grantor rejects it. ${GRANTEE}` },
  approve: { summary: 'Grant emergency access now', description: `Grants a waiting recovery before its time (status 3 → 4), records EmergencyAccess_RecoveryApproved (9106) and mails the contact. ${GRANTOR}` },
  reject: { summary: 'Refuse emergency access', description: `Refuses a waiting or granted recovery (status 3 or 4 → 2), records EmergencyAccess_RecoveryRejected (9107) and mails the contact. ${GRANTOR}` },
  view: { summary: "View the grantor's vault", description: `The grantor's personal items (organization items are not included) and the user key wrapped for the caller; records EmergencyAccess_Viewed (9108). ${GRANTED} ${GRANTEE}` },
  attachment: { summary: "Download an attachment of the grantor's item", description: `An attachment of one of the grantor's personal items with a download URL good for a minute. ${GRANTED} ${GRANTEE}` },
  takeover: {
    summary: 'Start taking over the account',
    description: `The grantor's KDF settings and the user key wrapped for the caller, to make the new master password with. Refused (400) while the grantor belongs to an organization that uses Automatic User Confirmation. ${GRANTED} ${GRANTEE}`,
  },
  password: {
    summary: "Set the grantor's new master password",
    description: `Sets the grantor's master password (\`authenticationData\` + \`unlockData\`, or the older \`newMasterPasswordHash\` + \`key\`), turns off the grantor's two-step login and new-device checks, removes the grantor from every organization they do not own, ends all their sessions (LogOut) and records EmergencyAccess_TakenOver (9109). Refused as the takeover is. ${GRANTED} ${GRANTEE}`,
  },
  policies: { summary: "The grantor's organization policies", description: `For a takeover: the policies of the grantor's organizations when the grantor owns one (the client applies their master password rules), else an empty list. ${GRANTED} ${GRANTEE}` },
} satisfies Record<string, RouteDoc>;

/** The view is JSON text written by the vault's item writers (see emergency-recovery.ts); Fastify sends it as it is. */
function sendJson(reply: FastifyReply, json: string) {
  return reply.type('application/json; charset=utf-8').send(json);
}

/** `/emergency-access`: trusted emergency contacts (emergency-access.service.ts, emergency-recovery.ts). */
export const emergencyAccessRoutes: FastifyPluginAsyncTypebox<{ emergencyAccess: EmergencyAccessService; recovery: EmergencyRecovery }> = async (app, { emergencyAccess, recovery }) => {
  const config = { access: access.application };
  const inviteConfig = { ...config, callerLimit: 'emergencyInvite' } as const;
  const empty = { 200: EmptyResponse };
  const BASE = '/emergency-access';

  app.get(`${BASE}/trusted`, { config, schema: { tags, ...docs.trusted, response: { 200: ListOf(GranteeDetailsResponse) } } }, async (request) =>
    list(await emergencyAccess.trusted(userCaller(request))),
  );
  app.get(`${BASE}/granted`, { config, schema: { tags, ...docs.granted, response: { 200: ListOf(GrantorDetailsResponse) } } }, async (request) =>
    list(await emergencyAccess.granted(userCaller(request))),
  );
  app.get(`${BASE}/:id`, { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: GranteeDetailsResponse } } }, async (request) =>
    emergencyAccess.get(userCaller(request), request.params.id),
  );
  app.get(`${BASE}/:id/policies`, { config, schema: { tags, ...docs.policies, params: IdParams, response: { 200: ListOf(PolicyResponse) } } }, async (request) =>
    list(await recovery.policies(userCaller(request), request.params.id)),
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${BASE}/:id`,
      config,
      schema: { tags, ...docs.update, params: IdParams, body: UpdateBody, response: empty },
      handler: async (request, reply) => {
        await emergencyAccess.update(userCaller(request), request.params.id, request.body);
        return emptyOk(reply);
      },
    });
  }
  for (const [method, url] of [['DELETE', `${BASE}/:id`], ['POST', `${BASE}/:id/delete`]] as const) {
    app.route({
      method,
      url,
      config,
      schema: { tags, ...docs.remove, params: IdParams, response: empty },
      handler: async (request, reply) => {
        await emergencyAccess.remove(userCaller(request), request.params.id);
        return emptyOk(reply);
      },
    });
  }

  app.post(`${BASE}/invite`, { config: inviteConfig, schema: { tags, ...docs.invite, body: InviteBody, response: empty } }, async (request, reply) => {
    await emergencyAccess.invite(userCaller(request), request.body);
    return emptyOk(reply);
  });
  app.post(`${BASE}/:id/accept`, { config, schema: { tags, ...docs.accept, params: IdParams, body: AcceptBody, response: empty } }, async (request, reply) => {
    await emergencyAccess.accept(userCaller(request), request.params.id, request.body.token);
    return emptyOk(reply);
  });
  app.post(`${BASE}/:id/confirm`, { config, schema: { tags, ...docs.confirm, params: IdParams, body: ConfirmBody, response: empty } }, async (request, reply) => {
    await emergencyAccess.confirm(userCaller(request), request.params.id, request.body.key);
    return emptyOk(reply);
  });

  // The steps without a body: each one call on the grant.
  for (const name of ['reinvite', 'initiate', 'approve', 'reject'] as const) {
    // Each invitation mails an address the caller chooses, so invite and resend share a per-user limit.
    app.post(`${BASE}/:id/${name}`, { config: name === 'reinvite' ? inviteConfig : config, schema: { tags, ...docs[name], params: IdParams, response: empty } }, async (request, reply) => {
      await emergencyAccess[name](userCaller(request), request.params.id);
      return emptyOk(reply);
    });
  }

  app.post(`${BASE}/:id/view`, { config, schema: { tags, ...docs.view, params: IdParams, response: { 200: ViewResponse } } }, async (request, reply) =>
    sendJson(reply, await recovery.view(userCaller(request), request.params.id)),
  );
  app.get(`${BASE}/:id/:cipherId/attachment/:attachmentId`, { config, schema: { tags, ...docs.attachment, params: AttachmentParams, response: { 200: AttachmentResponseSchema } } }, async (request) =>
    recovery.attachment(userCaller(request), request.params.id, request.params.cipherId, request.params.attachmentId),
  );
  app.post(`${BASE}/:id/takeover`, { config, schema: { tags, ...docs.takeover, params: IdParams, response: { 200: TakeoverResponse } } }, async (request) =>
    recovery.takeover(userCaller(request), request.params.id),
  );
  app.post(`${BASE}/:id/password`, { config, schema: { tags, ...docs.password, params: IdParams, body: PasswordBody, response: empty } }, async (request, reply) => {
    await recovery.password(userCaller(request), request.params.id, request.body);
    return emptyOk(reply);
  });
};
