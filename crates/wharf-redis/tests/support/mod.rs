//! What the tests of shared stores use: a `redis-server` of their own, and raw HTTP/1.1
//! requests with their answers, whole or as they come.

#![allow(dead_code, unreachable_pub)]

use std::net::TcpListener as StdListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A free loopback port, for a process that binds it next.
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A `redis-server` of this test's own, persisting every write so that a restart keeps them.
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("wharf-redis-test-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer { port, dir, child: None };
        server.run();
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the process and waits, a bounded time, until it answers.
    pub fn run(&mut self) {
        let program = std::env::var("WHARF_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(&program)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!("{program} must be installed for these tests (scripts/test installs it): {err}")
            });
        self.child = Some(child);
        for _ in 0..200 {
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let mut answer = [0u8; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read_exact(&mut answer).is_ok()
                    && &answer == b"+PONG\r\n"
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not answer on port {}", self.port);
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("not JSON ({err}): {self:?}"))
    }
}

/// One request of a 2025 session (none for `initialize`) on a connection of its own.
pub async fn send(port: u16, method: &str, session: Option<&str>, body: &str) -> Reply {
    match session {
        Some(session) => {
            send_with(port, method, &[("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")], body).await
        }
        None => send_with(port, method, &[], body).await,
    }
}

/// A request's bytes: `method` to `/mcp` with `headers` and `body`, on a connection that closes
/// after the answer.
fn raw_request(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nhost: localhost:{port}\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// One request with `headers` on a connection of its own, in raw bytes; the answer must come
/// within 10 s.
pub async fn send_with(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let request = raw_request(port, method, headers, body);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("an answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|status| status.parse().ok()).unwrap_or(0);
    Reply { status, head: head.to_owned(), body: body.to_owned() }
}

/// `initialize` for revision 2025-11-25.
pub async fn initialize(port: u16) -> Reply {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fleet-test", "version": "1"}}});
    send(port, "POST", None, &init.to_string()).await
}

/// A request's body.
pub fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A response of a 2025 session read as it comes: a streamed POST, or a GET stream.
pub struct Streamed {
    stream: TcpStream,
    /// Everything read so far.
    pub read: String,
}

impl Streamed {
    pub async fn post(port: u16, session: &str, body: &str) -> Streamed {
        Streamed::post_with(port, &[("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")], body).await
    }

    /// A POST with `headers`, whose answer is read as it comes.
    pub async fn post_with(port: u16, headers: &[(&str, &str)], body: &str) -> Streamed {
        let request = raw_request(port, "POST", headers, body);
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        Streamed { stream, read: String::new() }
    }

    /// The standalone GET stream of a 2025 session.
    pub async fn get(port: u16, session: &str) -> Streamed {
        Streamed::resume(port, session, None).await
    }

    /// A GET stream of a 2025 session, resuming after `last_event` when it is given.
    pub async fn resume(port: u16, session: &str, last_event: Option<&str>) -> Streamed {
        let resuming = last_event.map(|id| format!("last-event-id: {id}\r\n")).unwrap_or_default();
        let request = format!(
            "GET /mcp HTTP/1.1\r\nhost: localhost:{port}\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n\
             mcp-protocol-version: 2025-11-25\r\n{resuming}connection: close\r\n\r\n"
        );
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        Streamed { stream, read: String::new() }
    }

    /// Reads until `wanted` has come (at most 10 s), and gives all read so far.
    pub async fn until(&mut self, wanted: &str) -> &str {
        assert!(self.within(wanted, Duration::from_secs(10)).await, "no {wanted:?} in time; read {:?}", self.read);
        &self.read
    }

    /// Reads until `wanted` has come, for at most `time`; false if it did not.
    pub async fn within(&mut self, wanted: &str, time: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + time;
        while !self.read.contains(wanted) {
            let mut buffer = [0u8; 4096];
            let Ok(read) = tokio::time::timeout_at(deadline, self.stream.read(&mut buffer)).await else { return false };
            let read = read.unwrap();
            assert!(read > 0, "the stream ended before {wanted:?}: {:?}", self.read);
            self.read.push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
        true
    }

    /// Reads to the end of the response (at most 10 s).
    pub async fn end(mut self) -> String {
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.stream.read_to_end(&mut rest))
            .await
            .expect("the response ended in time")
            .unwrap();
        self.read.push_str(&String::from_utf8_lossy(&rest));
        self.read
    }
}

/// Calls `tool` (which changes the resource `uri`) in `session` through `port` until `stream`
/// carries `notifications/resources/updated` for `uri`, 50 times at most, 200 ms apart: an
/// instance hears what the others relay only once its subscription is made, a moment after
/// its first request. True once heard.
pub async fn change_until_heard(port: u16, session: &str, tool: &str, uri: &str, stream: &mut Streamed) -> bool {
    for n in 0..50 {
        let call = request(100 + n, "tools/call", json!({"name": tool, "arguments": {}}));
        assert_eq!(send(port, "POST", Some(session), &call).await.status, 200);
        if stream.within(&format!(r#""uri":"{uri}""#), Duration::from_millis(200)).await {
            return true;
        }
    }
    false
}

/// A 2025-11-25 session opened on the instance at `opener` (the client declares `capabilities`),
/// `notifications/initialized` sent through `other`; its id.
pub async fn session_across(opener: u16, other: u16, capabilities: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "fleet-test", "version": "1"}}});
    let opened = send(opener, "POST", None, &init.to_string()).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = send(other, "POST", Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{initialized:?}");
    id
}
