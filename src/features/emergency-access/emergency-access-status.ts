// Bitwarden's numbers for a grant's type and status, which the repository, the jobs, key
// rotation and the admin console all read; kept apart from the schemas so the repository can
// import them without a cycle.

/** EmergencyAccessType: what the grantee may do once access is granted. */
export enum EmergencyAccessType {
  View = 0,
  Takeover = 1,
}

/** EmergencyAccessStatusType: where a grant is in its life. */
export enum EmergencyAccessStatus {
  Invited = 0,
  Accepted = 1,
  Confirmed = 2,
  RecoveryInitiated = 3,
  RecoveryApproved = 4,
}
