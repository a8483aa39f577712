//! `wharf record --url` and `wharf replay --http` on the wire, in raw HTTP bytes: a 2025 session
//! and a 2026-07-28 stateless request recorded through the proxy in front of `wharf serve
//! --http` (credentials and session ids kept out of the cassette, each message with its
//! revision and session), served back over HTTP with the same answers (a session id of its own,
//! unknown sessions, foreign hosts, bad and oversized bodies refused with their status), and
//! verified against `wharf serve` over stdio; a proxy whose upstream does not answer says so.

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::Serving;
use wharf_testkit::ports::free_port;
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{JSON, Reply, exchange_blocking, send_blocking};
use wharf_testkit::temp_dir::TempDir;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

/// Starts `wharf ARGS` and returns it with the port of the URL its banner names.
fn start(args: &[&str]) -> (Process, u16) {
    let mut process = Process::spawn(
        Command::new(WHARF).args(args).env_remove("RUST_LOG").stdin(Stdio::null()).stdout(Stdio::null()),
    );
    let banner = process.wait_for("(Streamable HTTP)");
    let url = banner.split(" (Streamable HTTP)").next().and_then(|before| before.rsplit(' ').next()).unwrap();
    let port = url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/mcp").parse().expect(&banner);
    (process, port)
}

fn stop(process: Process) {
    process.signal("TERM");
    let (code, stderr) = process.wait_within(Duration::from_secs(10));
    assert_eq!(code, Some(0), "{stderr}");
}

fn post(port: u16, headers: &[(&str, &str)], message: &Value) -> Reply {
    let mut all = JSON.to_vec();
    all.extend_from_slice(headers);
    send_blocking(port, "POST", "/mcp", &all, &message.to_string())
}

fn initialize(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}})
}

fn echo(id: u64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": message}}})
}

fn stateless_echo(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo",
        "arguments": {"message": "stateless"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
}

const STATELESS: [(&str, &str); 3] =
    [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];

/// A 2025 session (initialize, initialized, echo) and a stateless 2026-07-28 echo at `port`;
/// the answers, and the session id.
fn session(port: u16, credentials: &[(&str, &str)]) -> (Vec<Value>, String) {
    let opened = post(port, credentials, &initialize(json!(1)));
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let in_session = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let initialized = post(port, &in_session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(initialized.status, 202, "{initialized:?}");
    let echoed = post(port, &in_session, &echo(2, "recorded"));
    let stateless = post(port, &STATELESS, &stateless_echo(3));
    let answer = |reply: &Reply| if reply.body.starts_with('{') { reply.json() } else { reply.events().pop().unwrap() };
    (vec![opened.json(), answer(&echoed), answer(&stateless)], id)
}

#[test]
fn an_http_session_is_recorded_through_the_proxy_replayed_over_http_and_verified() {
    let dir = TempDir::new("cassette-http");
    let cassette = dir.join("http.cassette");
    let cassette = cassette.to_str().unwrap();
    let upstream = Serving::start("127.0.0.1:0", &[], "warn");
    let url = format!("http://127.0.0.1:{}/mcp", upstream.port);
    let (proxy, proxy_port) = start(&["record", "-o", cassette, "--url", &url]);
    let credentials = [("authorization", "Bearer s3cret-token"), ("cookie", "id=c00kie")];
    let (recorded, upstream_session) = session(proxy_port, &credentials);
    assert_eq!(recorded[1]["result"]["content"][0]["text"], "recorded", "{recorded:#?}");
    assert_eq!(recorded[2]["result"]["content"][0]["text"], "stateless", "{recorded:#?}");
    // The proxy guards its port as wharf serve does: a page reaching it by another name is refused.
    let foreign = post(proxy_port, &[("host", "evil.example")], &echo(9, "not passed on"));
    assert_eq!(foreign.status, 403, "{foreign:?}");
    stop(proxy);

    let tape = std::fs::read_to_string(cassette).unwrap();
    for secret in ["s3cret-token", "c00kie", upstream_session.as_str(), "not passed on"] {
        assert!(!tape.contains(secret), "the cassette keeps {secret}: {tape}");
    }
    let lines: Vec<Value> = tape.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines[0]["transport"], "http");
    let described: Vec<(String, Value, Value)> = lines[1..]
        .iter()
        .map(|line| (line["from"].as_str().unwrap().to_owned(), line["era"].clone(), line["session"].clone()))
        .collect();
    let (in_2025, in_2026) = ((json!("2025-06-18"), json!("session-1")), (json!("2026-07-28"), Value::Null));
    let expected: Vec<(String, Value, Value)> = [
        ("client", &in_2025),
        ("server", &in_2025),
        ("client", &in_2025),
        ("client", &in_2025),
        ("server", &in_2025),
        ("client", &in_2026),
        ("server", &in_2026),
    ]
    .into_iter()
    .map(|(from, (era, session))| (from.to_owned(), era.clone(), session.clone()))
    .collect();
    assert_eq!(described, expected, "{tape}");
    assert_eq!(lines[1]["http"]["headers"]["authorization"], "[redacted]");
    assert_eq!(lines[2]["http"]["headers"]["mcp-session-id"], "session-1");

    // Served back over HTTP: the same answers, in a session of its own.
    let (replay, port) = start(&["replay", cassette, "--http", "127.0.0.1:0"]);
    let (replayed, replayed_session) = session(port, &[]);
    assert_eq!(replayed, recorded);
    assert_ne!(replayed_session, upstream_session);
    assert_eq!(replayed_session.len(), 32, "a random id: {replayed_session}");
    let unknown = post(port, &[("mcp-session-id", "not-a-session")], &echo(4, "recorded"));
    assert_eq!((unknown.status, unknown.json()["error"]["code"].clone()), (404, json!(-32001)));
    let unmatched = post(port, &[("mcp-session-id", &replayed_session)], &echo(5, "never sent"));
    let unmatched = unmatched.json();
    let why = unmatched["error"]["message"].as_str().unwrap();
    assert!(why.contains("tools/call echo") && why.contains("\"recorded\""), "{why}");
    assert_eq!(post(port, &[("host", "evil.example")], &echo(6, "recorded")).status, 403);
    assert_eq!(post(port, &[("origin", "http://evil.example")], &echo(6, "recorded")).status, 403);
    let garbled = send_blocking(port, "POST", "/mcp", &JSON, "{not json");
    assert_eq!((garbled.status, garbled.json()["error"]["code"].clone()), (400, json!(-32700)));
    // A body declared larger than 4 MiB is refused before it is read.
    let huge = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{{",
        5 << 20
    );
    assert_eq!(exchange_blocking(port, &huge).status, 413);
    assert_eq!(send_blocking(port, "GET", "/mcp", &[("accept", "text/event-stream")], "").status, 405);
    assert_eq!(send_blocking(port, "POST", "/elsewhere", &JSON, &echo(8, "recorded").to_string()).status, 404);
    // Still answering after all that.
    let again = post(port, &[("mcp-session-id", &replayed_session)], &echo(9, "recorded"));
    assert_eq!(again.json()["result"]["content"][0]["text"], "recorded");
    stop(replay);

    // Each recorded session verified against wharf serve over stdio.
    let verified = Command::new(WHARF).args(["verify", cassette, "--", WHARF, "serve"]).output().unwrap();
    let report = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success(), "{report}");
    assert!(report.contains("3 requests: 3 the same, 0 different"), "{report}");
}

#[test]
fn the_proxy_says_when_its_upstream_does_not_answer_and_listens_on_loopback_only() {
    let dir = TempDir::new("cassette-http-down");
    let cassette = dir.join("down.cassette");
    let cassette = cassette.to_str().unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let (proxy, port) = start(&["record", "-o", cassette, "--url", &url]);
    let refused = post(port, &[], &initialize(json!(1)));
    assert_eq!(refused.status, 502, "{refused:?}");
    assert!(refused.body.contains("did not answer"), "{refused:?}");
    stop(proxy);
    let tape = std::fs::read_to_string(cassette).unwrap();
    let last: Value = serde_json::from_str(tape.lines().last().unwrap()).unwrap();
    assert_eq!((last["from"].clone(), last["http"]["status"].clone()), (json!("server"), json!(502)), "{tape}");

    let open =
        Command::new(WHARF).args(["record", "-o", cassette, "--url", &url, "--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(open.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&open.stderr).contains("not a loopback address"));
    let ftp = Command::new(WHARF).args(["record", "-o", cassette, "--url", "ftp://example.com/"]).output().unwrap();
    assert_eq!(ftp.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&ftp.stderr).contains("not an http:// or https:// URL"));
}
