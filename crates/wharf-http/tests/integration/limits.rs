//! What one client can make the server hold (issue 38): JSON-RPC batches and their answers (on
//! a line connection and over HTTP), connections per address and in all, idle connections, and
//! a session's standalone GET stream, which a new GET takes over from one whose client went
//! silent. Raw JSON lines and raw HTTP/1.1 bytes to loopback ports.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use wharf_http::HttpOptions;
use wharf_server::testing::InMemoryClient;
use wharf_server::{ResourceDef, Server, ServerOptions};

use crate::support::read_until;
use crate::support::{JSON, Reply, open, parse, send, session, start};
use wharf_testkit::fixture;
use wharf_testkit::fixture::wait_for;

/// A server with a text resource of `bytes` bytes at `file:///big.txt`, and the fixture's
/// tools.
fn server_with_resource(bytes: usize) -> Server {
    fixture::builder()
        .resource(ResourceDef::text("file:///big.txt", "big", "x".repeat(bytes)).mime_type("text/plain"))
        .build()
        .unwrap()
}

/// A batch of `count` requests made by `request` from each index, written one request at a
/// time: the flood measures the server's memory in this process, which a list of 80,000 JSON
/// values made all at once here would blur.
fn batch(count: usize, request: impl Fn(usize) -> Value) -> String {
    let mut text = String::from("[");
    for index in 0..count {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&request(index).to_string());
    }
    text.push(']');
    text
}

fn ping(index: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": index, "method": "ping"})
}

fn read_big(index: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": index, "method": "resources/read", "params": {"uri": "file:///big.txt"}})
}

/// A 2025-03-26 session over HTTP, the revision whose clients may send batches.
async fn batching_session(port: u16) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(port, "POST", &JSON, &init.to_string()).await;
    assert_eq!(reply.json()["result"]["protocolVersion"], "2025-03-26");
    reply.header("mcp-session-id").unwrap().to_owned()
}

/// Checks the answer to a batch of `count` requests that went past the answer limit: every
/// request answered in order, the first ones with their results, the rest with the error that
/// names the limit, and the whole within the limit but for those errors.
fn assert_answers_stop_at_the_limit(answers: &Value, count: usize, limit: usize) {
    let answers = answers.as_array().expect("an array of responses");
    assert_eq!(answers.len(), count, "every request is answered");
    for (index, answer) in answers.iter().enumerate() {
        assert_eq!(answer["id"], index, "in order");
    }
    let results = answers.iter().take_while(|answer| answer.get("result").is_some()).count();
    assert!(results > 0, "the first answers fit");
    assert!(results < count, "the rest do not");
    for refused in &answers[results..] {
        assert_eq!(refused["error"]["code"], -32603, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(&limit.to_string()) && message.contains("max_batch_answer_bytes"), "{message}");
    }
    let size = serde_json::to_vec(answers).unwrap().len();
    assert!(size <= limit + 300 * count, "the answer took {size} bytes");
}

#[tokio::test]
async fn over_http_a_batch_longer_than_the_limit_is_refused_whole() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let id = batching_session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    let reply = send(port, "POST", &headers, &batch(101, ping)).await;
    assert_eq!(reply.status, 400, "{}", &reply.body[..reply.body.len().min(300)]);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], -32600);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("101") && message.contains("100") && message.contains("max_batch_len"), "{message}");
    let reply = send(port, "POST", &headers, &batch(100, ping)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json().as_array().unwrap().len(), 100, "a batch at the limit is answered");
}

#[tokio::test]
async fn over_http_answers_past_the_batch_answer_limit_become_errors() {
    // A hundred reads of a 64 KiB file would answer more than 6 MiB.
    let port = start(server_with_resource(64 * 1024), HttpOptions::default()).await;
    let id = batching_session(port).await;
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str())];
    let reply = send(port, "POST", &headers, &batch(100, read_big)).await;
    assert_eq!(reply.status, 200);
    assert_answers_stop_at_the_limit(&reply.json(), 100, 4 * 1024 * 1024);
}

/// A 2025-03-26 session on a line connection (the stdio transport's read loop).
async fn batching_line_session(server: Server) -> InMemoryClient {
    let client = InMemoryClient::connect(server);
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    client.send_line(&init.to_string()).await;
    wait_for(&client, |message| message["id"] == "init").await;
    client.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    client
}

#[tokio::test]
async fn on_a_line_connection_a_long_batch_is_refused_and_big_answers_become_errors() {
    let server = fixture::builder()
        .resource(ResourceDef::text("file:///big.txt", "big", "x".repeat(16 * 1024)))
        .options(ServerOptions::default().max_batch_len(20).max_batch_answer_bytes(100 * 1024))
        .build()
        .unwrap();
    let client = batching_line_session(server).await;
    client.send_line(&batch(21, ping)).await;
    let refused = wait_for(&client, |message| message.get("error").is_some()).await;
    assert_eq!(refused["id"], Value::Null);
    assert_eq!(refused["error"]["code"], -32600);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("20") && message.contains("max_batch_len"), "{message}");
    assert!(!client.received().iter().any(Value::is_array), "no part of the long batch was answered");

    client.send_line(&batch(20, read_big)).await;
    let answers = wait_for(&client, Value::is_array).await;
    assert_answers_stop_at_the_limit(&answers, 20, 100 * 1024);
}

/// The process's resident memory in KiB (Linux).
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Posts `body` and reads the answer to its end within two minutes, keeping only its status,
/// its size and its first bytes.
async fn post_measured(port: u16, session: &str, body: &str) -> (u16, usize, String) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = open(port, &request).await;
    stream.write_all(body.as_bytes()).await.unwrap();
    let (mut size, mut head) = (0, Vec::new());
    let mut buffer = vec![0u8; 64 * 1024];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let read =
            tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await.expect("answered in time").unwrap();
        if read == 0 {
            break;
        }
        size += read;
        if head.len() < 400 {
            head.extend_from_slice(&buffer[..read.min(400)]);
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.split(' ').nth(1).and_then(|status| status.parse().ok()).unwrap_or(0);
    (status, size, head)
}

/// The batches of issue 38, as big as a body may be: a 4 MiB batch of `tools/list` (which
/// answered 173 MB) and batches of `resources/read` of a 16 KiB file (742 MB) and of a 1 MiB
/// file. Prints the answers' sizes and the resident memory before and after. Slow: run by `scripts/attack`
/// (`cargo test -p wharf-server --test integration limits::batch_flood -- --ignored --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a flood; scripts/attack runs it"]
async fn batch_flood_answers_within_the_limits_and_memory_stays_flat() {
    let server = fixture::builder()
        .resource(ResourceDef::text("file:///big.txt", "big", "x".repeat(16 * 1024)))
        .resource(ResourceDef::text("file:///huge.txt", "huge", "x".repeat(1024 * 1024)))
        .build()
        .unwrap();
    let port = start(server, HttpOptions::default()).await;
    let id = batching_session(port).await;
    let before = resident_kib();
    let item = json!({"jsonrpc": "2.0", "id": 100_000, "method": "tools/list"}).to_string().len() + 1;
    let count = (4 * 1024 * 1024 - 2) / item;
    let lists = batch(count, |index| json!({"jsonrpc": "2.0", "id": 100_000 + index, "method": "tools/list"}));
    let (status, size, head) = post_measured(port, &id, &lists).await;
    eprintln!("a batch of {count} tools/list ({} bytes): status {status}, answer {size} bytes", lists.len());
    assert_eq!(status, 400, "{head}");
    let reads = batch(4 * 1024 * 1024 / 100, read_big);
    let (status, size, head) = post_measured(port, &id, &reads).await;
    eprintln!("a batch of {} resources/read of 16 KiB: status {status}, answer {size} bytes", 4 * 1024 * 1024 / 100);
    assert_eq!(status, 400, "{head}");
    let reads = batch(100, read_big);
    let mut largest = 0;
    for _ in 0..50 {
        let (status, size, head) = post_measured(port, &id, &reads).await;
        assert_eq!(status, 200, "{head}");
        largest = largest.max(size);
    }
    eprintln!("50 batches of 100 resources/read of 16 KiB: each answer at most {largest} bytes");
    let huge = batch(
        100,
        |index| json!({"jsonrpc": "2.0", "id": index, "method": "resources/read", "params": {"uri": "file:///huge.txt"}}),
    );
    for _ in 0..10 {
        let (status, size, head) = post_measured(port, &id, &huge).await;
        assert_eq!(status, 200, "{head}");
        largest = largest.max(size);
    }
    eprintln!("10 batches of 100 resources/read of 1 MiB: each answer at most {largest} bytes");
    let lists = batch(100, |index| json!({"jsonrpc": "2.0", "id": index, "method": "tools/list"}));
    let (_, listed, _) = post_measured(port, &id, &lists).await;
    let after = resident_kib();
    eprintln!("100 tools/list: {listed} bytes; resident {before} KiB before, {after} KiB after");
    assert!(largest <= 4 * 1024 * 1024 + 100 * 300, "an answer of {largest} bytes");
    assert!(after.saturating_sub(before) < 64 * 1024, "resident memory grew from {before} KiB to {after} KiB");
}

/// A connection to the server on `port` from the loopback address `source`.
async fn connect_from(source: [u8; 4], port: u16) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((source, 0))).unwrap();
    socket.connect(SocketAddr::from(([127, 0, 0, 1], port))).await.unwrap()
}

/// Everything `stream` sends until it closes, within five seconds.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut raw = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw)).await;
    // A reset after the refusal is as good as a close.
    let _reset = read.unwrap_or_else(|_| panic!("still open after 5 s; sent {}", String::from_utf8_lossy(&raw)));
    String::from_utf8_lossy(&raw).into_owned()
}

/// A request for a new session from `source`, answered within five seconds.
async fn initialize_from(source: [u8; 4], port: u16) -> Reply {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{init}",
        init.len()
    );
    let mut stream = connect_from(source, port).await;
    stream.write_all(request.as_bytes()).await.unwrap();
    parse(read_to_close(&mut stream).await.as_bytes())
}

#[tokio::test]
async fn one_address_cannot_take_every_connection() {
    let options = HttpOptions::default().max_connections_per_address(8).max_connections(12);
    let port = start(fixture::server(), options).await;
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(connect_from([127, 0, 0, 1], port).await);
    }
    // Connections are accepted in order: the ninth from the same address is past its cap.
    let mut ninth = connect_from([127, 0, 0, 1], port).await;
    let refused = read_to_close(&mut ninth).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused:?}");
    assert!(refused.contains("max_connections_per_address"), "{refused}");
    // Another address is served meanwhile.
    let served = initialize_from([127, 0, 0, 2], port).await;
    assert_eq!(served.status, 200, "{served:?}");
    // Four more from other addresses reach the cap of all connections: the next one is refused.
    for _ in 0..4 {
        idle.push(connect_from([127, 0, 0, 3], port).await);
    }
    let mut over = connect_from([127, 0, 0, 4], port).await;
    let refused = read_to_close(&mut over).await;
    assert!(refused.starts_with("HTTP/1.1 503") && refused.contains("max_connections"), "{refused:?}");
    // A connection that closes gives its slot back.
    drop(idle.pop());
    let mut served = None;
    for _ in 0..100 {
        let reply = initialize_from([127, 0, 0, 4], port).await;
        if reply.status == 200 {
            served = Some(reply);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served.is_some(), "the freed slot was never given to another connection");
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_idle_timeout_but_an_open_stream_is_not() {
    let server = fixture::server();
    let options = HttpOptions::default().idle_timeout(Duration::from_millis(300));
    let port = start(server.clone(), options).await;
    // A connection that never sends anything.
    let mut silent = connect_from([127, 0, 0, 1], port).await;
    assert_eq!(read_to_close(&mut silent).await, "");
    // A kept-alive connection after its answer.
    let mut kept = connect_from([127, 0, 0, 1], port).await;
    kept.write_all(b"GET /mcp HTTP/1.1\r\nhost: localhost\r\naccept: text/event-stream\r\n\r\n").await.unwrap();
    let answered = read_to_close(&mut kept).await;
    assert!(answered.starts_with("HTTP/1.1 400"), "{answered}");
    // A GET stream quieter than the idle timeout stays open.
    let id = session(port).await;
    let (mut stream, mut seen) = open_get(port, &id, None).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(server.remove_tool("echo"));
    read_until(&mut stream, &mut seen, "notifications/tools/list_changed").await;
}

/// A head sent a few bytes at a time, as a slowloris client sends it, is cut at the timeout
/// for the whole head: bytes trickling in do not keep the connection open.
#[tokio::test]
async fn a_head_trickled_in_is_cut_at_the_header_read_timeout() {
    let options = HttpOptions::default().header_read_timeout(Duration::from_millis(300));
    let port = start(fixture::server(), options).await;
    let mut slow = connect_from([127, 0, 0, 1], port).await;
    slow.write_all(b"POST /mcp HTTP/1.1\r\nhost: localhost\r\nx-slow: ").await.unwrap();
    // Ten times the timeout, a byte every 50 ms: the server closes the connection well within.
    let mut closed = false;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut byte = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(1), slow.read(&mut byte)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(_)) | Err(_) => {}
        }
        if slow.write_all(b"a").await.is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed, "a head trickled in for 3 s was never cut");
    // The server goes on serving the others.
    assert!(!session(port).await.is_empty());
}

/// Opens the session's standalone GET stream (resuming from `last_event` if given) and
/// returns the socket once the response head and any priming event arrived.
async fn open_get(port: u16, session: &str, last_event: Option<&str>) -> (TcpStream, String) {
    let mut request =
        format!("GET /mcp HTTP/1.1\r\nhost: localhost\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n");
    if let Some(last_event) = last_event {
        request.push_str(&format!("last-event-id: {last_event}\r\n"));
    }
    request.push_str("\r\n");
    let mut stream = open(port, &request).await;
    let mut seen = String::new();
    read_until(&mut stream, &mut seen, "\r\n\r\n").await;
    (stream, seen)
}

/// The id of the last event in what a stream sent.
fn last_event_id(seen: &str) -> String {
    seen.lines().filter_map(|line| line.strip_prefix("id: ")).next_back().expect("an event id").to_owned()
}

#[tokio::test]
async fn a_new_get_takes_over_a_stream_whose_client_went_silent_and_loses_no_event() {
    let server = fixture::server();
    let port = start(server.clone(), HttpOptions::default()).await;
    let id = session(port).await;
    let (mut first, mut seen) = open_get(port, &id, None).await;
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    read_until(&mut first, &mut seen, "retry: ").await;
    read_until(&mut first, &mut seen, "\n\n").await;
    let resume_from = last_event_id(&seen);
    let stream = resume_from.split('-').next().unwrap().to_owned();
    // A change goes out on the first stream; then its client goes silent, without closing, and
    // never got that event (it was still on its way).
    assert!(server.remove_tool("echo"));
    read_until(&mut first, &mut seen, "notifications/tools/list_changed").await;
    let (mut second, mut taken_over) = open_get(port, &id, Some(&resume_from)).await;
    assert!(taken_over.starts_with("HTTP/1.1 200"), "not 409: {taken_over}");
    // The second stream is replayed what the first was sent after that point.
    read_until(&mut second, &mut taken_over, "notifications/tools/list_changed").await;
    assert!(taken_over.contains(&format!("id: {stream}-1\n")), "{taken_over}");
    // The first stream ended.
    read_until(&mut first, &mut seen, "0\r\n\r\n").await;
    // What comes next goes to the second, numbered on.
    assert!(server.remove_prompt("greeting"));
    read_until(&mut second, &mut taken_over, "notifications/prompts/list_changed").await;
    assert!(taken_over.contains(&format!("id: {stream}-2\n")), "{taken_over}");
    assert_eq!(taken_over.matches("notifications/tools/list_changed").count(), 1, "sent once: {taken_over}");
}

#[tokio::test]
async fn a_new_get_takes_over_without_last_event_id_in_a_session_without_resumption() {
    let server = fixture::server();
    let port = start(server.clone(), HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(port, "POST", &JSON, &init.to_string()).await;
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let headers = [JSON[0], JSON[1], ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let initialized = send(port, "POST", &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202);
    let (_first, seen) = open_get(port, &id, None).await;
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    let (mut second, mut taken_over) = open_get(port, &id, None).await;
    assert!(taken_over.starts_with("HTTP/1.1 200"), "not 409: {taken_over}");
    assert!(server.remove_tool("echo"));
    read_until(&mut second, &mut taken_over, "notifications/tools/list_changed").await;
}

/// The process's open file descriptors (Linux).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map(Iterator::count).unwrap_or(0)
}

/// The connection flood of issue 38 (19,990 idle sockets used up the descriptors): thousands
/// of idle sockets from one address, with the default limits. The server keeps at most its
/// per-address share of them, and a client from another address is served at once. Prints
/// the descriptors and resident memory before and after. Slow: run by `scripts/attack`
/// (`cargo test -p wharf-server --test integration limits::connection_flood -- --ignored --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a flood; scripts/attack runs it"]
async fn connection_flood_from_one_address_leaves_room_for_others() {
    let port = start(fixture::server(), HttpOptions::default()).await;
    let (fds_before, resident_before) = (open_fds(), resident_kib());
    let flood = 5000;
    let mut idle = Vec::with_capacity(flood);
    for _ in 0..flood {
        idle.push(connect_from([127, 0, 0, 1], port).await);
    }
    let started = std::time::Instant::now();
    let served = initialize_from([127, 0, 0, 2], port).await;
    let waited = started.elapsed();
    assert_eq!(served.status, 200, "{served:?}");
    assert!(waited < Duration::from_secs(5), "served after {waited:?}");
    // The server's side of the flood: every descriptor beyond the test's own sockets.
    let kept = open_fds().saturating_sub(fds_before + flood);
    eprintln!(
        "{flood} idle sockets from 127.0.0.1: the server holds {kept} of them; 127.0.0.2 served in {waited:?}; \
         resident {resident_before} KiB before, {} KiB after",
        resident_kib()
    );
    assert!(kept <= 200 + 16, "the server holds {kept} connections of the flood");
}
