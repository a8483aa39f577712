//! Wire tests of `wharf serve --http`: raw HTTP/1.1 bytes against the real binary on a loopback
//! port, and what it writes on stderr.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts `wharf serve --http` on a free loopback port with `WHARF_LOG` set to `log`, and waits
/// (at most ten seconds) until it accepts connections.
fn start(log: &str) -> (Child, u16) {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .env_remove("RUST_LOG")
        .env("WHARF_LOG", log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "wharf serve --http did not start listening on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, port)
}

/// Sends one request with `Connection: close` and returns the whole response.
fn exchange(port: u16, request: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

fn post(port: u16, headers: &str, body: &str) -> String {
    exchange(
        port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Stops the server and returns what it wrote on stderr.
fn stop(mut child: Child) -> String {
    child.kill().unwrap();
    let _ = child.wait();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    stderr
}

/// At debug level every HTTP request is logged with its method, status and duration, and a
/// session by the first characters of its id only.
#[test]
fn at_debug_level_every_http_request_is_logged_without_the_whole_session_id() {
    let (child, port) = start("debug");
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}"#;
    let response = post(port, "", initialize);
    let session = response
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: ").or_else(|| line.strip_prefix("Mcp-Session-Id: ")))
        .unwrap_or_else(|| panic!("no session id in {response}"))
        .trim()
        .to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let answered = post(port, &format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"), ping);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    let stderr = stop(child);
    let logged: Vec<&str> = stderr.lines().filter(|line| line.contains("HTTP request")).collect();
    assert_eq!(logged.len(), 2, "{stderr}");
    assert!(logged.iter().all(|line| line.contains("http_method=POST") && line.contains("status=200")), "{stderr}");
    assert!(logged[1].contains(&format!("session=\"{}\"", &session[..8])), "{stderr}");
    assert!(!stderr.contains(&session), "the whole session id is never logged: {stderr}");
    assert!(stderr.contains("request answered") && stderr.contains("method=\"ping\""), "{stderr}");
}
