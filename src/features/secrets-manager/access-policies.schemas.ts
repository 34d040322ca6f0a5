import { Type, type Static } from 'typebox';
import { Guid, Nullable } from '../../http/schemas.js';

/** At most this many entries per list of a policy request (the web app sends one per grantee). */
const MAX_POLICY_REQUESTS = 1000;

/** `{granteeId, read, write}`: one grantee's access to the resource the route names. */
export const AccessPolicyRequest = Type.Object({
  granteeId: Guid,
  read: Type.Boolean(),
  write: Type.Boolean(),
});
export type AccessPolicyRequest = Static<typeof AccessPolicyRequest>;

const PolicyRequests = Type.Array(AccessPolicyRequest, { maxItems: MAX_POLICY_REQUESTS });
/** The web app sends null for a list it leaves empty. */
const OptionalPolicyRequests = Type.Optional(Nullable(PolicyRequests));

/** PUT body of the project and machine-account people routes; a missing list means none. */
export const PeopleAccessPoliciesBody = Type.Object({
  userAccessPolicyRequests: OptionalPolicyRequests,
  groupAccessPolicyRequests: OptionalPolicyRequests,
});
export type PeopleAccessPoliciesBody = Static<typeof PeopleAccessPoliciesBody>;

export const ProjectServiceAccountsBody = Type.Object({ serviceAccountAccessPolicyRequests: PolicyRequests });
export type ProjectServiceAccountsBody = Static<typeof ProjectServiceAccountsBody>;

const GrantedPolicyRequest = Type.Object({ grantedId: Guid, read: Type.Boolean(), write: Type.Boolean() });
export const ServiceAccountGrantedPoliciesBody = Type.Object({ projectGrantedPolicyRequests: Type.Array(GrantedPolicyRequest, { maxItems: MAX_POLICY_REQUESTS }) });
export type ServiceAccountGrantedPoliciesBody = Static<typeof ServiceAccountGrantedPoliciesBody>;

/**
 * `accessPoliciesRequests` of a secret's create and update bodies: the secret's own grants to
 * members, groups and machine accounts. It replaces them all when present.
 */
export const SecretAccessPoliciesRequests = Type.Object({
  userAccessPolicyRequests: PolicyRequests,
  groupAccessPolicyRequests: PolicyRequests,
  serviceAccountAccessPolicyRequests: PolicyRequests,
});
export type SecretAccessPoliciesRequests = Static<typeof SecretAccessPoliciesRequests>;

const UserAccessPolicyResponse = Type.Object({
  object: Type.Literal('userAccessPolicy'),
  read: Type.Boolean(),
  write: Type.Boolean(),
  organizationUserId: Guid,
  organizationUserName: Nullable(Type.String()),
  currentUser: Type.Boolean(),
});

const GroupAccessPolicyResponse = Type.Object({
  object: Type.Literal('groupAccessPolicy'),
  read: Type.Boolean(),
  write: Type.Boolean(),
  groupId: Guid,
  groupName: Nullable(Type.String()),
  currentUserInGroup: Type.Boolean(),
});

const ServiceAccountAccessPolicyResponse = Type.Object({
  object: Type.Literal('serviceAccountProjectAccessPolicy'),
  read: Type.Boolean(),
  write: Type.Boolean(),
  serviceAccountId: Guid,
  serviceAccountName: Nullable(Type.String()),
});

/** The member and group policies on a resource, under the web app's name for that resource's list. */
const PeopleResponse = <O extends string>(object: O) =>
  Type.Object({
    object: Type.Literal(object),
    userAccessPolicies: Type.Array(UserAccessPolicyResponse),
    groupAccessPolicies: Type.Array(GroupAccessPolicyResponse),
  });

export const ProjectPeopleResponse = PeopleResponse('projectPeopleAccessPolicies');
export const ServiceAccountPeopleResponse = PeopleResponse('serviceAccountAccessPolicies');

export const ProjectServiceAccountsResponse = Type.Object({
  object: Type.Literal('ProjectServiceAccountsAccessPolicies'),
  serviceAccountAccessPolicies: Type.Array(ServiceAccountAccessPolicyResponse),
});

export const SecretAccessPoliciesResponse = Type.Object({
  object: Type.Literal('secretAccessPolicies'),
  userAccessPolicies: Type.Array(UserAccessPolicyResponse),
  groupAccessPolicies: Type.Array(GroupAccessPolicyResponse),
  serviceAccountAccessPolicies: Type.Array(ServiceAccountAccessPolicyResponse),
});

const GrantedProjectPolicyDetails = Type.Object({
  object: Type.Literal('grantedProjectAccessPolicyPermissionDetails'),
  accessPolicy: Type.Object({
    object: Type.Literal('grantedProjectAccessPolicy'),
    read: Type.Boolean(),
    write: Type.Boolean(),
    grantedProjectId: Guid,
    grantedProjectName: Nullable(Type.String()),
  }),
  hasPermission: Type.Boolean(),
});

export const GrantedPoliciesResponse = Type.Object({
  object: Type.Literal('ServiceAccountGrantedPoliciesPermissionDetails'),
  grantedProjectPolicies: Type.Array(GrantedProjectPolicyDetails),
});

export const PotentialGranteeResponse = Type.Object({
  object: Type.Literal('potentialGrantee'),
  id: Guid,
  name: Nullable(Type.String()),
  type: Type.Union([Type.Literal('user'), Type.Literal('group'), Type.Literal('serviceAccount'), Type.Literal('project')]),
  email: Nullable(Type.String()),
  currentUserInGroup: Type.Boolean(),
  currentUser: Type.Boolean(),
});
export type PotentialGrantee = Static<typeof PotentialGranteeResponse>;

export const SecretIdParams = Type.Object({ secretId: Guid });
