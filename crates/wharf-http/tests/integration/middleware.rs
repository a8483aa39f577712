//! Middleware over HTTP: layers read the HTTP request's headers, a rate limit answers 429 with
//! `Retry-After`, a panicking layer opens no session, a batch's requests pass the layers with
//! their HTTP request, layers hear how sessions end, and the audit log keeps only the start of
//! a session id.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wharf_http::{HttpOptions, HttpRequest};
use wharf_protocol::ProtocolVersion;
use wharf_server::middleware::{Audit, Quota, RateLimit};
use wharf_server::{
    Layer, LayerFuture, McpRequest, Next, RequestContext, SessionEndReason, ToolDef, Transport, layer_fn,
};
use wharf_testkit::fixture;
use wharf_testkit::layers::{Recorder, SessionEnds, recorded};

/// Over HTTP without authentication a session id is the only credential of its session: the
/// audit log keeps its first 8 characters, as the request log does, never the whole id
/// (issue 38).
#[tokio::test(flavor = "current_thread")]
async fn the_audit_log_keeps_only_the_start_of_a_session_id() {
    use crate::support::{JSON, call, send, session, start};

    let (captured, _default) = wharf_testkit::logs::capture_logs();
    let server = fixture::builder().layer(Audit::new()).build().unwrap();
    let port = start(server, HttpOptions::default()).await;
    let id = session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let answered = send(port, "POST", &headers, &call(1, "echo", json!({"message": "hi"}))).await;
    assert_eq!(answered.status, 200, "{answered:?}");
    let text = String::from_utf8(captured.text().into_bytes()).unwrap();
    let record = text.lines().find(|line| line.contains("wharf::audit") && line.contains("target=\"echo\""));
    let record = record.unwrap_or_else(|| panic!("no audit record of the call: {text}"));
    assert!(record.contains(&format!("session=\"{}\"", &id[..8])), "{record}");
    assert!(!text.contains(&id[8..]), "the rest of the session id is never logged: {text}");
}

/// A layer that takes the principal from the `x-user` header, as an authenticating layer would.
fn principal_from_header() -> impl Layer {
    layer_fn(|mut request, next| {
        let user = request
            .http_headers()
            .and_then(|headers| headers.get("x-user"))
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let Some(user) = user {
            request.set_principal(wharf_server::Principal::new(user));
        }
        next.run(request)
    })
}

/// A layer that records whether its request's HTTP headers were kept, saying it reads them or not.
struct SeesHeaders {
    reads: bool,
    seen: Arc<Mutex<Vec<bool>>>,
}

impl Layer for SeesHeaders {
    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        let kept = request.http_headers().is_some();
        self.seen.lock().unwrap().push(kept);
        next.run(request)
    }

    fn reads_transport_data(&self) -> bool {
        self.reads
    }
}

/// A POST's headers are kept for the layers only when one of them says it reads them: the
/// built-in middleware does not, so a server with a timeout alone copies no headers.
#[tokio::test]
async fn headers_are_kept_only_for_layers_that_read_them() {
    use crate::support::{JSON, call, send, session, start};

    for (readers, kept) in [(&[false][..], false), (&[false, true][..], true)] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut builder = fixture::builder().layer(wharf_server::middleware::Timeout::new(Duration::from_secs(30)));
        for &reads in readers {
            builder = builder.layer(SeesHeaders { reads, seen: seen.clone() });
        }
        let port = start(builder.build().unwrap(), HttpOptions::default()).await;
        let id = session(port).await;
        let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
        let answered = send(port, "POST", &headers, &call(1, "echo", json!({"message": "hi"}))).await;
        assert_eq!(answered.status, 200, "{answered:?}");
        let seen = seen.lock().unwrap().clone();
        assert!(!seen.is_empty() && seen.iter().all(|&saw| saw == kept), "readers {readers:?}: {seen:?}");
    }
}

/// Over HTTP: the principal from a header a layer reads, and a rate limit answered with 429
/// and `Retry-After` in both eras.
#[tokio::test]
async fn over_http_layers_read_headers_and_a_rate_limit_is_429_with_retry_after() {
    use crate::support::{JSON, call, send, session, start, stateless_body};

    let log = Arc::new(Mutex::new(Vec::new()));
    let server = fixture::builder()
        .layer(Recorder { name: "http", log: log.clone() })
        .layer(principal_from_header())
        .layer(RateLimit::new(Quota::per_minute(1)))
        .build()
        .unwrap();
    let port = start(server, HttpOptions::default()).await;

    let id = session(port).await;
    let headers =
        [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25"), ("x-user", "ann")];
    let first = send(port, "POST", &headers, &call(1, "echo", json!({"message": "one"}))).await;
    assert_eq!(first.status, 200, "{first:?}");
    let second = send(port, "POST", &headers, &call(2, "echo", json!({"message": "two"}))).await;
    assert_eq!(second.status, 429, "{second:?}");
    let retry: u64 = second.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(second.json()["error"]["code"], -32000);
    assert_eq!(second.json()["error"]["data"]["retryAfterSeconds"], retry);
    // Another user's bucket is their own.
    let other =
        [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25"), ("x-user", "bo")];
    assert_eq!(send(port, "POST", &other, &call(3, "echo", json!({"message": "three"}))).await.status, 200);

    let modern = |user: &'static str| {
        vec![
            JSON[0],
            JSON[1],
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
            ("x-user", user),
        ]
    };
    let body = stateless_body(4, "tools/call", json!({"name": "echo", "arguments": {"message": "four"}}));
    assert_eq!(send(port, "POST", &modern("cy"), &body).await.status, 200);
    let limited = send(port, "POST", &modern("cy"), &body).await;
    assert_eq!(limited.status, 429, "{limited:?}");
    assert!(limited.header("retry-after").is_some());
    assert_eq!(limited.json()["error"]["code"], -32000);

    let lines = recorded(&log);
    let seen: Vec<&String> = lines.iter().filter(|line| line.contains("before tools/call")).collect();
    assert_eq!(seen.len(), 5, "{lines:#?}");
    assert!(seen[0].ends_with("stateless=false version=2025-11-25 session=true transport=Http"), "{}", seen[0]);
    assert!(seen[3].ends_with("stateless=true version=2026-07-28 session=false transport=Http"), "{}", seen[3]);
}

/// Over HTTP, `initialize` runs through the layers too: a layer's panic there is an internal
/// error, no session is opened, and the next `initialize` works.
#[tokio::test]
async fn over_http_a_layer_that_panics_on_initialize_opens_no_session() {
    use crate::support::{JSON, send, session, start};

    let server = fixture::builder()
        .layer(layer_fn(|request, next| {
            if request.http_headers().is_some_and(|headers| headers.contains_key("x-panic")) {
                panic!("the layer broke on initialize");
            }
            next.run(request)
        }))
        .build()
        .unwrap();
    let port = start(server, HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let headers = [JSON[0], JSON[1], ("x-panic", "1")];
    let reply = send(port, "POST", &headers, &init.to_string()).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["error"]["code"], -32603);
    assert!(reply.header("mcp-session-id").is_none());
    assert_eq!(session(port).await.len(), 32);
}

/// The requests of a 2025-03-26 batch act for the batch's caller: its layers see the HTTP
/// request's headers, and the principal a layer sets from them reaches each handler.
#[tokio::test]
async fn over_http_every_request_of_a_batch_passes_the_layers_with_the_http_request() {
    use crate::support::{JSON, call, send, start};

    let server = fixture::builder()
        .tool(ToolDef::new("whoami", |context: RequestContext| async move {
            context.principal().map(|principal| principal.as_str().to_owned()).unwrap_or_default()
        }))
        .layer(principal_from_header())
        .build()
        .unwrap();
    let port = start(server, HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(port, "POST", &JSON, &init.to_string()).await;
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("x-user", "ann")];
    let batch = format!("[{},{}]", call(1, "whoami", json!({})), call(2, "whoami", json!({})));
    let reply = send(port, "POST", &headers, &batch).await;
    let answers = reply.json();
    let texts: Vec<&Value> =
        answers.as_array().unwrap().iter().map(|answer| &answer["result"]["content"][0]["text"]).collect();
    assert_eq!(texts, [&json!("ann"), &json!("ann")], "{answers}");
}

/// The headers of a request in the 2025-11-25 session `id`.
fn in_session(id: &str) -> [(&str, &str); 4] {
    let json = crate::support::JSON;
    [json[0], json[1], ("mcp-session-id", id), ("mcp-protocol-version", "2025-11-25")]
}

/// Over HTTP a session ends when the client deletes it, when it expires, when a new session
/// evicts it, and, for those still open, when the server stops; each is heard of once.
#[tokio::test]
async fn over_http_layers_hear_of_deleted_expired_evicted_and_stopped_sessions() {
    use crate::support::{call, send, session};

    let ends = SessionEnds::default();
    let server = fixture::builder().layer(ends.clone()).build().unwrap();
    // Deleted.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = HttpOptions::default().max_sessions(2).session_idle_timeout(Duration::from_millis(300));
    let serving = tokio::spawn(
        wharf_http::serve(listener, server)
            .options(options)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    let deleted = session(port).await;
    let headers = in_session(&deleted);
    assert_eq!(send(port, "DELETE", &headers, "").await.status, 204);
    assert_eq!(
        ends.take().iter().map(|end| (end.0.clone(), end.1)).collect::<Vec<_>>(),
        [(deleted.clone(), SessionEndReason::Closed)]
    );
    assert_eq!(send(port, "DELETE", &headers, "").await.status, 404);
    assert!(ends.take().is_empty(), "a session ends once");

    // Expired: found when it is next named.
    let expired = session(port).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let headers = in_session(&expired);
    let reply = send(port, "POST", &headers, &call(1, "echo", json!({"message": "late"}))).await;
    assert_eq!(reply.status, 404, "{reply:?}");
    let ended = ends.take();
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!((ended[0].0.as_str(), ended[0].1), (expired.as_str(), SessionEndReason::Expired));
    assert_eq!(ended[0].3, Transport::Http);
    assert_eq!(ended[0].2, ProtocolVersion::V2025_11_25);
    // It lasted until it expired, not until it was found.
    assert!(ended[0].4 >= Duration::from_millis(280) && ended[0].4 < Duration::from_millis(390), "{:?}", ended[0].4);

    // Evicted: two sessions fill the table; a third evicts the one idle longest.
    let first = session(port).await;
    let second = session(port).await;
    assert!(ends.take().is_empty());
    let third = session(port).await;
    let ended = ends.take();
    assert_eq!(
        ended.iter().map(|end| (end.0.as_str(), end.1)).collect::<Vec<_>>(),
        [(first.as_str(), SessionEndReason::Evicted)]
    );

    // Stopped: the sessions still open end with the server.
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    let ended = ends.take();
    assert_eq!(ended.len(), 2, "{ended:?}");
    assert!(ended.iter().all(|end| end.1 == SessionEndReason::ServerStopped), "{ended:?}");
    let mut ids: Vec<&str> = ended.iter().map(|end| end.0.as_str()).collect();
    ids.sort_unstable();
    let mut open = [second.as_str(), third.as_str()];
    open.sort_unstable();
    assert_eq!(ids, open);
}
