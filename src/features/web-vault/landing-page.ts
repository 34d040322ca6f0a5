import { createHash } from 'node:crypto';

/**
 * The page `/` answers when no web vault is configured: how to add one, how to create the first
 * account and how to log in with the CLI. Rendered with Eta, which escapes every `<%= %>`.
 */
const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1b1b1b; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
code, pre { font-family: ui-monospace, monospace; background: #f1f1f1; border-radius: 4px; }
code { padding: 0 .25rem; } pre { padding: .75rem; overflow-x: auto; }
`;

const TEMPLATE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>Strongroom</title>
<style><%~ it.style %></style>
</head>
<body>
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
  return eta.render('@landing', { ...data, style: STYLE });
}

/** Only this page's own inline style may apply; no script, frame or remote resource at all. */
export const LANDING_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ');
