/**
 * The landing page's script, served at /sso-start.js (the page's policy allows no inline script).
 *
 * The official clients start single sign-on by opening the web vault's `#/sso` page with
 * `clientId`, `redirectUri`, `state` and `codeChallenge` (and `identifier` when the user named
 * the organization). Without a web vault installed, this script takes that page's part: it asks
 * for the organization's SSO identifier, gets an `ssoToken` from `/identity/sso/prevalidate`, and
 * sends the browser to `/identity/connect/authorize` with the parameters the web vault sends,
 * the client's state carrying `_identifier=<identifier>` as the clients expect. Everything else
 * (the identity provider, the callback, the code) happens on the server and in the client.
 */
export const SSO_START_PATH = '/sso-start.js';

/** Where the last identifier typed is remembered, as the web vault remembers it. */
export const SSO_IDENTIFIER_STORAGE_KEY = 'strongroom.ssoIdentifier';

export const SSO_START_JS = `
(function () {
  'use strict';
  var CLIENTS = ['web', 'browser', 'desktop', 'cli'];
  // These two finish the login on the web vault's own sso-connector.html, which is not here.
  var NEED_WEB_VAULT = ['web', 'browser'];
  var STORAGE_KEY = ${JSON.stringify(SSO_IDENTIFIER_STORAGE_KEY)};
  var section = document.getElementById('sso');
  var about = document.getElementById('about');
  var form = document.getElementById('sso-form');
  var input = document.getElementById('sso-identifier');
  var button = document.getElementById('sso-submit');
  var error = document.getElementById('sso-error');
  var status = document.getElementById('sso-status');
  if (!section || !about || !form || !input || !button || !error || !status) return;
  var request = null;

  function remembered() {
    try { return window.localStorage.getItem(STORAGE_KEY) || ''; } catch (e) { return ''; }
  }
  function remember(identifier) {
    try { window.localStorage.setItem(STORAGE_KEY, identifier); } catch (e) { /* storage off: nothing to remember */ }
  }
  function showError(message) {
    status.textContent = '';
    error.textContent = message;
    input.setAttribute('aria-invalid', message ? 'true' : 'false');
  }
  function busy(on) {
    button.disabled = on;
    form.setAttribute('aria-busy', on ? 'true' : 'false');
    status.textContent = on ? 'Checking the identifier\u2026' : '';
  }

  /** The client's request, from the fragment: #/sso?clientId=…&redirectUri=…&state=…&codeChallenge=… */
  function clientRequest() {
    var hash = window.location.hash;
    if (!/^#\\/sso(\\?|$)/.test(hash)) return null;
    var query = new URLSearchParams(hash.indexOf('?') >= 0 ? hash.slice(hash.indexOf('?') + 1) : '');
    var read = function (name) { var value = query.get(name); return value === null ? '' : value; };
    return { clientId: read('clientId'), redirectUri: read('redirectUri'), state: read('state'), codeChallenge: read('codeChallenge'), identifier: read('identifier').trim() };
  }

  /** What is wrong with the client's request, or '' when the login can start. */
  function problemOf(r) {
    var missing = ['clientId', 'redirectUri', 'state', 'codeChallenge'].filter(function (name) { return !r[name]; });
    if (missing.length > 0) return 'This page was opened without ' + missing.join(', ') + '. Start the login from your Bitwarden app (for the CLI: bw login --sso).';
    if (CLIENTS.indexOf(r.clientId) < 0) return 'This page was opened by an unknown client (' + r.clientId + '). Start the login from your Bitwarden app.';
    if (NEED_WEB_VAULT.indexOf(r.clientId) >= 0) return 'The web vault and the browser extension finish single sign-on on a page of the web vault, which this server does not have. Log in with SSO from the desktop app or the CLI, or ask your administrator to install the web vault.';
    return '';
  }

  function messageOf(body, statusCode) {
    if (body && typeof body === 'object') {
      var model = body.ErrorModel || body.errorModel;
      var text = body.message || body.Message || (model && (model.Message || model.message)) || body.error_description;
      if (typeof text === 'string' && text) return text;
    }
    return 'The server answered ' + statusCode + '. Check the identifier, or ask your administrator.';
  }

  function start(identifier) {
    showError('');
    if (!identifier) {
      showError("Enter your organization's SSO identifier.");
      input.focus();
      return;
    }
    remember(identifier);
    busy(true);
    var prevalidate = new URL('identity/sso/prevalidate', window.location.href);
    prevalidate.searchParams.set('domainHint', identifier);
    fetch(prevalidate.href, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (body) {
          if (!response.ok || !body || typeof body.token !== 'string') throw new Error(messageOf(body, response.status));
          return body.token;
        });
      })
      .then(function (token) {
        // The parameters and their order are the web vault's; the state keeps the client's own
        // value in front, which the client checks, and names the organization after it.
        var authorize = new URL('identity/connect/authorize', window.location.href);
        var params = [
          ['client_id', request.clientId],
          ['redirect_uri', request.redirectUri],
          ['response_type', 'code'],
          ['scope', 'api offline_access'],
          ['state', request.state + '_identifier=' + identifier],
          ['code_challenge', request.codeChallenge],
          ['code_challenge_method', 'S256'],
          ['response_mode', 'query'],
          ['domain_hint', identifier],
          ['ssoToken', token],
        ];
        authorize.search = params.map(function (p) { return encodeURIComponent(p[0]) + '=' + encodeURIComponent(p[1]); }).join('&');
        status.textContent = 'Going to your identity provider\u2026';
        window.location.assign(authorize.href);
      })
      .catch(function (e) {
        busy(false);
        showError(e && e.message ? e.message : 'The server could not be reached. Try again.');
        input.focus();
      });
  }

  function route() {
    request = clientRequest();
    if (!request) {
      section.hidden = true;
      about.hidden = false;
      return;
    }
    about.hidden = true;
    section.hidden = false;
    document.title = 'Log in with SSO \u00b7 Strongroom';
    input.value = request.identifier || input.value || remembered();
    var problem = problemOf(request);
    button.disabled = Boolean(problem);
    showError(problem);
    if (problem) return;
    // As the web vault does: an identifier the client named starts the login at once.
    if (request.identifier) start(request.identifier);
    else input.focus();
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (request && !problemOf(request)) start(input.value.trim());
  });
  window.addEventListener('hashchange', route);
  route();
})();
`;
