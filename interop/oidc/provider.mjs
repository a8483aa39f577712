// A real OpenID provider (oidc-provider) on a free loopback port, for Wharf's auth tests and
// a first try of `wharf serve --auth-issuer` (crates/wharf/guide/cli.md, "wharf login").
// Usage: node provider.mjs [PORT] [DIR]. Listens on 127.0.0.1:PORT (a free one by default),
// prints the issuer on stdout and writes the port to DIR/port (DIR: a new temporary directory
// by default). Two issuers share the port:
//   http://127.0.0.1:PORT              discovery at /.well-known/oauth-authorization-server
//                                      and /.well-known/openid-configuration
//   http://127.0.0.1:PORT/realms/main  Keycloak-style: discovery only at
//                                      /realms/main/.well-known/openid-configuration
// Each has its own store but the same clients, keys and resource config (paths below are
// relative to the issuer):
//   wharf-test / wharf-test-secret    client credentials (the usual principal)
//   wharf-other / wharf-other-secret  client credentials (a second principal)
//   wharf-rs / wharf-rs-secret        no grants; may introspect (RFC 7662, /token/introspection)
//                                     every opaque token (JWTs get 400 unsupported_token_type),
//                                     the other clients only their own
//   open dynamic registration (RFC 7591, /reg) for authorization code + PKCE clients, public
//   native ones with loopback redirect URIs included; a registered `scope` is dropped, so it
//   does not limit later requests (step-up). The login and consent page
//   (/interaction/UID) answers at once, without a form: account `ann`, every requested scope.
// Access tokens for any loopback resource carry scopes among mcp files:read tools:admin
// demo:admin, are bound to that resource, and are RS256 JWTs (typ at+jwt) or opaque. A token
// request with a DPoP proof (RFC 9449; oidc-provider's `dPoP` feature, on by default, named here)
// gets a token bound to the proof's key (`token_type` DPoP, `cnf.jkt`).
// Test-only controls (root issuer only, they affect both issuers):
//   /test/keys?sign=KID&publish=KID,KID  which of key-a / key-b signs, which /jwks publishes
//   /test/ttl?seconds=N                  access token lifetime
//   /test/format?value=jwt|opaque        access token format (default jwt)
//   /test/jwks-fetches                   how many times /jwks (either issuer) was fetched
//   /test/public-pem?kid=KID             a public key as PEM (for the HS256 key-confusion attack)

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Provider, errors } from 'oidc-provider';

const args = process.argv.slice(2);
const wantedPort = Number(args.find((arg) => /^\d+$/.test(arg)) || 0);
const dir = args.find((arg) => !/^\d+$/.test(arg)) || fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-oidc-'));

function rsaKey(kid) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}
const keys = { 'key-a': rsaKey('key-a'), 'key-b': rsaKey('key-b') };
const state = { sign: 'key-a', publish: ['key-a'], ttl: 300, format: 'jwt', jwksFetches: 0 };

function publicJwk(kid) {
  const { d, p, q, dp, dq, qi, ...publicPart } = keys[kid];
  return publicPart;
}

const server = http.createServer();
await new Promise((resolve) => server.listen(wantedPort, '127.0.0.1', resolve));
const port = server.address().port;
const origin = `http://127.0.0.1:${port}`;
const REALM = '/realms/main';

const isLoopback = (resource) => /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(resource);
const RESOURCE_SCOPES = 'mcp files:read tools:admin demo:admin';

const confidential = (clientId, grantTypes) => ({
  client_id: clientId,
  client_secret: `${clientId}-secret`,
  grant_types: grantTypes,
  response_types: [],
  redirect_uris: [],
});

// The configuration of one issuer mounted at `prefix` ('' for the root one).
const configuration = (prefix) => ({
  clients: [
    confidential('wharf-test', ['client_credentials']),
    confidential('wharf-other', ['client_credentials']),
    confidential('wharf-rs', []),
  ],
  jwks: { keys: Object.values(keys) },
  scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
  // A registered `scope` is not kept as a limit (oidc-provider would refuse any other scope),
  // so that clients registered for `mcp` can step up to `demo:admin` later.
  extraClientMetadata: {
    properties: ['scope'],
    validator: (ctx, key, value, metadata) => { delete metadata.scope; },
  },
  findAccount: (ctx, id) => (id === 'ann' ? { accountId: 'ann', claims: () => ({ sub: 'ann' }) } : undefined),
  // Cookies of the two issuers share a host, so their names differ.
  cookies: {
    keys: [crypto.randomBytes(32).toString('base64url')],
    names: prefix
      ? { session: '_realm_session', interaction: '_realm_interaction', resume: '_realm_interaction_resume' }
      : {},
  },
  // Relative to the host, so it must carry the mount prefix.
  interactions: { url: (ctx, interaction) => `${prefix}/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    dPoP: { enabled: true },
    registration: { enabled: true },
    introspection: {
      enabled: true,
      allowedPolicy: (ctx, client, token) => client.clientId === 'wharf-rs' || client.clientId === token.clientId,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (!isLoopback(resource)) throw new errors.InvalidTarget();
        return {
          scope: RESOURCE_SCOPES,
          accessTokenFormat: state.format,
          accessTokenTTL: state.ttl,
          ...(state.format === 'jwt' ? { jwt: { sign: { alg: 'RS256', kid: state.sign } } } : {}),
        };
      },
    },
  },
});

const root = new Provider(origin, configuration(''));
const realm = new Provider(`${origin}${REALM}`, configuration(REALM));
const handlers = new Map([[root, root.callback()], [realm, realm.callback()]]);

const answer = (res, status, type, body) => {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

// The login and consent page, headless: signs in `ann`, then grants whatever is missing.
async function interact(provider, req, res) {
  try {
    const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
    if (prompt.name === 'login') {
      return await provider.interactionFinished(req, res, { login: { accountId: 'ann' } });
    }
    if (prompt.name !== 'consent') throw new Error(`unexpected prompt ${prompt.name}`);
    const grant = (grantId && await provider.Grant.find(grantId))
      || new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    return await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } });
  } catch (error) {
    return answer(res, 400, 'text/plain', `interaction failed: ${error.message}`);
  }
}

// Requests for one issuer, `path` relative to its mount point.
function serve(provider, path, req, res) {
  if (path === '/jwks') {
    state.jwksFetches += 1;
    return answer(res, 200, 'application/json', JSON.stringify({ keys: state.publish.map(publicJwk) }));
  }
  if (path.startsWith('/interaction/')) return interact(provider, req, res);
  return handlers.get(provider)(req, res);
}

server.on('request', (req, res) => {
  const url = new URL(req.url, origin);
  if (url.pathname.startsWith(`${REALM}/`)) {
    const path = url.pathname.slice(REALM.length);
    // Keycloak publishes only the OpenID document, under the issuer's path.
    if (path === '/.well-known/oauth-authorization-server') return answer(res, 404, 'text/plain', 'not found');
    // Mounted as oidc-provider documents: it sees the path without the prefix, and derives
    // the prefix of the URLs it builds from originalUrl.
    req.originalUrl = req.url;
    req.url = req.url.slice(REALM.length);
    return serve(realm, path, req, res);
  }
  switch (url.pathname) {
    case '/test/keys':
      state.sign = url.searchParams.get('sign');
      state.publish = url.searchParams.get('publish').split(',');
      return answer(res, 200, 'text/plain', 'ok');
    case '/test/ttl':
      state.ttl = Number(url.searchParams.get('seconds'));
      return answer(res, 200, 'text/plain', 'ok');
    case '/test/format': {
      const value = url.searchParams.get('value');
      if (!['jwt', 'opaque'].includes(value)) return answer(res, 400, 'text/plain', 'value is jwt or opaque');
      state.format = value;
      return answer(res, 200, 'text/plain', 'ok');
    }
    case '/test/jwks-fetches':
      return answer(res, 200, 'text/plain', String(state.jwksFetches));
    case '/test/public-pem': {
      const pem = crypto.createPublicKey({ key: publicJwk(url.searchParams.get('kid')), format: 'jwk' })
        .export({ type: 'spki', format: 'pem' });
      return answer(res, 200, 'text/plain', pem);
    }
    default:
      return serve(root, url.pathname, req, res);
  }
});

fs.writeFileSync(`${dir}/port`, String(port));
console.log(`OpenID provider for tests (account ann, no password asked): issuer ${origin}`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
