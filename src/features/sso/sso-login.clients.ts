/**
 * Where each official client may be sent back at the end of an SSO login, as the official
 * identity server's ApiClient lists them: the web vault and the browser extension through the
 * web vault's sso-connector.html, the desktop app and the CLI on a local port 8065-8070 (the
 * CLI listens on the first free one), the desktop and mobile apps on bitwarden://sso-callback,
 * the Directory Connector on bwdc://sso-callback.
 */

const LOCAL_PORTS = [8065, 8066, 8067, 8068, 8069, 8070].map((port) => `http://localhost:${port}`);

export function redirectUrisOf(clientId: string, publicUrl: string): readonly string[] | undefined {
  const connector = `${publicUrl.replace(/\/+$/, '')}/sso-connector.html`;
  switch (clientId) {
    case 'web':
    case 'browser':
      return [connector];
    case 'desktop':
      return ['bitwarden://sso-callback', ...LOCAL_PORTS];
    case 'cli':
      return LOCAL_PORTS;
    case 'mobile':
      return ['bitwarden://sso-callback'];
    case 'connector':
      return [...LOCAL_PORTS, 'bwdc://sso-callback'];
    default:
      return undefined;
  }
}
