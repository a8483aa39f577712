//! Tokens made in the test against an issuer the test serves itself (its metadata and an
//! Ed25519 key set, on a loopback port): what RFC 7515 and RFC 7519 say to refuse is refused
//! with 401 before any handler runs, URLs an issuer's metadata names are held to the same
//! loopback rule as the issuer, and the scope hierarchy can be turned off (issue 38). DPoP-bound
//! tokens (RFC 9449) need a proof by their key for each request, used once: every broken proof
//! is refused with `401` and a `DPoP` challenge naming the algorithms; a server giving nonces
//! sends a proof without its nonce back with one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer, SigningKey};
use p256::ecdsa::Signature;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wharf_auth::{DpopMode, ResourceServer, ResourceServerBuilder};
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
    let (status, challenges) = call_with(port, tool, &format!("Bearer {token}"), None).await;
    (status, challenges.into_iter().next().unwrap_or_default())
}

/// The status and every `WWW-Authenticate` of a stateless `tools/call` of `tool` with the
/// `Authorization` header `authorization` and the `DPoP` header `proof`.
async fn call_with(port: u16, tool: &str, authorization: &str, proof: Option<&str>) -> (u16, Vec<String>) {
    let reply = call_reply(port, tool, authorization, proof).await;
    let challenges = reply
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("www-authenticate"))
        .map(|(_, value)| value.clone())
        .collect();
    (reply.status, challenges)
}

/// The whole answer to [`call_with`]'s request.
async fn call_reply(port: u16, tool: &str, authorization: &str, proof: Option<&str>) -> raw_http::Reply {
    let mut headers = call_headers(tool, authorization, proof);
    let host = format!("127.0.0.1:{port}");
    headers.push(("host", &host));
    raw_http::send(port, "POST", &headers, &call_body(tool)).await
}

/// The body of a stateless `tools/call` of `tool`.
fn call_body(tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

/// Its headers, with the `Authorization` header `authorization` and the `DPoP` header `proof`.
fn call_headers<'a>(tool: &'a str, authorization: &'a str, proof: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        JSON[0],
        JSON[1],
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
        ("authorization", authorization),
    ];
    if let Some(proof) = proof {
        headers.push(("dpop", proof));
    }
    headers
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

/// A client's P-256 key for DPoP proofs.
fn proof_key(seed: u8) -> p256::ecdsa::SigningKey {
    p256::ecdsa::SigningKey::from_bytes(&[seed; 32].into()).unwrap()
}

fn public_jwk(key: &p256::ecdsa::SigningKey) -> Value {
    let point = key.verifying_key().to_encoded_point(false);
    json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
        "y": URL_SAFE_NO_PAD.encode(point.y().unwrap())})
}

/// The key's RFC 7638 thumbprint, made here from the RFC's text: the required members in
/// lexicographic order, no spaces, SHA-256, base64url.
fn thumbprint(key: &p256::ecdsa::SigningKey) -> String {
    let jwk = public_jwk(key);
    let members = format!(
        r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["x"].as_str().unwrap(),
        jwk["y"].as_str().unwrap()
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(members.as_bytes()))
}

/// A proof with `header` and `claims`, signed by `key`.
fn proof(key: &p256::ecdsa::SigningKey, header: &Value, claims: &Value) -> String {
    let input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// An access token of `issuer` for `resource`, bound to `key` when there is one.
fn access_token(issuer: &str, resource: &str, key: Option<&p256::ecdsa::SigningKey>) -> String {
    let mut claims = json!({"iss": issuer, "sub": "ann", "aud": resource, "exp": now() + 300});
    if let Some(key) = key {
        claims["cnf"] = json!({"jkt": thumbprint(key)});
    }
    signed(&json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"}), &claims)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dpop_bound_tokens_need_a_fresh_proof_by_their_key_for_this_request() {
    let issuer = issuer(None);
    let (port, resource, runs) = endpoint_with(&issuer, |builder| builder.dpop(DpopMode::Allowed)).await;
    let key = proof_key(1);
    let bound = access_token(&issuer, &resource, Some(&key));
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&key)});
    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(bound.as_bytes()));
    let claims = |jti: &str| json!({"jti": jti, "htm": "POST", "htu": resource, "iat": now(), "ath": ath});
    let as_dpop = format!("DPoP {bound}");

    let good = proof(&key, &header, &claims("first"));
    assert_eq!(call_with(port, "echo", &as_dpop, Some(&good)).await.0, 200);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Each refusal: 401, the error in the DPoP challenge with the algorithms, the Bearer
    // challenge beside it (bearer tokens are taken too) without the error.
    let refused = |what: String, (status, challenges): (u16, Vec<String>)| {
        assert_eq!(status, 401, "{what}");
        assert!(challenges[0].starts_with("DPoP error=\"invalid_dpop_proof\""), "{what}: {challenges:?}");
        assert!(challenges[0].contains("algs=\"ES256"), "{what}: {challenges:?}");
        assert!(challenges[1].starts_with("Bearer resource_metadata="), "{what}: {challenges:?}");
    };
    refused("a replayed proof".into(), call_with(port, "echo", &as_dpop, Some(&good)).await);
    refused("no proof".into(), call_with(port, "echo", &as_dpop, None).await);
    let with = |value: &Value, key: &str, member: Value| {
        let mut value = value.clone();
        if member.is_null() {
            value.as_object_mut().unwrap().remove(key);
        } else {
            value[key] = member;
        }
        value
    };
    let mut broken: Vec<(String, String)> = vec![
        ("typ JWT".into(), proof(&key, &with(&header, "typ", json!("JWT")), &claims("a"))),
        ("alg none".into(), proof(&key, &with(&header, "alg", json!("none")), &claims("b"))),
        ("alg HS256".into(), proof(&key, &with(&header, "alg", json!("HS256")), &claims("c"))),
        ("signed by another key".into(), proof(&proof_key(2), &header, &claims("d"))),
        (
            "a private key embedded".into(),
            proof(&key, &with(&header, "jwk", with(&public_jwk(&key), "d", json!("AAAA"))), &claims("e")),
        ),
        ("htm GET".into(), proof(&key, &header, &with(&claims("f"), "htm", json!("GET")))),
        (
            "htu of another server".into(),
            proof(&key, &header, &with(&claims("g"), "htu", json!("http://127.0.0.1:1/mcp"))),
        ),
        ("iat six minutes ago".into(), proof(&key, &header, &with(&claims("h"), "iat", json!(now() - 360)))),
        ("iat six minutes ahead".into(), proof(&key, &header, &with(&claims("i"), "iat", json!(now() + 360)))),
        ("ath of another token".into(), proof(&key, &header, &with(&claims("j"), "ath", json!("AAAA")))),
    ];
    for missing in ["jti", "htm", "htu", "iat", "ath"] {
        broken.push((format!("no {missing}"), proof(&key, &header, &with(&claims("k"), missing, Value::Null))));
    }
    // A proof by another key, well formed in itself: not the key the token is bound to.
    let other = proof_key(3);
    let other_header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&other)});
    broken.push(("a key other than cnf.jkt".into(), proof(&other, &other_header, &claims("l"))));
    for (what, broken) in broken {
        refused(what, call_with(port, "echo", &as_dpop, Some(&broken)).await);
    }

    // A bound token as a bearer token: refused, the error in the Bearer challenge.
    let (status, challenges) = call_with(port, "echo", &format!("Bearer {bound}"), None).await;
    assert_eq!(status, 401);
    assert!(challenges[0].starts_with("DPoP resource_metadata="), "{challenges:?}");
    assert!(challenges[1].starts_with("Bearer error=\"invalid_token\""), "{challenges:?}");
    // An unbound token: a bearer token as ever, but not with the DPoP scheme.
    let unbound = access_token(&issuer, &resource, None);
    assert_eq!(call_with(port, "echo", &format!("Bearer {unbound}"), None).await.0, 200);
    let unbound_ath = URL_SAFE_NO_PAD.encode(Sha256::digest(unbound.as_bytes()));
    let unbound_proof = proof(&key, &header, &with(&claims("m"), "ath", json!(unbound_ath)));
    let (status, challenges) = call_with(port, "echo", &format!("DPoP {unbound}"), Some(&unbound_proof)).await;
    assert_eq!(status, 401);
    assert!(challenges[0].starts_with("DPoP error=\"invalid_token\""), "{challenges:?}");
    // A fresh proof works again.
    assert_eq!(call_with(port, "echo", &as_dpop, Some(&proof(&key, &header, &claims("second")))).await.0, 200);
    assert_eq!(runs.load(Ordering::SeqCst), 3, "no refused request reached the tool");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_requiring_dpop_refuses_bearer_tokens_and_says_so_in_its_metadata() {
    let issuer = issuer(None);
    let (port, resource, runs) = endpoint_with(&issuer, |builder| builder.dpop(DpopMode::Required)).await;
    let (status, challenges) =
        call_with(port, "echo", &format!("Bearer {}", access_token(&issuer, &resource, None)), None).await;
    assert_eq!(status, 401);
    assert_eq!(challenges.len(), 1, "no Bearer challenge: {challenges:?}");
    assert!(challenges[0].starts_with("DPoP error=\"invalid_token\""), "{challenges:?}");
    let (status, challenges) = call_with(port, "echo", "Basic YW5uOnB3", None).await;
    assert_eq!(status, 401);
    assert!(challenges[0].starts_with("DPoP resource_metadata="), "{challenges:?}");
    assert!(challenges[0].contains("algs=\"ES256 ES384 RS256 RS384 RS512 PS256 EdDSA\""), "{challenges:?}");
    let metadata = raw_http::send_to(port, "GET", "/.well-known/oauth-protected-resource/mcp", &[], "").await.json();
    assert_eq!(metadata["dpop_bound_access_tokens_required"], true);
    assert_eq!(metadata["dpop_signing_alg_values_supported"][0], "ES256");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let key = proof_key(4);
    let bound = access_token(&issuer, &resource, Some(&key));
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&key)});
    let claims = json!({"jti": "only", "htm": "POST", "htu": resource, "iat": now(),
        "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(bound.as_bytes()))});
    assert_eq!(call_with(port, "echo", &format!("DPoP {bound}"), Some(&proof(&key, &header, &claims))).await.0, 200);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_giving_nonces_sends_a_proof_without_one_back_for_it() {
    let issuer = issuer(None);
    let (port, resource, runs) =
        endpoint_with(&issuer, |builder| builder.dpop(DpopMode::Required).dpop_nonces([7; 32])).await;
    let key = proof_key(5);
    let bound = access_token(&issuer, &resource, Some(&key));
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&key)});
    let claims = |jti: &str| {
        json!({"jti": jti, "htm": "POST", "htu": resource, "iat": now(),
            "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(bound.as_bytes()))})
    };
    let authorization = format!("DPoP {bound}");
    let asked = call_reply(port, "echo", &authorization, Some(&proof(&key, &header, &claims("no-nonce")))).await;
    assert_eq!(asked.status, 401);
    assert!(asked.header("www-authenticate").unwrap().starts_with("DPoP error=\"use_dpop_nonce\""), "{asked:?}");
    let nonce = asked.header("dpop-nonce").expect("a DPoP-Nonce header").to_owned();
    let mut with_nonce = claims("with-nonce");
    with_nonce["nonce"] = json!(nonce);
    assert_eq!(call_with(port, "echo", &authorization, Some(&proof(&key, &header, &with_nonce))).await.0, 200);
    let mut wrong = claims("wrong-nonce");
    wrong["nonce"] = json!("not-the-servers");
    assert_eq!(call_with(port, "echo", &authorization, Some(&proof(&key, &header, &wrong))).await.0, 401);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// One kept-alive connection to an endpoint, for requests one after another.
struct KeptAlive {
    stream: tokio::net::TcpStream,
    port: u16,
}

impl KeptAlive {
    async fn open(port: u16) -> KeptAlive {
        KeptAlive { stream: tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap(), port }
    }

    /// The status of a stateless `tools/call` of `tool` sent on this connection.
    async fn call(&mut self, tool: &str, authorization: &str, proof: Option<&str>) -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let request = raw_http::request_bytes(
            self.port,
            "POST",
            "/mcp",
            &call_headers(tool, authorization, proof),
            &call_body(tool),
        )
        .replace("connection: close\r\n", "");
        self.stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        let reply = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            loop {
                let mut chunk = [0u8; 4096];
                let read = self.stream.read(&mut chunk).await.unwrap();
                assert!(read > 0, "the connection closed: {}", String::from_utf8_lossy(&raw));
                raw.extend_from_slice(&chunk[..read]);
                let text = String::from_utf8_lossy(&raw).into_owned();
                let Some(end_of_head) = text.find("\r\n\r\n") else { continue };
                let length: usize = text[..end_of_head]
                    .lines()
                    .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                    .map_or(0, |length| length.trim().parse().unwrap());
                if raw.len() >= end_of_head + 4 + length {
                    return raw_http::parse(&raw);
                }
            }
        })
        .await
        .expect("an answer within 10 s");
        reply.status
    }
}

/// Requests on one kept-alive connection: its token's principal is given again only while the
/// token is good, another token on the connection is its own, and a DPoP proof is checked
/// every time (a replay on the same connection is refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_is_given_its_tokens_principal_again_only_while_the_token_is_good() {
    let issuer = issuer(None);
    let (port, resource, runs) =
        endpoint_with(&issuer, |builder| builder.leeway(std::time::Duration::ZERO).dpop(DpopMode::Allowed)).await;
    let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"});
    let expiry = now() + 2;
    let short = signed(&header, &json!({"iss": issuer, "sub": "ann", "aud": resource, "exp": expiry, "scope": "demo"}));
    let plain = signed(&header, &json!({"iss": issuer, "sub": "bo", "aud": resource, "exp": now() + 300}));
    let (short, plain) = (format!("Bearer {short}"), format!("Bearer {plain}"));

    let mut connection = KeptAlive::open(port).await;
    assert_eq!(connection.call("admin", &short, None).await, 200);
    assert_eq!(connection.call("admin", &short, None).await, 200, "again on the same connection");
    assert_eq!(connection.call("admin", &plain, None).await, 403, "another token, without the scope");
    assert_eq!(connection.call("admin", &short, None).await, 200);
    assert_eq!(connection.call("echo", "Bearer not-a-token", None).await, 401);
    assert_eq!(connection.call("admin", &short, None).await, 200);

    // Past the token's expiry (no leeway here): refused on the same connection.
    while now() <= expiry {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(connection.call("echo", &short, None).await, 401, "expired while the connection lived");
    assert_eq!(connection.call("echo", &plain, None).await, 200);

    // A DPoP-bound token's proof, replayed on the connection it was first sent on: refused.
    let key = proof_key(4);
    let bound = access_token(&issuer, &resource, Some(&key));
    let proof_header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&key)});
    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(bound.as_bytes()));
    let claims = json!({"jti": "kept", "htm": "POST", "htu": resource, "iat": now(), "ath": ath});
    let good = proof(&key, &proof_header, &claims);
    let as_dpop = format!("DPoP {bound}");
    assert_eq!(connection.call("echo", &as_dpop, Some(&good)).await, 200);
    assert_eq!(connection.call("echo", &as_dpop, Some(&good)).await, 401, "a replayed proof");
    assert_eq!(connection.call("echo", &as_dpop, None).await, 401, "no proof");
    assert_eq!(runs.load(Ordering::SeqCst), 2, "the echo calls let in: bo's and the first DPoP one");
}
