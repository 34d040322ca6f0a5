import { createHash } from 'node:crypto';
import { SSO_START_PATH } from './sso-start.script.js';

/**
 * The page `/` answers when no web vault is configured: how to add one, how to create the first
 * account and how to log in with the CLI. It also stands in for the web vault's `#/sso` page,
 * which the clients open to start single sign-on: its script (sso-start.script.ts) shows the
 * SSO section instead when the URL's fragment is `#/sso`. Rendered with Eta, which escapes every
 * `<%= %>`.
 */
const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1b1b1b; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
code, pre { font-family: ui-monospace, monospace; background: #f1f1f1; border-radius: 4px; }
code { padding: 0 .25rem; } pre { padding: .75rem; overflow-x: auto; }
label { display: block; font-weight: 600; margin-top: 1rem; }
.hint { margin: .25rem 0; color: #444; }
input { font: inherit; padding: .4rem .5rem; width: 100%; max-width: 24rem; box-sizing: border-box; border: 1px solid #767676; border-radius: 4px; }
input[aria-invalid="true"] { border-color: #b3261e; }
button { font: inherit; margin-top: 1rem; padding: .45rem 1rem; border: 0; border-radius: 4px; background: #0b57d0; color: #fff; cursor: pointer; }
button:disabled { background: #767676; cursor: default; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.error { color: #b3261e; font-weight: 600; }
`;

const TEMPLATE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>Strongroom</title>
<style><%~ it.style %></style>
<script src="<%= it.ssoScript %>" defer></script>
</head>
<body>
<main>
<div id="about">
<h1>Strongroom is running</h1>
<p>This server speaks the Bitwarden interface at <code><%= it.publicUrl %></code>. No web vault is installed, so this page stands in for it.</p>

<h2>Add the web vault</h2>
<ol>
<li>Download a self-hosted build of the Bitwarden web vault: <code>web-&lt;version&gt;-selfhosted-COMMERCIAL.zip</code> from the <code>web-v…</code> releases of github.com/bitwarden/clients, or vaultwarden's <code>bw_web_v&lt;version&gt;.tar.gz</code> (github.com/dani-garcia/bw_web_builds).</li>
<li>On the server, run <code>strongroom web-vault install &lt;file&gt;</code>: it checks the release and unpacks it into <code><%= it.defaultDir %></code> (or <code>WEB_VAULT_DIR</code> when set).</li>
<li>Restart Strongroom. The web vault then answers here, at <code><%= it.publicUrl %>/</code>.</li>
</ol>

<h2>Create an account</h2>
<p>On the server, run the operator command:</p>
<pre>strongroom users create --email you@example.com</pre>
<p>From a source checkout that is <code>npm run strongroom -- users create --email you@example.com</code>.</p>

<h2>Log in with the Bitwarden CLI</h2>
<pre>bw config server <%= it.publicUrl %>
bw login you@example.com</pre>
<p>The CLI only talks HTTPS. When Strongroom serves TLS with a certificate of your own CA (<code>TLS_CERT_FILE</code>, <code>TLS_KEY_FILE</code>), let the CLI trust that CA: <code>NODE_EXTRA_CA_CERTS=/path/to/ca.pem bw login …</code>.</p>
<p>Members of an organization with single sign-on log in with <code>bw login --sso</code>: the CLI opens this page in your browser to start it.</p>
<noscript><p>Logging in with single sign-on from a Bitwarden app needs JavaScript on this page.</p></noscript>
</div>

<section id="sso" aria-labelledby="sso-heading" hidden>
<h1 id="sso-heading">Log in with single sign-on</h1>
<p>Your Bitwarden app sent you here to log in through your organization's identity provider.</p>
<form id="sso-form" novalidate>
<label for="sso-identifier">SSO identifier</label>
<p id="sso-hint" class="hint">Your organization's identifier for single sign-on. Your administrator can tell you.</p>
<input id="sso-identifier" name="identifier" type="text" required autocomplete="organization" autocapitalize="none" spellcheck="false" aria-describedby="sso-hint sso-error">
<button id="sso-submit" type="submit">Continue</button>
<p id="sso-error" class="error" role="alert"></p>
<p id="sso-status" role="status"></p>
</form>
</section>
</main>
</body>
</html>
`;


export interface LandingPageData {
  publicUrl: string;
  /** Where the web vault is looked for by default (DATA_DIR/web-vault). */
  defaultDir: string;
}

/** The page's HTML; Eta is loaded here, on the page's first request, not at start. */
export async function renderLandingPage(data: LandingPageData): Promise<string> {
  const { Eta } = await import('eta');
  // No trimming: the CLI commands in <pre> are one per line.
  const eta = new Eta({ autoEscape: true, autoTrim: false });
  eta.loadTemplate('@landing', TEMPLATE);
  return eta.render('@landing', { ...data, style: STYLE, ssoScript: SSO_START_PATH });
}

/**
 * Only this page's own inline style and Strongroom's own script may apply, and the script may
 * fetch only from this origin; no frame or remote resource at all. Forms are never submitted:
 * the SSO form is handled by the script, which navigates to the identity service itself.
 */
export const LANDING_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "script-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ');
