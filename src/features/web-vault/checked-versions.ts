/**
 * The web vault releases Strongroom was checked with, and how. An operator installing a web vault
 * (`strongroom web-vault install`) is told whether theirs is one of them: a release outside this
 * list may call routes Strongroom does not serve yet (test/official-routes.test.ts lists them).
 * Add a row only for a release someone actually used against Strongroom.
 */
/** Whose build of the web vault: Bitwarden's release, or vaultwarden's patched bw_web_builds. */
export type WebVaultBuild = 'bitwarden' | 'vaultwarden';

export interface CheckedRelease {
  /** A release cycle (`2024.10`, matching 2024.10.0, 2024.10.5, …) or one exact version. */
  readonly version: string;
  readonly build: WebVaultBuild;
  readonly how: string;
}

export const CHECKED_WEB_VAULT_RELEASES: readonly CheckedRelease[] = [
  {
    version: '2024.10',
    build: 'bitwarden',
    how: "Bitwarden's self-hosted commercial build, by hand in Chromium: registration, login, unlock, the personal vault, two-step login, Send, import and export, Secrets Manager and the reports (docs/web-vault.md)",
  },
];

/**
 * The checked releases a web vault version belongs to (of any build: the caller tells a patched
 * build of a checked version from the checked build itself); build metadata (`+abc1234`) is ignored.
 */
export function checkedReleases(version: string, releases: readonly CheckedRelease[] = CHECKED_WEB_VAULT_RELEASES): CheckedRelease[] {
  const plain = version.trim().replace(/^v/, '').split('+')[0] ?? '';
  return releases.filter((release) => plain === release.version || plain.startsWith(`${release.version}.`));
}
