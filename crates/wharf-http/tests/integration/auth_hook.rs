//! The HTTP transport's authentication hook, over raw HTTP: every request (POSTed requests,
//! notifications, GET streams, DELETE) is authenticated before anything reads it; refusals are
//! 401, 400 or 403 with the bearer challenge of RFC 6750 naming the resource metadata; the
//! published documents are served to anyone with open CORS; and the principal found owns the
//! session it opens. The authenticator here knows two fixed tokens: verifying real ones is the
//! `wharf-auth` crate's part, tested against a real OpenID provider.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use serde_json::json;
use wharf_http::{AuthFuture, AuthRefusal, Authenticator, HttpOptions};
use wharf_server::{Principal, Server, ToolDef};

use crate::support::{JSON, Reply, call, send, send_to, start};

const METADATA: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

/// Accepts `Bearer ann-token` and `Bearer bo-token`.
struct FixedTokens {
    scopes: Vec<String>,
}

impl Authenticator for FixedTokens {
    fn authenticate<'a>(&'a self, request: &'a http::request::Parts) -> AuthFuture<'a> {
        Box::pin(async move {
            let Some(value) = request.headers.get(http::header::AUTHORIZATION) else {
                return Err(AuthRefusal::missing());
            };
            let value = value.to_str().map_err(|_| AuthRefusal::invalid_request("the header is not text"))?;
            let token =
                value.strip_prefix("Bearer ").ok_or_else(|| AuthRefusal::invalid_request("not a bearer token"))?;
            match token {
                "ann-token" => Ok(Principal::issued("https://issuer.test", "ann").with_scopes(["mcp", "tools:admin"])),
                "bo-token" => Ok(Principal::issued("https://issuer.test", "bo").with_scopes(["mcp"])),
                _ => Err(AuthRefusal::invalid_token("the token is not valid")),
            }
        })
    }

    fn resource_metadata_url(&self) -> Option<&str> {
        Some(METADATA)
    }

    fn challenge_scopes(&self) -> &[String] {
        &self.scopes
    }

    fn public_document(&self, path: &str) -> Option<Bytes> {
        let known = ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"];
        known.contains(&path).then(|| Bytes::from_static(br#"{"resource":"http://localhost/mcp"}"#))
    }
}

/// A server whose `admin` tool needs a scope, and whose tools count their runs.
async fn serve(runs: Arc<AtomicUsize>) -> u16 {
    let counted = |name: &str, runs: Arc<AtomicUsize>| {
        ToolDef::new(name, move || {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                "done"
            }
        })
    };
    let server = Server::builder("guarded", "1.0.0")
        .tool(counted("work", runs.clone()))
        .tool(counted("admin", runs).scopes(["tools:admin"]))
        .build()
        .unwrap();
    let options = HttpOptions::default().cors(true).authenticate(FixedTokens { scopes: vec!["mcp".to_owned()] });
    start(server, options).await
}

fn challenge(reply: &Reply) -> &str {
    reply.header("www-authenticate").unwrap_or_else(|| panic!("no challenge: {reply:?}"))
}

fn with_token<'a>(token: &'a str, headers: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut all = headers.to_vec();
    all.push(("authorization", token));
    all
}

#[tokio::test]
async fn requests_without_a_valid_token_are_refused_with_a_challenge_and_reach_no_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let port = serve(runs.clone()).await;
    let modern =
        [JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "work")];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "work", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();

    let missing = send(port, "POST", &modern, &body).await;
    assert_eq!(missing.status, 401, "{missing:?}");
    assert_eq!(challenge(&missing), format!("Bearer scope=\"mcp\", resource_metadata=\"{METADATA}\""), "no error code");
    let malformed = send(port, "POST", &with_token("Basic YW5uOnB3", &modern), &body).await;
    assert_eq!(malformed.status, 400);
    assert!(challenge(&malformed).starts_with("Bearer error=\"invalid_request\""), "{malformed:?}");
    let forged = send(port, "POST", &with_token("Bearer forged", &modern), &body).await;
    assert_eq!(forged.status, 401);
    assert!(challenge(&forged).starts_with("Bearer error=\"invalid_token\", error_description="), "{forged:?}");
    assert!(!forged.body.contains("forged"), "the token is never repeated: {}", forged.body);
    assert!(challenge(&forged).ends_with(&format!("resource_metadata=\"{METADATA}\"")));

    // Notifications, GET streams and DELETE are authenticated as well.
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(port, "POST", &JSON, notification).await.status, 401);
    assert_eq!(send(port, "GET", &[("accept", "text/event-stream"), ("mcp-session-id", "x")], "").await.status, 401);
    assert_eq!(send(port, "DELETE", &[("mcp-session-id", "x")], "").await.status, 401);
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let allowed = send(port, "POST", &with_token("Bearer bo-token", &modern), &body).await;
    assert_eq!(allowed.status, 200, "{allowed:?}");
    assert_eq!(allowed.json()["result"]["content"][0]["text"], "done");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_metadata_is_public_with_open_cors_and_a_preflight_needs_no_token() {
    let port = serve(Arc::default()).await;
    let host = format!("localhost:{port}");
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let document =
            send_to(port, "GET", path, &[("host", &host), ("origin", "https://app.elsewhere.example")], "").await;
        assert_eq!(document.status, 200, "{document:?}");
        assert_eq!(document.header("content-type"), Some("application/json"));
        assert_eq!(document.header("access-control-allow-origin"), Some("*"));
        assert_eq!(document.json()["resource"], "http://localhost/mcp");
    }
    // The Host guard still holds; other paths are still not found.
    let path = "/.well-known/oauth-protected-resource/mcp";
    assert_eq!(send_to(port, "GET", path, &[("host", "evil.example")], "").await.status, 403);
    assert_eq!(send_to(port, "GET", "/.well-known/other", &[("host", &host)], "").await.status, 404);
    let preflight = send(port, "OPTIONS", &[("origin", "http://localhost:3000")], "").await;
    assert_eq!(preflight.status, 204, "{preflight:?}");
}

#[tokio::test]
async fn a_session_belongs_to_the_token_that_opened_it_and_scopes_step_up_with_the_metadata() {
    let port = serve(Arc::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let opened = send(port, "POST", &with_token("Bearer bo-token", &JSON), &init.to_string()).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").unwrap().to_owned();
    let in_session = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(port, "POST", &with_token("Bearer bo-token", &in_session), initialized).await.status, 202);

    let hijack = send(port, "POST", &with_token("Bearer ann-token", &in_session), &call(1, "work", json!({}))).await;
    assert_eq!(hijack.status, 404, "another principal is told the session does not exist");
    let step_up = send(port, "POST", &with_token("Bearer bo-token", &in_session), &call(2, "admin", json!({}))).await;
    assert_eq!(step_up.status, 403);
    assert_eq!(
        challenge(&step_up),
        format!("Bearer error=\"insufficient_scope\", scope=\"mcp tools:admin\", resource_metadata=\"{METADATA}\"")
    );
    let own = send(port, "POST", &with_token("Bearer bo-token", &in_session), &call(3, "work", json!({}))).await;
    assert_eq!(own.status, 200);
    let delete = [("mcp-session-id", id.as_str()), ("authorization", "Bearer ann-token")];
    assert_eq!(send(port, "DELETE", &delete, "").await.status, 404);
    let delete = [("mcp-session-id", id.as_str()), ("authorization", "Bearer bo-token")];
    assert_eq!(send(port, "DELETE", &delete, "").await.status, 204);
}

/// With authentication on, `/metrics` needs what the MCP endpoint needs (issue 38): a token the
/// authenticator accepts, or, when one is set, the metrics token, which alone opens it then.
#[tokio::test]
async fn the_metrics_path_needs_a_token_when_authentication_is_on() {
    let guarded = |options: HttpOptions| {
        let server = Server::builder("guarded", "1.0.0").build().unwrap();
        let options = options
            .authenticate(FixedTokens { scopes: vec!["mcp".to_owned()] })
            .metrics_endpoint("/metrics", || "requests_total 7\n".to_owned());
        start(server, options)
    };
    let port = guarded(HttpOptions::default()).await;
    let local = format!("localhost:{port}");
    let anonymous = send_to(port, "GET", "/metrics", &[("host", &local)], "").await;
    assert_eq!(anonymous.status, 401, "{anonymous:?}");
    assert!(!anonymous.body.contains("requests_total"), "{anonymous:?}");
    assert_eq!(challenge(&anonymous), format!("Bearer scope=\"mcp\", resource_metadata=\"{METADATA}\""));
    let forged = send_to(port, "GET", "/metrics", &[("host", &local), ("authorization", "Bearer forged")], "").await;
    assert_eq!(forged.status, 401);
    let scraped = send_to(port, "GET", "/metrics", &[("host", &local), ("authorization", "Bearer bo-token")], "").await;
    assert_eq!((scraped.status, scraped.body.as_str()), (200, "requests_total 7\n"));

    let port = guarded(HttpOptions::default().metrics_token("scrape-secret")).await;
    let local = format!("localhost:{port}");
    let scraper =
        send_to(port, "GET", "/metrics", &[("host", &local), ("authorization", "Bearer scrape-secret")], "").await;
    assert_eq!((scraper.status, scraper.body.as_str()), (200, "requests_total 7\n"));
    for refused in ["Bearer bo-token", "Bearer scrape-secreT", "Basic c2NyYXBl"] {
        let reply = send_to(port, "GET", "/metrics", &[("host", &local), ("authorization", refused)], "").await;
        assert_eq!(reply.status, 401, "{refused}: {reply:?}");
        assert_eq!(challenge(&reply), "Bearer realm=\"metrics\"", "{refused}");
    }
}
