//! Streamable HTTP on the wire: raw HTTP/1.1 bytes against `wharf_http::serve`, for every status
//! code path of both eras and the limits (SSE streams, resumption, listeners, cancellation and
//! shutdown are in `http_streams.rs`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wharf_http::HttpOptions;
use wharf_protocol::ProtocolVersion;
use wharf_server::testing::InMemoryClient;

use wharf_server::ServerOptions;
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::schemas::assert_message_valid;

use crate::support::{JSON, body_of, call, open, send, send_to, session, start, stateless_body};

#[tokio::test]
async fn serving_on_port_0_logs_the_url_it_bound() {
    let (captured, _default) = wharf_testkit::logs::capture_logs();
    let port = start(fixture::server(), HttpOptions::default()).await;
    let url = format!("serving MCP over Streamable HTTP at http://127.0.0.1:{port}/mcp");
    fixture::wait_until(|| captured.text().contains(&url), "the log line with the bound port").await;
}

#[tokio::test]
async fn a_2025_session_answers_with_json_and_ends_on_delete() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let id = session(port).await;
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|byte| byte.is_ascii_hexdigit()));
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let reply = send(port, "POST", &headers, &call(1, "echo", json!({"message": "over http"}))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], "over http");
    assert_message_valid(ProtocolVersion::V2025_11_25, &reply.json(), "tools/call");
    // A tool error is a result; a panic is one internal error and the session lives on.
    let reply = send(port, "POST", &headers, &call(2, "panics", json!({}))).await;
    assert_eq!(reply.json()["error"]["code"], -32603);
    let reply = send(port, "POST", &headers, &call(3, "echo", json!({"message": "still"}))).await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "still");

    assert_eq!(send(port, "DELETE", &headers, "").await.status, 204);
    let reply = send(port, "POST", &headers, &call(4, "echo", json!({"message": "gone"}))).await;
    assert_eq!(reply.status, 404);
    assert_eq!(send(port, "DELETE", &headers, "").await.status, 404);
}

#[tokio::test]
async fn session_headers_are_checked() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let id = session(port).await;
    let body = call(1, "echo", json!({"message": "x"}));
    let reply = send(port, "POST", &JSON, &body).await;
    assert_eq!(reply.status, 400, "no session id");
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("Mcp-Session-Id"));
    let unknown = [JSON[0], JSON[1], ("mcp-session-id", "0123456789abcdef0123456789abcdef")];
    assert_eq!(send(port, "POST", &unknown, &body).await.status, 404);
    let bad_version = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "1999-01-01")];
    assert_eq!(send(port, "POST", &bad_version, &body).await.status, 400);
    // An older revision's header is accepted on a newer session, as clients send it.
    let older = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-03-26")];
    assert_eq!(send(port, "POST", &older, &body).await.status, 200);
}

#[tokio::test]
async fn hosts_origins_media_types_and_sizes_are_guarded() {
    let port = start(fixture::server(), HttpOptions::default().max_body_bytes(1024)).await;
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let evil_host = [JSON[0], JSON[1], ("host", "evil.example.com")];
    assert_eq!(send(port, "POST", &evil_host, init).await.status, 403);
    let evil_origin = [JSON[0], JSON[1], ("origin", "http://evil.example.com")];
    assert_eq!(send(port, "POST", &evil_origin, init).await.status, 403);
    assert_eq!(send(port, "GET", &[("host", "evil.example.com")], "").await.status, 403);
    let good_origin = [JSON[0], JSON[1], ("origin", "http://localhost:5173")];
    assert_eq!(send(port, "POST", &good_origin, init).await.status, 200);

    let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(2000));
    assert_eq!(send(port, "POST", &JSON, &big).await.status, 413);
    let text = [("content-type", "text/plain"), JSON[1]];
    assert_eq!(send(port, "POST", &text, init).await.status, 415);
    let only_html = [JSON[0], ("accept", "text/html")];
    assert_eq!(send(port, "POST", &only_html, init).await.status, 406);
    let reply = send(port, "POST", &JSON, "{not json").await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32700);
    let reply = send(port, "POST", &JSON, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
    assert_eq!(reply.status, 400, "a batch outside a 2025-03-26 session");
    assert_eq!(reply.json()["error"]["code"], -32600);
    assert_eq!(send(port, "PUT", &JSON, init).await.status, 405);
}

#[tokio::test]
async fn a_2025_03_26_session_may_post_batches() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(port, "POST", &JSON, &init.to_string()).await;
    assert_eq!(reply.json()["result"]["protocolVersion"], "2025-03-26");
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    // Notifications and responses only: nothing to answer.
    let reply = send(port, "POST", &headers, r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#).await;
    assert_eq!(reply.status, 202);
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":1,"progress":1}}}},{{"jsonrpc":"2.0","id":"p","method":"ping"}},{{"jsonrpc":"2.0","id":9,"method":"no/such"}}]"#,
        call(1, "echo", json!({"message": "batched"}))
    );
    let reply = send(port, "POST", &headers, &batch).await;
    assert_eq!(reply.status, 200);
    let answers = reply.json();
    let answers = answers.as_array().expect("an array of responses");
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["result"]["content"][0]["text"], "batched");
    assert_eq!(answers[1]["id"], "p");
    assert_eq!(answers[1]["result"], json!({}));
    assert_eq!(answers[2]["error"]["code"], -32601);
    for answer in answers {
        assert_message_valid(ProtocolVersion::V2025_03_26, answer, "batch");
    }
    let reply = send(port, "POST", &headers, "[]").await;
    assert_eq!(reply.status, 400, "an empty batch");
    assert_eq!(reply.json()["error"]["code"], -32600);
    // A batch in a 2025-11-25 session is refused.
    let newer = session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", newer.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let reply = send(port, "POST", &headers, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
    assert_eq!(reply.status, 400);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("2025-03-26"));
}

#[tokio::test]
async fn the_metrics_path_answers_gets_behind_the_same_guards_and_only_when_asked_for() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let local = format!("localhost:{port}");
    assert_eq!(send_to(port, "GET", "/metrics", &[("host", &local)], "").await.status, 404, "off by default");

    let options = HttpOptions::default().metrics_endpoint("/metrics", || "requests_total 7\n".to_owned());
    let port = start(fixture::server(), options).await;
    let local = format!("localhost:{port}");
    let reply = send_to(port, "GET", "/metrics", &[("host", &local)], "").await;
    assert_eq!((reply.status, reply.body.as_str()), (200, "requests_total 7\n"));
    assert_eq!(reply.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    assert_eq!(send_to(port, "POST", "/metrics", &[("host", &local)], "").await.status, 405);
    assert_eq!(send_to(port, "GET", "/metrics", &[("host", "evil.example")], "").await.status, 403);
    let head = send_to(port, "HEAD", "/metrics", &[("host", &local)], "").await;
    assert_eq!((head.status, head.body.as_str()), (200, ""));
}

#[tokio::test]
async fn modern_requests_check_their_headers_and_get_the_status_codes_of_2026() {
    // Streaming every 2025 answer must not take the status codes from 2026 errors.
    let port = start(fixture::server(), HttpOptions::default().always_stream(true)).await;
    let headers = |method: &'static str, name: Option<&'static str>| {
        let mut headers = vec![JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        headers
    };
    let echo = stateless_body(1, "tools/call", json!({"name": "echo", "arguments": {"message": "modern"}}));
    let reply = send(port, "POST", &headers("tools/call", Some("echo")), &echo).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_none(), "2026-07-28 has no sessions");
    assert_eq!(reply.json()["result"]["resultType"], "complete");
    assert_message_valid(ProtocolVersion::V2026_07_28, &reply.json(), "tools/call");
    // Session headers are ignored on modern requests.
    let mut with_session = headers("tools/call", Some("echo"));
    with_session.push(("mcp-session-id", "whatever"));
    assert_eq!(send(port, "POST", &with_session, &echo).await.status, 200);
    // The name may come base64-encoded.
    let encoded = send(port, "POST", &headers("tools/call", Some("=?base64?ZWNobw==?=")), &echo).await;
    assert_eq!(encoded.status, 200);

    for (headers, expected) in [
        (headers("tools/list", Some("echo")), "Mcp-Method"),
        (headers("tools/call", Some("greet")), "Mcp-Name"),
        (headers("tools/call", None), "Mcp-Name"),
        (vec![JSON[0], JSON[1], ("mcp-method", "tools/call"), ("mcp-name", "echo")], "MCP-Protocol-Version"),
    ] {
        let reply = send(port, "POST", &headers, &echo).await;
        assert_eq!(reply.status, 400, "{expected}: {reply:?}");
        assert_eq!(reply.json()["error"]["code"], -32020);
        assert!(reply.json()["error"]["message"].as_str().unwrap().contains(expected), "{reply:?}");
        assert_message_valid(ProtocolVersion::V2026_07_28, &reply.json(), "tools/call");
    }

    let future = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut future_headers = headers("tools/list", None);
    future_headers[2] = ("mcp-protocol-version", "2099-01-01");
    let reply = send(port, "POST", &future_headers, &future.to_string()).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32022);
    assert_eq!(reply.json()["error"]["data"]["requested"], "2099-01-01");

    let no_caps = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let reply = send(port, "POST", &headers("tools/list", None), &no_caps.to_string()).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32602);

    for removed in ["ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        // Only `_meta` in the params: the method is refused before its params are read.
        let reply = send(port, "POST", &headers(removed, None), &stateless_body(4, removed, json!({}))).await;
        assert_eq!(reply.status, 404, "{removed} is removed in 2026-07-28: {reply:?}");
        assert_eq!(reply.json()["error"]["code"], -32601);
        assert_eq!(reply.json()["id"], 4);
    }
    let reply = send(port, "POST", &headers("nope/nope", None), &stateless_body(5, "nope/nope", json!({}))).await;
    assert_eq!(reply.status, 404);
    // A tool that does not exist is an ordinary error, answered in-band.
    let missing = stateless_body(6, "tools/call", json!({"name": "nope"}));
    assert_eq!(send(port, "POST", &headers("tools/call", Some("nope")), &missing).await.status, 200);

    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(port, "POST", &headers("notifications/initialized", None), notification).await.status, 202);
    let get = [("accept", "text/event-stream"), ("mcp-protocol-version", "2026-07-28")];
    assert_eq!(send(port, "GET", &get, "").await.status, 405);
    assert_eq!(send(port, "DELETE", &[("mcp-protocol-version", "2026-07-28")], "").await.status, 405);
}

#[tokio::test]
async fn at_the_session_limit_the_idle_session_is_evicted() {
    let port = start(fixture::server(), HttpOptions::default().max_sessions(1)).await;
    let first = session(port).await;
    let second = session(port).await;
    let body = call(1, "echo", json!({"message": "x"}));
    let first_headers = [JSON[0], JSON[1], ("mcp-session-id", first.as_str())];
    assert_eq!(send(port, "POST", &first_headers, &body).await.status, 404);
    let second_headers = [JSON[0], JSON[1], ("mcp-session-id", second.as_str())];
    assert_eq!(send(port, "POST", &second_headers, &body).await.status, 200);
}

#[tokio::test]
async fn a_session_over_its_in_flight_bound_gets_429_until_one_finishes() {
    let counters = Arc::new(Counters::default());
    let server =
        fixture::builder_with(counters.clone()).options(ServerOptions::default().max_in_flight(2)).build().unwrap();
    let port = start(server, HttpOptions::default()).await;
    let id = session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let mut slow_requests = Vec::new();
    for request_id in [1, 2] {
        let body = call(request_id, "slow", json!({}));
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\naccept: application/json, \
             text/event-stream\r\nmcp-session-id: {id}\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let stream = open(port, &request).await;
        slow_requests.push(stream);
    }
    // Both handlers are running once the shared step counter moved twice per step.
    fixture::slow_has_run(&counters, 4).await;
    let reply = send(port, "POST", &headers, &call(3, "echo", json!({"message": "one too many"}))).await;
    assert_eq!(reply.status, 429, "{reply:?}");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(reply.json()["id"], 3);
    assert_eq!(reply.json()["error"]["code"], -32603);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("2 requests in flight"));

    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    assert_eq!(send(port, "POST", &headers, cancel).await.status, 202);
    let reply = send(port, "POST", &headers, &call(4, "echo", json!({"message": "room again"}))).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["result"]["content"][0]["text"], "room again");
    drop(slow_requests);
}

#[tokio::test]
async fn request_state_only_comes_back_from_the_principal_it_was_issued_to() {
    let service = wharf_http::McpService::new(fixture::server(), HttpOptions::default());
    let post = |principal: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}});
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
        http::Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "plan_trip")
            .extension(wharf_server::Principal::new(principal))
            .body(body)
            .unwrap()
    };
    let first = body_of(service.handle(post("alice", json!({"name": "plan_trip"}))).await).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].clone();
    let retry = json!({"name": "plan_trip", "requestState": state, "inputResponses": {
        "place": {"action": "accept", "content": {"place": "Porto"}}}});
    let stolen = service.handle(post("mallory", retry.clone())).await;
    assert_eq!(stolen.status(), 200, "an invalid-params error is answered in-band");
    let stolen = body_of(stolen).await;
    assert_eq!(stolen["error"]["code"], -32602);
    assert!(stolen["error"]["message"].as_str().unwrap().contains("another principal"), "{stolen}");
    let owned = body_of(service.handle(post("alice", retry)).await).await;
    assert_eq!(owned["result"]["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["idea"]);
    assert_message_valid(ProtocolVersion::V2026_07_28, &owned, "tools/call");
}

#[tokio::test]
async fn mirrored_arguments_must_match_their_mcp_param_headers() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let listed = InMemoryClient::stateless(fixture::server(), Default::default()).list_tools().await.unwrap();
    let route = listed.tools.iter().find(|tool| tool.name == "route").unwrap();
    assert_eq!(route.input_schema["properties"]["region"]["x-mcp-header"], "Region");
    assert_eq!(route.input_schema["properties"]["shard"]["x-mcp-header"], "Shard");

    let call = |arguments: Value, params: &[(&'static str, &'static str)]| {
        let body = stateless_body(1, "tools/call", json!({"name": "route", "arguments": arguments}));
        let mut headers = vec![
            JSON[0],
            JSON[1],
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "route"),
        ];
        headers.extend_from_slice(params);
        async move { send(port, "POST", &headers, &body).await }
    };
    for (arguments, params) in [
        (json!({"region": "eu-west"}), vec![("mcp-param-region", "eu-west")]),
        (json!({"region": "eu-west"}), vec![("Mcp-Param-Region", "=?base64?ZXUtd2VzdA==?=")]),
        (json!({"region": "eu", "shard": 7}), vec![("mcp-param-region", "eu"), ("mcp-param-shard", "7")]),
        // Without both ends of the wrapper a value is literal.
        (json!({"region": "=?base64?ZXU="}), vec![("mcp-param-region", "=?base64?ZXU=")]),
    ] {
        let reply = call(arguments.clone(), &params).await;
        assert_eq!(reply.status, 200, "{arguments} {params:?}: {reply:?}");
        assert!(reply.json()["result"]["content"][0]["text"].is_string(), "{reply:?}");
    }
    for (arguments, params, why) in [
        (json!({"region": "eu"}), vec![], "missing header"),
        (json!({"region": "eu"}), vec![("mcp-param-region", "us")], "other value"),
        (json!({"region": "eu"}), vec![("mcp-param-region", "=?base64?ZXU?=")], "padding"),
        (json!({"region": "eu"}), vec![("mcp-param-region", "=?base64?Z!U=?=")], "alphabet"),
        (json!({"region": "eu", "shard": 7}), vec![("mcp-param-region", "eu"), ("mcp-param-shard", "8")], "integer"),
        (json!({"region": "eu"}), vec![("mcp-param-region", "eu"), ("mcp-param-shard", "1")], "header without body"),
    ] {
        let reply = call(arguments.clone(), &params).await;
        assert_eq!(reply.status, 400, "{why}: {reply:?}");
        assert_eq!(reply.json()["error"]["code"], -32020, "{why}");
        assert_eq!(reply.json()["id"], 1);
        assert_message_valid(ProtocolVersion::V2026_07_28, &reply.json(), "tools/call");
    }
}

/// A member given twice inside `arguments` is refused with -32602 naming it, in a 2025
/// session and statelessly (issue 20). Raw bodies: a JSON map cannot hold a key twice.
#[tokio::test]
async fn arguments_that_give_a_member_twice_are_refused() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let id = session(port).await;
    let session_headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    let modern_headers =
        [JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let arguments = r#"{"message":"first","nested":[{"k":1,"k":2}],"message":"second"}"#;
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let in_session = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{arguments}}}}}"#
    );
    let stateless = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{{meta},"name":"echo","arguments":{arguments}}}}}"#
    );
    for (headers, body) in [(&session_headers[..], in_session), (&modern_headers[..], stateless)] {
        let reply = send(port, "POST", headers, &body).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        let answer = reply.json();
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        // The first duplicate the walk meets: `k`, inside `nested`, before `message` repeats.
        assert!(message.contains("`k` twice"), "{message}");
    }
}

/// Sends headers announcing a 100-byte body, then trickles it one byte every 100 ms, and
/// returns the raw response (read until the server closes the connection).
async fn trickle_body(port: u16) -> String {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: localhost:{port}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n"
    );
    let stream = open(port, &head).await;
    let (mut reader, mut writer) = stream.into_split();
    let trickling = tokio::spawn(async move {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer.write_all(b" ").await.is_err() {
                return;
            }
        }
    });
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(15), reader.read_to_end(&mut raw)).await.expect("closed in time").unwrap();
    trickling.abort();
    String::from_utf8_lossy(&raw).into_owned()
}

/// A body that does not arrive in time, or arrives slower than the least rate, is answered 408
/// and its connection closed (issue 20, defect 3): the header timeout alone let a client hold
/// a connection for ever by sending its body a byte at a time.
#[tokio::test]
async fn a_slow_body_is_answered_408_and_the_connection_closed() {
    let deadline = start(fixture::server(), HttpOptions::default().body_read_timeout(Duration::from_secs(1))).await;
    // 10 bytes a second against a least rate of 1 MB/s: cut off after the rate's grace.
    let rate = start(fixture::server(), HttpOptions::default().min_body_rate(1_000_000)).await;
    let (by_deadline, by_rate) = tokio::join!(trickle_body(deadline), trickle_body(rate));
    for raw in [by_deadline, by_rate] {
        assert!(raw.starts_with("HTTP/1.1 408"), "{raw}");
        assert!(raw.to_ascii_lowercase().contains("connection: close"), "{raw}");
        assert!(raw.contains("did not arrive in time"), "{raw}");
    }
}

/// A first 2026-07-28 request without its headers and `_meta` learns everything it lacks in
/// two answers (issue 21): one naming every header with its value, one naming both `_meta`
/// members.
#[tokio::test]
async fn a_bare_2026_request_is_told_everything_it_lacks_at_once() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let bare = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"message": "hi"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let reply = send(port, "POST", &JSON, &bare.to_string()).await;
    assert_eq!(reply.status, 400, "{reply:?}");
    let message = reply.json()["error"]["message"].as_str().unwrap().to_owned();
    for wanted in ["`MCP-Protocol-Version` header is required (here: 2026-07-28)", "(here: tools/call)", "(here: echo)"]
    {
        assert!(message.contains(wanted), "{message}");
    }
    let headers =
        [JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let no_meta = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}});
    let reply = send(port, "POST", &headers, &no_meta.to_string()).await;
    let error = &reply.json()["error"];
    assert_eq!(error["code"], -32602, "{reply:?}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("protocolVersion") && message.contains("clientCapabilities"), "{message}");
}
