import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { IdParams, list, ListOf } from '../../http/schemas.js';
import {
  GrantedPoliciesResponse,
  PeopleAccessPoliciesBody,
  PotentialGranteeResponse,
  ProjectPeopleResponse,
  ProjectServiceAccountsBody,
  ProjectServiceAccountsResponse,
  SecretAccessPoliciesResponse,
  SecretIdParams,
  ServiceAccountGrantedPoliciesBody,
  ServiceAccountPeopleResponse,
} from './access-policies.schemas.js';
import type { AccessPolicyService } from './access-policies.service.js';
import { smCaller } from './sm-access.js';

const tags = ['Access policies'];

const SM =
  'a user token with scope api or a machine-account token with scope api.secrets (`secretsManager`), of a member with Secrets Manager access in an organization that has it';
const PROJECT_WRITE = `Access: ${SM}, who can write the project (owners and admins, or a member granted write); machine accounts and everyone else get 404.`;
const ACCOUNT_WRITE = `Access: ${SM}, who can write the machine account (owners and admins, or a member granted it); machine accounts and everyone else get 404.`;
const CHECKS =
  'A grantee listed twice is a 400 ("Resources must be unique"), an entry without read a 400 ("Resources must be Read = true"), a grantee of another organization or none a 404; nothing is written on any error.';

const docs = {
  peopleGrantees: {
    summary: 'List members and groups a policy can name',
    description: `Answers the organization's confirmed members with Secrets Manager access (type user; name, email, currentUser) and its groups (type group; currentUserInGroup). Access: ${SM}; anyone else gets 404.`,
  },
  accountGrantees: {
    summary: 'List machine accounts the caller can grant',
    description: `Answers the organization's machine accounts the caller can write (all of them for owners and admins), as potential grantees of type serviceAccount. Access: ${SM}; anyone else gets 404.`,
  },
  projectGrantees: {
    summary: 'List projects the caller can grant',
    description: `Answers the organization's projects the caller can write (all of them for owners and admins), as potential grantees of type project. Access: ${SM}; anyone else gets 404.`,
  },
  projectPeople: { summary: "Read a project's people policies", description: `Answers the members and groups granted the project, with their read and write. ${PROJECT_WRITE}` },
  replaceProjectPeople: {
    summary: "Replace a project's people policies",
    description: `Sets the members and groups granted the project to the lists given (a missing list means none) and answers them. ${CHECKS} ${PROJECT_WRITE}`,
  },
  projectAccounts: { summary: "Read a project's machine-account policies", description: `Answers the machine accounts granted the project, with their read and write. ${PROJECT_WRITE}` },
  replaceProjectAccounts: {
    summary: "Replace a project's machine-account policies",
    description: `Sets the machine accounts granted the project to the list given and answers them; granting a machine account also needs write on it, while changing or removing a grant needs only write on the project. The machine accounts whose access changes see it at their next sync. ${CHECKS} ${PROJECT_WRITE}`,
  },
  accountPeople: { summary: "Read a machine account's people policies", description: `Answers the members and groups who manage the machine account. ${ACCOUNT_WRITE}` },
  replaceAccountPeople: {
    summary: "Replace a machine account's people policies",
    description: `Sets the members and groups who manage the machine account; every entry must grant read and write (else 400 "Machine account access must be Can read, write"). Records ServiceAccount_UserAdded (2300), ServiceAccount_UserRemoved (2301), ServiceAccount_GroupAdded (2302) and ServiceAccount_GroupRemoved (2303) for each grantee added or removed. ${CHECKS} ${ACCOUNT_WRITE}`,
  },
  granted: {
    summary: 'Read the projects a machine account is granted',
    description: `Answers the machine account's project grants; hasPermission tells whether the caller could change each one (write on the project). ${ACCOUNT_WRITE}`,
  },
  replaceGranted: {
    summary: 'Replace the projects a machine account is granted',
    description: `Sets the machine account's project grants to the list given; every project whose grant is created, changed or removed needs the caller's write (else 404). The machine account sees the change at its next sync. ${CHECKS} ${ACCOUNT_WRITE}`,
  },
  secret: {
    summary: "Read a secret's own policies",
    description: `Answers the members, groups and machine accounts granted the secret itself (not through its project). Access: ${SM}, who can write the secret; machine accounts and everyone else get 404.`,
  },
} satisfies Record<string, RouteDoc>;

/** Secrets Manager access policies and potential grantees. */
export const accessPolicyRoutes: FastifyPluginAsyncTypebox<{ policies: AccessPolicyService }> = async (app, { policies }) => {
  const config = { access: access.userOrServiceAccount };

  app.get(
    '/organizations/:id/access-policies/people/potential-grantees',
    { config, schema: { tags, ...docs.peopleGrantees, params: IdParams, response: { 200: ListOf(PotentialGranteeResponse) } } },
    async (request) => list(await policies.peoplePotentialGrantees(smCaller(request), request.params.id)),
  );
  app.get(
    '/organizations/:id/access-policies/service-accounts/potential-grantees',
    { config, schema: { tags, ...docs.accountGrantees, params: IdParams, response: { 200: ListOf(PotentialGranteeResponse) } } },
    async (request) => list(await policies.serviceAccountPotentialGrantees(smCaller(request), request.params.id)),
  );
  app.get(
    '/organizations/:id/access-policies/projects/potential-grantees',
    { config, schema: { tags, ...docs.projectGrantees, params: IdParams, response: { 200: ListOf(PotentialGranteeResponse) } } },
    async (request) => list(await policies.projectPotentialGrantees(smCaller(request), request.params.id)),
  );

  app.get('/projects/:id/access-policies/people', { config, schema: { tags, ...docs.projectPeople, params: IdParams, response: { 200: ProjectPeopleResponse } } }, async (request) =>
    policies.projectPeople(smCaller(request), request.params.id),
  );
  app.put(
    '/projects/:id/access-policies/people',
    { config, schema: { tags, ...docs.replaceProjectPeople, params: IdParams, body: PeopleAccessPoliciesBody, response: { 200: ProjectPeopleResponse } } },
    async (request) => policies.replaceProjectPeople(smCaller(request), request.params.id, request.body),
  );

  app.get(
    '/projects/:id/access-policies/service-accounts',
    { config, schema: { tags, ...docs.projectAccounts, params: IdParams, response: { 200: ProjectServiceAccountsResponse } } },
    async (request) => policies.projectServiceAccounts(smCaller(request), request.params.id),
  );
  app.put(
    '/projects/:id/access-policies/service-accounts',
    { config, schema: { tags, ...docs.replaceProjectAccounts, params: IdParams, body: ProjectServiceAccountsBody, response: { 200: ProjectServiceAccountsResponse } } },
    async (request) => policies.replaceProjectServiceAccounts(smCaller(request), request.params.id, request.body),
  );

  app.get(
    '/service-accounts/:id/access-policies/people',
    { config, schema: { tags, ...docs.accountPeople, params: IdParams, response: { 200: ServiceAccountPeopleResponse } } },
    async (request) => policies.serviceAccountPeople(smCaller(request), request.params.id),
  );
  app.put(
    '/service-accounts/:id/access-policies/people',
    { config, schema: { tags, ...docs.replaceAccountPeople, params: IdParams, body: PeopleAccessPoliciesBody, response: { 200: ServiceAccountPeopleResponse } } },
    async (request) => policies.replaceServiceAccountPeople(smCaller(request), request.params.id, request.body),
  );

  app.get('/service-accounts/:id/granted-policies', { config, schema: { tags, ...docs.granted, params: IdParams, response: { 200: GrantedPoliciesResponse } } }, async (request) =>
    policies.serviceAccountGrantedPolicies(smCaller(request), request.params.id),
  );
  app.put(
    '/service-accounts/:id/granted-policies',
    { config, schema: { tags, ...docs.replaceGranted, params: IdParams, body: ServiceAccountGrantedPoliciesBody, response: { 200: GrantedPoliciesResponse } } },
    async (request) => policies.replaceServiceAccountGrantedPolicies(smCaller(request), request.params.id, request.body),
  );

  app.get('/secrets/:secretId/access-policies', { config, schema: { tags, ...docs.secret, params: SecretIdParams, response: { 200: SecretAccessPoliciesResponse } } }, async (request) =>
    policies.secretAccessPolicies(smCaller(request), request.params.secretId),
  );
};
