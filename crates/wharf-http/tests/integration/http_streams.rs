//! Streamable HTTP streams on the wire: SSE responses, resumption, the standalone stream,
//! listeners, cancellation and graceful shutdown, as raw HTTP/1.1 bytes (helpers in `http.rs`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use wharf_http::HttpOptions;
use wharf_protocol::ProtocolVersion;
use wharf_server::Server;

use crate::support::{JSON, call, open, parse, read_until, send, session, start, stateless_body};
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::schemas::assert_message_valid;

#[tokio::test]
async fn a_handler_that_streams_gets_an_sse_response_with_a_priming_event() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let id = session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "progress", "_meta": {"progressToken": "tok"}}});
    let reply = send(port, "POST", &headers, &body.to_string()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.header("x-accel-buffering"), Some("no"));
    assert!(reply.body.starts_with("id: 1-0\nretry: 500\ndata: \n\n"), "{}", reply.body);
    let events = reply.events();
    let progress: Vec<f64> = events.iter().filter_map(|event| event["params"]["progress"].as_f64()).collect();
    assert_eq!(progress, vec![0.0, 50.0, 100.0]);
    let last = events.last().unwrap();
    assert_eq!(last["id"], 7, "the response ends the stream");
    for event in &events {
        assert_message_valid(ProtocolVersion::V2025_11_25, event, "tools/call");
    }
}

#[tokio::test]
async fn a_closed_stream_is_resumed_with_last_event_id() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let id = session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    let reply = send(port, "POST", &headers, &call(9, "reconnects", json!({}))).await;
    assert_eq!(reply.status, 200);
    let events = reply.events();
    assert_eq!(events.len(), 1, "only the first log arrives before the close: {}", reply.body);
    assert!(!events.iter().any(|event| event.get("id").is_some()), "no response on the closed stream");
    // Resuming at once: the events stored so far are replayed, the rest follow as they come.
    let resume = [("accept", "text/event-stream"), ("mcp-session-id", id.as_str()), ("last-event-id", "1-1")];
    let resumed = send(port, "GET", &resume, "").await;
    assert_eq!(resumed.status, 200);
    let events = resumed.events();
    assert_eq!(events.len(), 2, "{}", resumed.body);
    assert_eq!(events[0]["params"]["data"], "after the stream closed");
    assert_eq!(events[1]["result"]["content"][0]["text"], "finished after the stream closed");
    assert!(resumed.body.contains("id: 1-3\n"));
}

#[tokio::test]
async fn the_standalone_stream_carries_list_changes() {
    let server = fixture::server();
    let port = start(server.clone(), HttpOptions::default()).await;
    let id = session(port).await;
    let request =
        format!("GET /mcp HTTP/1.1\r\nhost: localhost\r\naccept: text/event-stream\r\nmcp-session-id: {id}\r\n\r\n");
    let mut stream = open(port, &request).await;
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    while !seen.contains("\r\n\r\n") {
        let read = stream.read(&mut buffer).await.unwrap();
        seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
    }
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    // One at a time: a second GET takes it over (`limits.rs`).
    assert!(server.remove_tool("echo"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !seen.contains("notifications/tools/list_changed") {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await.unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
    }
    let get_without_session = send(port, "GET", &[("accept", "text/event-stream")], "").await;
    assert_eq!(get_without_session.status, 400);
}

/// A GET is answered only with a stream: an `Accept` that does not name it (or is missing,
/// which a POST may omit) is refused with 406; one that names it among others, with
/// parameters, or as `*/*`, opens it.
#[tokio::test]
async fn a_get_needs_an_accept_that_allows_its_stream() {
    let port = start(fixture::builder().build().unwrap(), HttpOptions::default()).await;
    let id = session(port).await;
    let session_header = ("mcp-session-id", id.as_str());
    assert_eq!(send(port, "GET", &[session_header], "").await.status, 406, "no Accept");
    assert_eq!(send(port, "GET", &[session_header, ("accept", "application/json")], "").await.status, 406);
    for accept in ["text/event-stream", "application/json, TEXT/EVENT-STREAM;q=0.5", "*/*"] {
        let request =
            format!("GET /mcp HTTP/1.1\r\nhost: localhost\r\naccept: {accept}\r\nmcp-session-id: {id}\r\n\r\n");
        let mut stream = open(port, &request).await;
        let mut seen = String::new();
        read_until(&mut stream, &mut seen, "\r\n\r\n").await;
        assert!(seen.starts_with("HTTP/1.1 200"), "{accept}: {seen}");
        assert!(seen.to_ascii_lowercase().contains("content-type: text/event-stream"), "{accept}: {seen}");
    }
}

#[tokio::test]
async fn closing_a_stateless_response_cancels_the_handler() {
    let counters = Arc::new(Counters::default());
    let port = start(fixture::builder_with(counters.clone()).build().unwrap(), HttpOptions::default()).await;
    let body = stateless_body(1, "tools/call", json!({"name": "slow"}));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\naccept: application/json, \
         text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: slow\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let stream = open(port, &request).await;
    fixture::slow_has_run(&counters, 3).await;
    drop(stream);
    // The handler's work is dropped, so it can take no further step.
    fixture::slow_was_stopped(&counters).await;
}

/// Opens a 2026-07-28 `subscriptions/listen` stream with raw bytes and returns the socket,
/// after reading the response head.
async fn open_listener(port: u16, id: &str, filter: Value) -> (TcpStream, String) {
    let mut params = json!({"notifications": filter});
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\naccept: application/json, \
         text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: subscriptions/listen\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = open(port, &request).await;
    let mut seen = String::new();
    read_until(&mut stream, &mut seen, "\r\n\r\n").await;
    (stream, seen)
}

#[tokio::test]
async fn listeners_get_an_sse_stream_with_keep_alives_and_a_slow_one_holds_up_nobody() {
    let server = fixture::server();
    let options = HttpOptions::default().keep_alive(Duration::from_millis(50)).stream_buffer(4);
    let port = start(server.clone(), options).await;
    // A listener whose client never reads what it is sent.
    let (_stalled, _) = open_listener(port, "stalled", json!({"toolsListChanged": true})).await;
    let (mut stream, mut seen) = open_listener(port, "live", json!({"toolsListChanged": true})).await;
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(seen.to_ascii_lowercase().contains("content-type: text/event-stream"), "{seen}");
    read_until(&mut stream, &mut seen, "notifications/subscriptions/acknowledged").await;
    read_until(&mut stream, &mut seen, "\n:").await;

    // Many changes: the stalled listener's buffer fills, and the live one still hears them.
    for round in 0..2000 {
        if round % 2 == 0 {
            server.remove_tool("echo");
        } else {
            server.add_tool(wharf_server::ToolDef::new("echo", || async { "back" }).description("Echo")).unwrap();
        }
    }
    read_until(&mut stream, &mut seen, "notifications/tools/list_changed").await;
    let stateless = [JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    let listed = send(port, "POST", &stateless, &stateless_body(9, "tools/list", json!({}))).await;
    assert_eq!(listed.status, 200, "other requests are answered meanwhile: {listed:?}");
    let event = seen
        .split("\n\n")
        .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| serde_json::from_str::<Value>(data).unwrap())
        .find(|message| message["method"] == "notifications/tools/list_changed")
        .unwrap();
    assert_eq!(event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "live");
    assert_message_valid(ProtocolVersion::V2026_07_28, &event, "subscriptions/listen");

    server.end_subscriptions();
    read_until(&mut stream, &mut seen, "\"resultType\":\"complete\"").await;
}

/// Posts `body` on a connection of its own and returns it once the response so far contains
/// `until`, with what was read.
async fn post_until(port: u16, headers: &[(&str, &str)], body: &str, until: &str) -> (TcpStream, Vec<u8>) {
    let mut request = format!("POST /mcp HTTP/1.1\r\nconnection: close\r\nhost: localhost:{port}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    let mut stream = open(port, &request).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut raw = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&raw).contains(until) {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await.expect("in time").unwrap();
        assert!(read > 0, "the response ended before {until:?}: {}", String::from_utf8_lossy(&raw));
        raw.extend_from_slice(&buffer[..read]);
    }
    (stream, raw)
}

/// A cancelled 2025 request is not answered (issue 20): a request whose stream already carries
/// an elicitation ends that stream without a response, and one cancelled before it sent
/// anything gets an event stream with nothing in it; neither is reported as a panic.
#[tokio::test]
async fn a_cancelled_session_request_gets_no_answer() {
    let counters = Arc::new(Counters::default());
    let port = start(fixture::builder_with(counters.clone()).build().unwrap(), HttpOptions::default()).await;
    let id = session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    let cancel = |request: &str| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request}}).to_string()
    };
    let asks = json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "ask_name"}});
    let (mut stream, mut raw) = post_until(port, &headers, &asks.to_string(), "elicitation/create").await;
    assert_eq!(send(port, "POST", &headers, &cancel("c1")).await.status, 202);
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw)).await.unwrap().unwrap();
    let reply = parse(&raw);
    let events = reply.events();
    assert_eq!(events.len(), 1, "only the elicitation: {}", reply.body);
    assert_eq!(events[0]["method"], "elicitation/create");

    let slow = json!({"jsonrpc": "2.0", "id": "c2", "method": "tools/call", "params": {"name": "slow"}});
    let (mut stream, mut raw) = post_until(port, &headers, &slow.to_string(), "").await;
    fixture::slow_has_run(&counters, 1).await;
    assert_eq!(send(port, "POST", &headers, &cancel("c2")).await.status, 202);
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw)).await.unwrap().unwrap();
    let reply = parse(&raw);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("content-type"), Some("text/event-stream"), "{reply:?}");
    assert!(reply.events().is_empty(), "{}", reply.body);
    fixture::slow_was_stopped(&counters).await;
}

/// A graceful shutdown (issue 21): once the shutdown future completes, the request in flight
/// is answered on its SSE stream, the standalone stream and a listener end cleanly (the
/// listener with its result), no new connection is accepted, and the served future completes.
#[tokio::test]
async fn a_graceful_shutdown_answers_what_is_in_flight_and_ends_every_stream() {
    use wharf_http::serve;
    use wharf_server::{RequestContext, ToolDef};
    let server = Server::builder("shutdown", "1.0.0")
        .tool(ToolDef::new("paced", |context: RequestContext| async move {
            context.progress(1.0, Some(2.0), Some("started")).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            "finished"
        }))
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        serve(listener, server)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .into_future(),
    );

    let id = session(port).await;
    let session_headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let standalone =
        format!("GET /mcp HTTP/1.1\r\nhost: localhost\r\naccept: text/event-stream\r\nmcp-session-id: {id}\r\n\r\n");
    let mut get = open(port, &standalone).await;
    let mut get_seen = String::new();
    read_until(&mut get, &mut get_seen, "\r\n\r\n").await;
    let (mut listen, mut listen_seen) = open_listener(port, "listen-1", json!({"toolsListChanged": true})).await;
    read_until(&mut listen, &mut listen_seen, "notifications/subscriptions/acknowledged").await;
    let paced = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "paced", "_meta": {"progressToken": "p"}}})
    .to_string();
    let (mut call, mut call_raw) = post_until(port, &session_headers, &paced, "started").await;

    stop.send(()).unwrap();
    let finished = tokio::time::timeout(Duration::from_secs(5), async {
        call.read_to_end(&mut call_raw).await.unwrap();
        let mut rest = Vec::new();
        get.read_to_end(&mut rest).await.unwrap();
        get_seen.push_str(&String::from_utf8_lossy(&rest));
        rest.clear();
        listen.read_to_end(&mut rest).await.unwrap();
        listen_seen.push_str(&String::from_utf8_lossy(&rest));
    })
    .await;
    assert!(finished.is_ok(), "every stream ends: call {call_raw:?}, GET {get_seen}, listen {listen_seen}");
    let call = parse(&call_raw);
    let answer = call.events().into_iter().find(|event| event["id"] == 7).expect("the call is answered");
    assert_eq!(answer["result"]["content"][0]["text"], "finished");
    // Each stream ends with the last chunk, not a cut connection.
    assert!(get_seen.ends_with("0\r\n\r\n"), "{get_seen}");
    assert!(listen_seen.ends_with("0\r\n\r\n"), "{listen_seen}");
    let listen = parse(listen_seen.as_bytes());
    assert!(
        listen.events().iter().any(|event| event["id"] == "listen-1" && event.get("result").is_some()),
        "{listen:?}"
    );
    let served = tokio::time::timeout(Duration::from_secs(5), serving).await.expect("the served future completes");
    assert!(served.unwrap().is_ok());
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err(), "no connection is accepted after");
}
