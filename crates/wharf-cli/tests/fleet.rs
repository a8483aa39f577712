//! Two `wharf serve --http --redis` instances sharing one `redis-server` (Debian's, which
//! `scripts/test` installs; `WHARF_REDIS_SERVER` names another): a 2026-07-28 input round
//! started on one instance is finished on the other, without `WHARF_REQUEST_STATE_KEYS`
//! (issue 38).

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::Serving;

/// A `redis-server` of the test's own, on a free loopback port, stopped when dropped.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    fn start() -> RedisServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let program = std::env::var("WHARF_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(&program)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!("{program} must be installed for this test (scripts/test installs it): {err}")
            });
        let server = RedisServer { child, port };
        for _ in 0..200 {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
                let mut answer = [0u8; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read_exact(&mut answer).is_ok()
                    && &answer == b"+PONG\r\n"
                {
                    return server;
                }
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not answer on port {port}");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stateless `tools/call` of `greet_interactively` with `extra` params, to `port`: the result.
fn greet(port: u16, extra: Value) -> Value {
    let mut params = json!({"name": "greet_interactively", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\n\
         mcp-name: greet_interactively\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|err| panic!("not JSON ({err}): {raw}"))
}

#[test]
fn an_input_round_started_on_one_instance_is_finished_on_another() {
    let redis = RedisServer::start();
    let url = format!("redis://127.0.0.1:{}/", redis.port);
    let one = Serving::start("127.0.0.1:0", &["--redis", &url], "warn");
    let other = Serving::start("127.0.0.1:0", &["--redis", &url], "warn");

    let asked = greet(one.port, json!({}));
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].clone();
    let key = asked["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let answers = json!({key: {"action": "accept", "content": {"name": "Ada"}}});
    let answered = greet(other.port, json!({"requestState": state, "inputResponses": answers}));
    assert_eq!(answered["result"]["content"][0]["text"], "Hello, Ada!", "{answered}");
}

/// Without a Redis that answers at start, and without keys given, instances could not open
/// each other's `requestState`: the server refuses to start and says what to set.
#[test]
fn without_a_shared_key_the_server_refuses_to_start_and_says_what_to_set() {
    let nothing = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--http", "127.0.0.1:0", "--redis", &format!("redis://127.0.0.1:{nothing}/")])
        .env_remove("WHARF_REQUEST_STATE_KEYS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("could not be shared through Redis"), "{stderr}");
    assert!(stderr.contains("give every instance the same keys in WHARF_REQUEST_STATE_KEYS"), "{stderr}");

    // Keys given explicitly win, and need no Redis at start: it starts (its banner is read).
    let key = format!("k1={}", "ab".repeat(32));
    let given = Serving::start_with_env(
        "127.0.0.1:0",
        &["--redis", &format!("redis://127.0.0.1:{nothing}/")],
        &[("WHARF_REQUEST_STATE_KEYS", &key), ("WHARF_LOG", "warn")],
    );
    assert_ne!(given.port, 0);
}
