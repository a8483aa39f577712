// The official TypeScript SDK's (v1) OAuth clients against `wharf serve --auth-issuer`.
// Client credentials, and authorization code + PKCE with dynamic client registration, in a 2025
// session over Streamable HTTP, then the scope step-up `admin_report` (scope demo:admin) asks for.
// Needs a running interop/oidc/provider.mjs and a Wharf server using it:
//   WHARF_OIDC_ISSUER=http://127.0.0.1:PPORT  WHARF_MCP_URL=http://127.0.0.1:WPORT/mcp
// Run from interop/ts with `node --test oauth-clients.mjs` (not named *.test.mjs, so the plain
// `node --test`, which has no provider, leaves it out). Everything else is discovered from the
// 401 and the protected resource metadata.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const mcpUrl = process.env.WHARF_MCP_URL;
const issuer = process.env.WHARF_OIDC_ISSUER;
// Every test and request is bounded; a hang fails instead of blocking the run.
const bounded = { timeout: 60_000 };
const requestOptions = { timeout: 15_000 };

function text(result) {
  return result.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');
}

function claims(token) {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

async function toolNames(client) {
  return (await client.listTools(undefined, requestOptions)).tools.map((tool) => tool.name);
}

function callTool(client, name, args = {}) {
  return client.callTool({ name, arguments: args }, undefined, requestOptions);
}

/**
 * An OAuthClientProvider for the authorization code flow whose user agent is headless: it
 * follows the authorization URL with plain GETs, keeping cookies (the provider's login
 * session), until the redirect to the callback, and keeps the code for `finishAuth`.
 * Nothing listens on the redirect URI; the redirect to it is only read.
 */
class HeadlessAuthorization {
  constructor(redirectUrl, clientMetadata) {
    this.redirectUrl = redirectUrl;
    this.clientMetadata = clientMetadata;
    this.authorizations = [];
    this.cookies = new Map();
  }

  state() {
    this.expectedState = crypto.randomUUID();
    return this.expectedState;
  }
  clientInformation() { return this.client; }
  saveClientInformation(client) { this.client = client; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }

  async redirectToAuthorization(authorizationUrl) {
    this.authorizations.push(authorizationUrl.searchParams);
    let url = authorizationUrl.href;
    for (let hop = 0; hop < 10 && !url.startsWith(this.redirectUrl); hop += 1) {
      const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const response = await fetch(url, { redirect: 'manual', headers: { cookie }, signal: AbortSignal.timeout(10_000) });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair.indexOf('=');
        this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
      const location = response.headers.get('location');
      if (!location) throw new Error(`${url}: ${response.status} ${(await response.text()).slice(0, 300)}`);
      await response.body?.cancel();
      url = new URL(location, url).href;
    }
    const back = new URL(url).searchParams;
    if (!url.startsWith(this.redirectUrl)) throw new Error('the authorization did not come back to the callback');
    if (back.has('error')) throw new Error(`the authorization failed: ${back}`);
    assert.equal(back.get('state'), this.expectedState);
    assert.equal(back.get('iss'), issuer, 'RFC 9207: the response names the issuer');
    this.code = back.get('code');
  }
}

// Run explicitly, so a missing input is a failure rather than a skip.
function requireInputs() {
  assert.ok(mcpUrl && issuer, 'set WHARF_MCP_URL and WHARF_OIDC_ISSUER');
}

test('client credentials: a token for the MCP URL, then a step-up the SDK cannot do', bounded, async () => {
  requireInputs();
  const provider = new ClientCredentialsProvider({
    clientId: 'wharf-test',
    clientSecret: 'wharf-test-secret',
    expectedIssuer: issuer,
    // The SDK asks for this scope and only this one, whatever a challenge names.
    scope: 'mcp',
  });
  const client = new Client({ name: 'wharf-interop-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  try {
    const token = claims(provider.tokens().access_token);
    assert.deepEqual([token.aud, token.sub, token.scope], [mcpUrl, 'wharf-test', 'mcp']);
    const names = await toolNames(client);
    assert.ok(names.includes('echo'));
    assert.ok(!names.includes('admin_report'), 'hidden without demo:admin');
    assert.equal(text(await callTool(client, 'echo', { message: 'hello' })), 'hello');

    // On the 403 insufficient_scope the transport runs auth() once more, but the client
    // credentials request carries the provider's fixed scope again, so the retry gets the
    // same 403 and the transport gives up.
    await assert.rejects(callTool(client, 'admin_report'), (error) => {
      assert.ok(error instanceof StreamableHTTPError, String(error));
      assert.equal(error.code, 403);
      assert.match(error.message, /403 after trying upscoping/);
      return true;
    });
    assert.equal(claims(provider.tokens().access_token).scope, 'mcp');
    // The session is still usable.
    assert.equal(text(await callTool(client, 'echo', { message: 'again' })), 'again');
  } finally {
    await client.close();
  }
});

test('authorization code + PKCE with dynamic registration, then a step-up', bounded, async () => {
  requireInputs();
  // A confidential web client on a localhost redirect URI (the Python test registers a public
  // native one).
  const provider = new HeadlessAuthorization('http://localhost:47914/callback', {
    client_name: 'wharf interop (typescript)',
    redirect_uris: ['http://localhost:47914/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
  });
  const transport = () => new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  const newClient = () => new Client({ name: 'wharf-interop-oauth', version: '1.0.0' });

  // The first connection registers, sends the user agent to authorize, and stops with
  // UnauthorizedError; the application hands the code to the transport and connects again.
  const first = transport();
  await assert.rejects(newClient().connect(first), UnauthorizedError);
  assert.ok(provider.client.client_secret, 'registered as a confidential client');
  const authorization = provider.authorizations[0];
  assert.equal(authorization.get('code_challenge_method'), 'S256');
  assert.equal(authorization.get('resource'), mcpUrl);
  assert.equal(authorization.get('scope'), 'mcp');
  await first.finishAuth(provider.code);
  const token = claims(provider.tokens().access_token);
  assert.deepEqual([token.aud, token.sub, token.scope], [mcpUrl, 'ann', 'mcp']);

  const client = newClient();
  const second = transport();
  await client.connect(second);
  try {
    const names = await toolNames(client);
    assert.ok(names.includes('echo'));
    assert.ok(!names.includes('admin_report'));
    assert.equal(text(await callTool(client, 'echo', { message: 'hello' })), 'hello');

    // The 403 sends the user agent to authorize again, for exactly the scope the challenge
    // names (the SDK does not add what it had; Wharf's challenge names mcp as well), and the
    // call fails with UnauthorizedError. With the code handed over, the retry succeeds.
    await assert.rejects(callTool(client, 'admin_report'), UnauthorizedError);
    assert.equal(provider.authorizations.length, 2);
    assert.equal(provider.authorizations[1].get('scope'), 'mcp demo:admin');
    await second.finishAuth(provider.code);
    assert.equal(claims(provider.tokens().access_token).scope, 'mcp demo:admin');
    const report = await callTool(client, 'admin_report');
    assert.ok(!report.isError, text(report));
    assert.match(text(report), /\bann\b/);
    assert.equal(text(await callTool(client, 'echo', { message: 'again' })), 'again');
  } finally {
    await client.close();
  }
});
