//! What the tests of shared stores use beyond the test kit: the requests of a 2025-11-25
//! session in raw bytes, and its responses read as they come.

#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::TcpStream;
use wharf_redis::Redis;
use wharf_testkit::raw_http::{self, JSON, Reply};
use wharf_testkit::redis_cluster::RedisCluster;
use wharf_testkit::redis_sentinel::{self, RedisSentinel};
use wharf_testkit::redis_server::RedisServer;

pub mod demo;
pub mod failover;

/// One request of a 2025 session (none for `initialize`) on a connection of its own.
pub async fn send(port: u16, method: &str, session: Option<&str>, body: &str) -> Reply {
    match session {
        Some(session) => {
            send_with(port, method, &[("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")], body).await
        }
        None => send_with(port, method, &[], body).await,
    }
}

/// A request's bytes: `method` to `/mcp` with JSON's `Content-Type` and `Accept`, `headers`
/// and `body`, on a connection that closes after the answer.
pub fn raw_request(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    raw_http::request_bytes(port, method, "/mcp", &[&JSON[..], headers].concat(), body)
}

/// One request with `headers` on a connection of its own, in raw bytes; the answer must come
/// within 10 s.
pub async fn send_with(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    raw_http::exchange(port, &raw_request(port, method, headers, body)).await
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
        let stream = raw_http::open(port, &raw_request(port, "POST", headers, body)).await;
        Streamed { stream, read: String::new() }
    }

    /// The standalone GET stream of a 2025 session.
    pub async fn get(port: u16, session: &str) -> Streamed {
        Streamed::resume(port, session, None).await
    }

    /// A GET stream of a 2025 session, resuming after `last_event` when it is given.
    pub async fn resume(port: u16, session: &str, last_event: Option<&str>) -> Streamed {
        let mut headers =
            vec![("accept", "text/event-stream"), ("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")];
        headers.extend(last_event.map(|id| ("last-event-id", id)));
        let stream = raw_http::open(port, &raw_http::request_bytes(port, "GET", "/mcp", &headers, "")).await;
        Streamed { stream, read: String::new() }
    }

    /// Reads until `wanted` has come (at most 10 s), and gives all read so far.
    pub async fn until(&mut self, wanted: &str) -> &str {
        assert!(self.within(wanted, Duration::from_secs(10)).await, "no {wanted:?} in time; read {:?}", self.read);
        &self.read
    }

    /// Reads until `wanted` has come, for at most `time`; false if it did not.
    pub async fn within(&mut self, wanted: &str, time: Duration) -> bool {
        raw_http::read_within(&mut self.stream, &mut self.read, wanted, time).await
    }

    /// Reads to the end of the response (at most 10 s).
    pub async fn end(mut self) -> String {
        raw_http::read_rest(&mut self.stream, &mut self.read).await;
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

/// Publishes `message` on `channel` of `bus` until `receiver` gets it (a subscription is made
/// a moment after it is asked for), 50 times at most, 100 ms apart.
pub async fn publish_until_heard(
    bus: &dyn wharf_server::Bus,
    channel: &str,
    message: &[u8],
    receiver: &mut tokio::sync::mpsc::Receiver<Vec<u8>>,
) -> bool {
    for _ in 0..50 {
        bus.publish(channel, message.to_vec()).await.expect("published");
        // What came before (an earlier message to this subscriber) is passed over.
        while let Ok(Some(got)) = tokio::time::timeout(Duration::from_millis(100), receiver.recv()).await {
            if got == message {
                return true;
            }
        }
    }
    false
}

/// What the stores are shared through in a test: one `redis-server`; or, when
/// `WHARF_TEST_REDIS_CLUSTER=1`, a Redis Cluster of three primaries with a replica each; or,
/// when `WHARF_TEST_REDIS_SENTINEL=1`, a primary and its replica under three sentinels (as
/// `scripts/test` runs the fleet's tests again).
pub enum SharedRedis {
    One(RedisServer),
    Cluster(RedisCluster),
    Sentinel(RedisSentinel),
}

impl SharedRedis {
    pub fn start() -> SharedRedis {
        let on = |variable: &str| std::env::var(variable).is_ok_and(|on| on == "1");
        if on("WHARF_TEST_REDIS_CLUSTER") {
            SharedRedis::Cluster(RedisCluster::start())
        } else if on("WHARF_TEST_REDIS_SENTINEL") {
            SharedRedis::Sentinel(RedisSentinel::start())
        } else {
            SharedRedis::One(RedisServer::start())
        }
    }

    /// A connection to it, every key under `prefix`.
    pub fn connect(&self, prefix: &str) -> Redis {
        match self {
            SharedRedis::One(server) => Redis::connect(&server.url()),
            SharedRedis::Cluster(cluster) => Redis::connect_cluster(&cluster.seeds()),
            SharedRedis::Sentinel(sentinel) => {
                Redis::connect_sentinel(&sentinel.sentinels(), redis_sentinel::PRIMARY_NAME)
            }
        }
        .unwrap()
        .prefix(prefix)
    }

    /// What `wharf serve` is told to share it: `--redis`, `--redis-cluster` or
    /// `--redis-sentinel` with the primary's name.
    pub fn serve_args(&self) -> Vec<String> {
        match self {
            SharedRedis::One(server) => vec!["--redis".to_owned(), server.url()],
            SharedRedis::Cluster(cluster) => {
                cluster.seeds().into_iter().flat_map(|seed| ["--redis-cluster".to_owned(), seed]).collect()
            }
            SharedRedis::Sentinel(sentinel) => {
                let mut args: Vec<String> =
                    sentinel.sentinels().into_iter().flat_map(|url| ["--redis-sentinel".to_owned(), url]).collect();
                args.extend(["--redis-sentinel-primary".to_owned(), redis_sentinel::PRIMARY_NAME.to_owned()]);
                args
            }
        }
    }

    /// Stops it (every node of a cluster), as a crash would.
    pub fn stop(&mut self) {
        match self {
            SharedRedis::One(server) => server.stop(),
            SharedRedis::Cluster(cluster) => cluster.stop_all(),
            SharedRedis::Sentinel(sentinel) => sentinel.stop_all(),
        }
    }

    /// Runs it again, with what it had written.
    pub fn run(&mut self) {
        match self {
            SharedRedis::One(server) => server.run(),
            SharedRedis::Cluster(cluster) => cluster.run_all(),
            SharedRedis::Sentinel(sentinel) => sentinel.run_all(),
        }
    }

    /// The URL of the node holding `key`: the one Redis, the primary of its slot, or the
    /// primary the sentinels name.
    pub fn url_holding(&self, key: &str) -> String {
        match self {
            SharedRedis::One(server) => server.url(),
            SharedRedis::Cluster(cluster) => format!("redis://127.0.0.1:{}/", cluster.primary_of(key)),
            SharedRedis::Sentinel(sentinel) => format!("redis://127.0.0.1:{}/", sentinel.primary()),
        }
    }
}
