/**
 * The plain page a person sees in the browser when an SSO login cannot go on: what went wrong
 * and how to start again. No script, no style, nothing from elsewhere, so the strictest
 * content security policy holds.
 */

export const SSO_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function ssoErrorPage(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Single sign-on failed</title></head>
<body><main>
<h1>Single sign-on failed</h1>
<p id="problem">${escapeHtml(message)}</p>
<p>Close this page and start the login again from your Bitwarden app (Log in with single sign-on). If it fails again, show this message to your organization's administrator.</p>
</main></body></html>
`;
}
