# The official Python SDK's OAuth clients against `wharf serve --auth-issuer` (a resource server).
"""Client credentials, and authorization code + PKCE with dynamic client registration, each in a
2025 session over Streamable HTTP, with a scope step-up for `admin_report` (scope `demo:admin`).

Needs a running interop/oidc/provider.mjs and a Wharf server using it:
  WHARF_OIDC_ISSUER=http://127.0.0.1:PPORT   (the provider's root issuer)
  WHARF_MCP_URL=http://127.0.0.1:WPORT/mcp   (`wharf serve --http ... --auth-issuer ... --auth-scope mcp`)
Everything else (metadata, endpoints, scopes) the SDK discovers from the 401 and the metadata.
Run with `python test_oauth.py` (exit status 0 when all pass).
"""

import asyncio
import base64
import json
import os
import sys
import unittest
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
import mcp
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

MCP_URL = os.environ.get("WHARF_MCP_URL", "")
ISSUER = os.environ.get("WHARF_OIDC_ISSUER", "")
# Nothing listens here: the headless browser stops at the redirect to it.
REDIRECT_URI = "http://127.0.0.1:47913/callback"
# Every test is bounded; a hang fails instead of blocking the run.
DEADLINE = 60


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class HeadlessBrowser:
    """The user agent of the authorization code flow, without a browser: plain GETs that keep
    cookies (the provider's login session), redirects followed by hand until the one to the
    callback, whose code, state and iss the SDK's callback handler then gets."""

    def __init__(self):
        self.http = httpx2.AsyncClient(timeout=10, follow_redirects=False)
        self.result = None
        self.authorizations = []

    async def open(self, url):
        self.authorizations.append(parse_qs(urlparse(url).query))
        for _ in range(10):
            if url.startswith(REDIRECT_URI):
                break
            response = await self.http.get(url)
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307) or not location:
                raise AssertionError(f"{url}: {response.status_code} {response.text[:300]}")
            url = urljoin(url, location)
        else:
            raise AssertionError("the authorization did not come back to the callback")
        query = {key: values[0] for key, values in parse_qs(urlparse(url).query).items()}
        if "error" in query:
            raise AssertionError(f"the authorization failed: {query}")
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback(self):
        return self.result


def session(auth):
    """A 2025 (initialize handshake) session over Streamable HTTP whose requests `auth` signs."""
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(15, read=30))
    return http, mcp.Client(streamable_http_client(MCP_URL, http_client=http), mode="legacy")


class OAuth(unittest.IsolatedAsyncioTestCase):
    async def test_client_credentials_then_a_step_up(self):
        storage = MemoryStorage()
        auth = ClientCredentialsOAuthProvider(
            server_url=MCP_URL,
            storage=storage,
            client_id="wharf-test",
            client_secret="wharf-test-secret",
            issuer=ISSUER,
        )
        http, client = session(auth)
        async with asyncio.timeout(DEADLINE), http, client:
            self.assertFalse(client.protocol_version.startswith("2026"))
            # The first token: the scope of the 401's challenge, for the MCP URL.
            first = claims(storage.tokens.access_token)
            self.assertEqual((first["aud"], first["sub"], first["scope"]), (MCP_URL, "wharf-test", "mcp"))
            names = [tool.name for tool in (await client.list_tools()).tools]
            self.assertIn("echo", names)
            self.assertNotIn("admin_report", names, "hidden without demo:admin")
            self.assertEqual(text(await client.call_tool("echo", {"message": "hello"})), "hello")

            # The 403 insufficient_scope makes the SDK ask for a token with the union of the
            # scopes (SEP-2350) and retry the call: the step-up succeeds.
            report = await client.call_tool("admin_report", {})
            self.assertFalse(report.is_error, text(report))
            self.assertIn("wharf-test", text(report))
            self.assertEqual(claims(storage.tokens.access_token)["scope"], "mcp demo:admin")
            self.assertEqual(text(await client.call_tool("echo", {"message": "again"})), "again")

    async def test_authorization_code_with_registration_then_a_step_up(self):
        storage = MemoryStorage()
        browser = HeadlessBrowser()
        self.addAsyncCleanup(browser.http.aclose)
        auth = OAuthClientProvider(
            server_url=MCP_URL,
            # A public native client on a loopback redirect URI (RFC 8252), PKCE only.
            client_metadata=OAuthClientMetadata(
                client_name="wharf interop (python)",
                redirect_uris=[REDIRECT_URI],
                token_endpoint_auth_method="none",
            ),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        http, client = session(auth)
        async with asyncio.timeout(DEADLINE), http, client:
            self.assertEqual(storage.client_info.token_endpoint_auth_method, "none")
            self.assertIsNone(storage.client_info.client_secret)
            first = browser.authorizations[0]
            self.assertEqual(first["code_challenge_method"], ["S256"])
            self.assertEqual(first["resource"], [MCP_URL])
            token = claims(storage.tokens.access_token)
            self.assertEqual((token["aud"], token["sub"]), (MCP_URL, "ann"))
            self.assertIn("mcp", token["scope"].split())

            names = [tool.name for tool in (await client.list_tools()).tools]
            self.assertIn("echo", names)
            self.assertNotIn("admin_report", names)
            self.assertEqual(text(await client.call_tool("echo", {"message": "hello"})), "hello")

            # The step-up runs the authorization again (the provider's session cookie signs
            # `ann` in without a login) for the union of the scopes, then retries the call.
            report = await client.call_tool("admin_report", {})
            self.assertFalse(report.is_error, text(report))
            self.assertIn("ann", text(report))
            self.assertEqual(len(browser.authorizations), 2)
            self.assertIn("demo:admin", browser.authorizations[1]["scope"][0].split())
            self.assertIn("demo:admin", claims(storage.tokens.access_token)["scope"].split())


if __name__ == "__main__":
    if not (MCP_URL and ISSUER):
        sys.exit("test_oauth.py: set WHARF_MCP_URL and WHARF_OIDC_ISSUER (see the docstring)")
    outcome = unittest.main(verbosity=2, exit=False).result
    failed = len(outcome.failures) + len(outcome.errors)
    print(f"python-sdk oauth: {outcome.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not outcome.testsRun else 0)
