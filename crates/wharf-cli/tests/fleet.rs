//! Two `wharf serve --http --redis` instances sharing one `redis-server` (Debian's, which
//! `scripts/test` installs; `WHARF_REDIS_SERVER` names another): a 2026-07-28 input round
//! started on one instance is finished on the other, without `WHARF_REQUEST_STATE_KEYS`
//! (issue 38).

mod support;

use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::Serving;
use wharf_testkit::ports::free_port;
use wharf_testkit::raw_http::stateless_call_blocking;
use wharf_testkit::redis_server::RedisServer;

/// A stateless `tools/call` of `greet_interactively` with `extra` params, to `port`: the result.
fn greet(port: u16, extra: Value) -> Value {
    stateless_call_blocking(port, "greet_interactively", extra).json()
}

#[test]
fn an_input_round_started_on_one_instance_is_finished_on_another() {
    let redis = RedisServer::start();
    let url = redis.url();
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
    let nothing = free_port();
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
