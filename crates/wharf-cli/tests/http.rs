//! Wire tests of `wharf serve --http`: raw HTTP/1.1 bytes against the real binary on a loopback
//! port, what it writes on stderr, and how it stops.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::Duration;

mod support;
use support::Serving;

/// A POST of `body` with `headers` (and `Host: 127.0.0.1:PORT` unless they name a host).
fn post_request(port: u16, headers: &str, body: &str) -> String {
    let host = if headers.starts_with("Host:") { String::new() } else { format!("Host: 127.0.0.1:{port}\r\n") };
    format!(
        "POST /mcp HTTP/1.1\r\n{host}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Posts with `Connection: close` and returns the whole response.
fn post(port: u16, headers: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(post_request(port, headers, body).as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}"#;

/// Opens a 2025-11-25 session and returns its id.
fn session(port: u16) -> String {
    let response = post(port, "", INITIALIZE);
    let id = response
        .lines()
        .find_map(|line| line.split_once(':').filter(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id")))
        .map(|(_, value)| value.trim().to_owned());
    let id = id.unwrap_or_else(|| panic!("no session id in {response}"));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let response = post(port, &session_headers(&id), initialized);
    assert!(response.starts_with("HTTP/1.1 202"), "{response}");
    id
}

fn session_headers(id: &str) -> String {
    format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
}

/// At debug level every HTTP request is logged with its method, status and duration, and a
/// session by the first characters of its id only.
#[test]
fn at_debug_level_every_http_request_is_logged_without_the_whole_session_id() {
    let serving = Serving::start("127.0.0.1:0", &[], "debug");
    let port = serving.port;
    let session = session(port);
    let answered = post(port, &session_headers(&session), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    serving.signal("TERM");
    let (code, stderr) = serving.wait();
    assert_eq!(code, Some(0), "{stderr}");
    let logged: Vec<&str> = stderr.lines().filter(|line| line.contains("HTTP request")).collect();
    assert_eq!(logged.len(), 3, "{stderr}");
    assert!(logged.iter().all(|line| line.contains("http_method=POST")), "{stderr}");
    assert!(logged[2].contains("status=200") && logged[2].contains(&format!("session=\"{}\"", &session[..8])));
    assert!(!stderr.contains(&session), "the whole session id is never logged: {stderr}");
    assert!(stderr.contains("request answered") && stderr.contains("method=\"ping\""), "{stderr}");
}

/// SIGTERM with a tool call in flight on its SSE stream: the call is answered, the stream ends
/// cleanly, new connections are refused, and the process exits 0.
#[test]
fn sigterm_answers_the_request_in_flight_then_exits_0() {
    let mut serving = Serving::start("localhost:0", &[], "info");
    let port = serving.port;
    let session = session(port);
    let countdown = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"countdown","arguments":{"steps":20},"_meta":{"progressToken":"c"}}}"#;
    let mut call = TcpStream::connect(("127.0.0.1", port)).unwrap();
    call.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    call.write_all(post_request(port, &session_headers(&session), countdown).as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
        let read = call.read(&mut buffer).unwrap();
        assert!(read > 0, "the stream ended early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..read]);
    }
    serving.signal("TERM");
    serving.wait_for("shutting down");
    call.read_to_end(&mut seen).unwrap();
    let stream = String::from_utf8_lossy(&seen);
    assert!(stream.contains(r#""id":9,"result""#) && stream.contains("Counted down 20 steps"), "{stream}");
    assert!(stream.ends_with("0\r\n\r\n"), "the stream ends with its last chunk: {stream}");
    let (code, stderr) = serving.wait();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("wharf serve: stopped"), "{stderr}");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// Host names are accepted as addresses; a port in use is one error naming the address, with
/// no banner; `--allowed-host` adds a name the server answers to.
#[test]
fn addresses_are_named_in_errors_and_allowed_hosts_are_answered() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_wharf")).args(["serve", "--http", &address]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one error: {stderr}");
    assert!(stderr.contains(&format!("cannot listen on {address}")), "{stderr}");
    assert!(!stderr.contains("Streamable HTTP"), "no banner before listening: {stderr}");

    // A name clients use is allowed; the warning for a public address without one is
    // checked in main.rs, since tests listen on loopback only.
    let named = Serving::start("localhost:0", &["--allowed-host", "wharf.example"], "warn");
    let answered = post(named.port, "Host: wharf.example\r\n", INITIALIZE);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    named.signal("INT");
    let (code, stderr) = named.wait();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
