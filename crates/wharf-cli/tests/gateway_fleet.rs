//! Two `wharf gateway --http --redis` replicas behind round-robin nginx, sharing one
//! `redis-server`, in front of `wharf serve` spoken to in 2025-11-25: a 2026-07-28 client's
//! call whose upstream asks for input is parked on one replica, and its retry, which nginx
//! sends to the other, is carried to the holder and answered (issue 40). Needs `redis-server`
//! and `nginx`: `scripts/test` installs them and runs this with `--ignored`. And when the
//! replica a retry reached dies, the holder drops the request it ran for it, cancelling it
//! upstream.

use std::process::{Command, Stdio};

use serde_json::{Value, json};
use wharf_testkit::nginx::{Nginx, upstream};
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{Reply, stateless_call_blocking};
use wharf_testkit::redis_server::RedisServer;
use wharf_testkit::temp_dir::TempDir;

/// Starts a replica: `wharf gateway DIR/gateway.toml --http 127.0.0.1:0 --redis URL`; its port.
fn replica(dir: &TempDir, redis_url: &str) -> (Process, u16) {
    let mut gateway = Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_wharf"))
            .arg("gateway")
            .arg(dir.join("gateway.toml"))
            .args(["--http", "127.0.0.1:0", "--redis", redis_url, "--redis-prefix", "gateway-fleet"])
            .env("WHARF_LOG", "warn")
            .env_remove("WHARF_REQUEST_STATE_KEYS")
            .stdin(Stdio::null()),
    );
    let banner = gateway.wait_for("wharf gateway: the 1 mounts");
    let after = banner.split("http://127.0.0.1:").nth(1).expect("a URL in the banner");
    (gateway, after.split('/').next().unwrap().parse().unwrap())
}

/// A 2026-07-28 `tools/call` of the mounted `greet_interactively` to `port`, with `extra`
/// params (`requestState`, `inputResponses`).
fn greet(port: u16, extra: Value) -> Reply {
    stateless_call_blocking(port, "demo_greet_interactively", extra)
}

/// The asked round's `requestState` and the key of its one question.
fn asked(reply: &Reply) -> (Value, String) {
    let result = &reply.json()["result"];
    assert_eq!(result["resultType"], "input_required", "{reply:?}");
    let key = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    assert_eq!(result["inputRequests"][&key]["method"], "elicitation/create", "{reply:?}");
    (result["requestState"].clone(), key)
}

fn answer(state: &Value, key: &str, name: &str) -> Value {
    json!({"requestState": state, "inputResponses": {key: {"action": "accept", "content": {"name": name}}}})
}

fn greeting(reply: &Reply) -> String {
    reply.json()["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a greeting: {reply:?}")).to_owned()
}

#[test]
#[ignore = "needs redis-server and nginx (scripts/test provides them)"]
fn a_retry_that_lands_on_the_other_replica_finishes_the_parked_upstream_request() {
    let redis = RedisServer::start();
    let dir = TempDir::new("gateway-fleet");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "gateway.toml",
        format!("[[mount]]\nname = \"demo\"\ncommand = [{wharf:?}, \"serve\"]\nrevision = \"2025-11-25\"\n"),
    );
    let (_one, one) = replica(&dir, &redis.url());
    let (other, other_port) = replica(&dir, &redis.url());
    let proxy = Nginx::start(&[one, other_port]);

    // nginx sends each request to the next replica: the call to one, every retry to the other.
    for name in ["Ada", "Grace"] {
        let first = greet(proxy.port, json!({}));
        let (state, key) = asked(&first);
        // A retry without the answer asks again, and leaves the upstream request where it is.
        let again = greet(proxy.port, json!({"requestState": state}));
        assert_ne!(upstream(&again), upstream(&first), "round robin: {again:?}");
        let (state, again_key) = asked(&again);
        assert_eq!(again_key, key);
        // Back on the replica that holds it; then the same once more from the other side.
        let answered = greet(proxy.port, answer(&state, &key, name));
        assert_eq!(upstream(&answered), upstream(&first));
        assert_eq!(greeting(&answered), format!("Hello, {name}!"));

        let second = greet(proxy.port, json!({}));
        let (state, key) = asked(&second);
        let answered = greet(proxy.port, answer(&state, &key, name));
        assert_ne!(upstream(&answered), upstream(&second), "the retry went to the other replica");
        assert_eq!(greeting(&answered), format!("Hello, {name}!"), "{answered:?}");
    }

    // The replica that holds a request stops: a retry elsewhere is told at once, and how to
    // go on.
    let parked_on_other = greet(other_port, json!({}));
    let (state, key) = asked(&parked_on_other);
    other.signal("KILL");
    let _ = other.wait();
    let orphan = greet(one, answer(&state, &key, "Ada"));
    assert_eq!(orphan.json()["error"]["code"], -32602, "{orphan:?}");
    let message = orphan.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("call again without requestState"), "{message}");
    // The replica left serves on.
    let (state, key) = asked(&greet(one, json!({})));
    assert_eq!(greeting(&greet(one, answer(&state, &key, "Lin"))), "Hello, Lin!");
}

/// The replica a retry reached dies while the replica holding the upstream request runs it on
/// its behalf: the holder notices that nobody listens any more and drops the request, which
/// cancels it upstream (the upstream says so in a file).
#[test]
#[ignore = "needs redis-server (scripts/test provides it)"]
fn a_held_request_is_cancelled_upstream_when_the_replica_it_was_for_dies() {
    let redis = RedisServer::start();
    let dir = TempDir::new("gateway-fleet-orphan");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/waiting_upstream.py");
    let marker = dir.join("cancelled");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"demo\"\ncommand = [\"python3\", {:?}, {:?}]\n",
            fixture.display().to_string(),
            marker.display().to_string()
        ),
    );
    let (_holder, holder) = replica(&dir, &redis.url());
    let (other, other_port) = replica(&dir, &redis.url());

    let first = stateless_call_blocking(holder, "demo_ask_then_wait", json!({}));
    let result = &first.json()["result"];
    assert_eq!(result["resultType"], "input_required", "{first:?}");
    let key = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let retry = json!({"requestState": result["requestState"], "inputResponses": {key: {"action": "accept", "content": {"ok": true}}}});
    // The retry reaches the other replica, which carries it to the holder and waits there.
    let waiting = std::thread::spawn(move || stateless_call_blocking(other_port, "demo_ask_then_wait", retry));
    let answered = dir.join("cancelled.answered");
    wharf_testkit::eventually::until_blocking(
        "the answer to reach the upstream",
        std::time::Duration::from_secs(30),
        || answered.exists(),
    );
    assert!(!marker.exists(), "the upstream works on");
    other.signal("KILL");
    let _ = other.wait();
    let _ = waiting.join();
    wharf_testkit::eventually::until_blocking(
        "the upstream request to be cancelled",
        std::time::Duration::from_secs(30),
        || marker.exists(),
    );
}
