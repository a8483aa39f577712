//! Tokens made in the test against an issuer the test serves itself (its metadata and an
//! Ed25519 key set, on a loopback port): what RFC 7515 and RFC 7519 say to refuse is refused
//! with 401 before any handler runs, URLs an issuer's metadata names are held to the same
//! loopback rule as the issuer, and the scope hierarchy can be turned off (issue 38).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};
use wharf_auth::{ResourceServer, ResourceServerBuilder};
use wharf_http::HttpOptions;
use wharf_server::{Server, ToolDef};
use wharf_testkit::raw_http::{self, JSON};
use wharf_testkit::stub_http::{Answer, Stub};

fn key() -> SigningKey {
    SigningKey::from_bytes(&[9; 32])
}

/// An issuer on a loopback port: its metadata (naming `jwks_uri`, or its own key set when
/// `None`) and its key set. Its URL.
fn issuer(jwks_uri: Option<&str>) -> String {
    let stub = Stub::bind();
    let url = stub.url();
    let metadata = json!({"issuer": url, "jwks_uri": jwks_uri.map_or_else(|| format!("{url}/jwks"), str::to_owned)});
    let x = URL_SAFE_NO_PAD.encode(key().verifying_key().as_bytes());
    let keys = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "k1", "use": "sig", "alg": "EdDSA"}]});
    stub.serve(move |request| match request.path.as_str() {
        "/.well-known/oauth-authorization-server" => Answer::json(200, metadata.to_string()),
        "/jwks" => Answer::json(200, keys.to_string()),
        _ => Answer::json(404, "{}"),
    });
    url
}

/// A served endpoint behind a resource server for `issuer`, with the tools `echo` and `admin`
/// (which needs the scope `demo:admin`): its port, its resource URL, and how many times
/// `echo` ran.
async fn endpoint(issuer: &str) -> (u16, String, Arc<AtomicUsize>) {
    endpoint_with(issuer, |builder| builder).await
}

async fn endpoint_with(
    issuer: &str,
    configure: impl FnOnce(ResourceServerBuilder) -> ResourceServerBuilder,
) -> (u16, String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let server = Server::builder("forged", "1.0.0")
        .tool(ToolDef::new("echo", move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { "done" }
        }))
        .tool(ToolDef::new("admin", || async { "administered" }).scopes(["demo:admin"]))
        .build()
        .unwrap();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = configure(ResourceServer::builder(&resource).issuer(issuer)).build().unwrap();
    auth.check_issuer().await.unwrap();
    tokio::spawn(wharf_http::serve(listener, server).options(HttpOptions::default().authenticate(auth)).into_future());
    (port, resource, runs)
}

/// A JWT with `header` and `claims`, signed with the issuer's key.
fn signed(header: &Value, claims: &Value) -> String {
    let signing_input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = key().sign(signing_input.as_bytes());
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

/// The status and `WWW-Authenticate` of a stateless `tools/call` of `echo` with `token`.
async fn call(port: u16, token: &str) -> (u16, String) {
    call_tool(port, "echo", token).await
}

/// The status and `WWW-Authenticate` of a stateless `tools/call` of `tool` with `token`.
async fn call_tool(port: u16, tool: &str, token: &str) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let authorization = format!("Bearer {token}");
    let headers = [
        JSON[0],
        JSON[1],
        ("host", &format!("127.0.0.1:{port}")),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
        ("authorization", &authorization),
    ];
    let reply = raw_http::send(port, "POST", &headers, &body).await;
    (reply.status, reply.header("www-authenticate").unwrap_or_default().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_critical_headers_and_non_numeric_times_are_refused() {
    let issuer = issuer(None);
    let (port, resource, runs) = endpoint(&issuer).await;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": issuer, "sub": "ann", "aud": resource, "exp": now + 300, "iat": now - 5});
    let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"});
    assert_eq!(call(port, &signed(&header, &claims)).await.0, 200, "the issuer's own token works");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let with_header = |change: &dyn Fn(&mut Value)| {
        let mut header = header.clone();
        change(&mut header);
        signed(&header, &claims)
    };
    let with_claims = |change: &dyn Fn(&mut Value)| {
        let mut claims = claims.clone();
        change(&mut claims);
        signed(&header, &claims)
    };
    for (what, token) in [
        (
            "crit naming an extension this server does not know",
            with_header(&|header| {
                header["crit"] = json!(["x-unknown"]);
                header["x-unknown"] = json!(true);
            }),
        ),
        ("an empty crit", with_header(&|header| header["crit"] = json!([]))),
        ("nbf that is not a number", with_claims(&|claims| claims["nbf"] = json!("tomorrow"))),
        ("exp that is not a number", with_claims(&|claims| claims["exp"] = json!("never"))),
        ("iat that is not a number", with_claims(&|claims| claims["iat"] = json!({"when": 1}))),
    ] {
        let (status, challenge) = call(port, &token).await;
        assert_eq!(status, 401, "{what}");
        assert!(challenge.starts_with("Bearer error=\"invalid_token\""), "{what}: {challenge}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "no refused token reached the tool");
}

/// Metadata naming `http://localhost:1@other-host/…` sends the key fetch to other-host over
/// plain HTTP unless the host is read after the user information.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_set_url_hiding_another_host_behind_user_information_is_not_fetched() {
    let issuer = issuer(Some("http://localhost:1@unreachable.invalid/jwks"));
    let auth = ResourceServer::builder("http://127.0.0.1:1/mcp").issuer(&issuer).build().unwrap();
    let refused = auth.check_issuer().await.unwrap_err().to_string();
    assert!(refused.contains("neither https nor a loopback address"), "{refused}");
    for url in ["http://localhost:1@unreachable.invalid/", "http://127.0.0.1@unreachable.invalid"] {
        let built = ResourceServer::builder("http://127.0.0.1:1/mcp").issuer(url).build();
        assert!(built.unwrap_err().to_string().contains("neither https nor a loopback address"), "{url}");
    }
}

/// A token granting `demo` may call what needs `demo:admin` (the hierarchy the 2026-07-28
/// specification asks for), unless the resource server matches scopes exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scope_hierarchy_can_be_turned_off() {
    let issuer = issuer(None);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"});
    let token = |resource: &str, scope: &str| {
        signed(&header, &json!({"iss": issuer, "sub": "ann", "aud": resource, "exp": now + 300, "scope": scope}))
    };
    let (port, resource, _) = endpoint(&issuer).await;
    assert_eq!(call_tool(port, "admin", &token(&resource, "demo")).await.0, 200, "demo covers demo:admin");

    let (port, resource, _) = endpoint_with(&issuer, ResourceServerBuilder::exact_scopes).await;
    let (status, challenge) = call_tool(port, "admin", &token(&resource, "demo")).await;
    assert_eq!(status, 403, "matched exactly, demo is not demo:admin");
    assert!(challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"demo:admin\""), "{challenge}");
    assert_eq!(call_tool(port, "admin", &token(&resource, "demo:admin")).await.0, 200);
}
