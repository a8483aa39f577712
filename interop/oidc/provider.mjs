// A real OpenID provider (oidc-provider) on a free loopback port, for wharf-auth's tests.
// Usage: node provider.mjs DIR. Writes its port to DIR/port. A confidential client
// `wharf-test` / `wharf-test-secret` gets JWT access tokens (typ at+jwt, RS256) by client
// credentials for any loopback resource. Two RSA keys exist from the start; test-only paths
// choose which one signs and which ones /jwks publishes (rotation without a restart), set the
// token lifetime, count /jwks fetches, and give the PEM of a public key (for the HS256
// key-confusion attack the tests try).

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { Provider, errors } from 'oidc-provider';

const dir = process.argv[2];

function rsaKey(kid) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}
const keys = { 'key-a': rsaKey('key-a'), 'key-b': rsaKey('key-b') };
const state = { sign: 'key-a', publish: ['key-a'], ttl: 300, jwksFetches: 0 };

function publicJwk(kid) {
  const { d, p, q, dp, dq, qi, ...publicPart } = keys[kid];
  return publicPart;
}

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;

const isLoopback = (resource) => /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(resource);

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'wharf-test',
    client_secret: 'wharf-test-secret',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
  }],
  jwks: { keys: Object.values(keys) },
  scopes: ['openid', 'mcp', 'files:read', 'tools:admin'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (!isLoopback(resource)) throw new errors.InvalidTarget();
        return {
          scope: 'mcp files:read tools:admin',
          accessTokenFormat: 'jwt',
          accessTokenTTL: state.ttl,
          jwt: { sign: { alg: 'RS256', kid: state.sign } },
        };
      },
    },
  },
});

const answer = (res, status, type, body) => {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

server.on('request', (req, res) => {
  const url = new URL(req.url, issuer);
  switch (url.pathname) {
    case '/jwks':
      state.jwksFetches += 1;
      return answer(res, 200, 'application/json', JSON.stringify({ keys: state.publish.map(publicJwk) }));
    case '/test/keys':
      state.sign = url.searchParams.get('sign');
      state.publish = url.searchParams.get('publish').split(',');
      return answer(res, 200, 'text/plain', 'ok');
    case '/test/ttl':
      state.ttl = Number(url.searchParams.get('seconds'));
      return answer(res, 200, 'text/plain', 'ok');
    case '/test/jwks-fetches':
      return answer(res, 200, 'text/plain', String(state.jwksFetches));
    case '/test/public-pem': {
      const pem = crypto.createPublicKey({ key: publicJwk(url.searchParams.get('kid')), format: 'jwk' })
        .export({ type: 'spki', format: 'pem' });
      return answer(res, 200, 'text/plain', pem);
    }
    default:
      return provider.callback()(req, res);
  }
});

fs.writeFileSync(`${dir}/port`, String(port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
