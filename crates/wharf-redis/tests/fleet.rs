//! Several instances of one server sharing sessions through a real `redis-server` (started
//! here on a free loopback port, in a temporary directory, and killed at the end): any
//! instance serves any request of a session, and an unreachable Redis gets 503, never a hang.
//! Requests are raw HTTP/1.1 bytes.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{RedisServer, Reply, send};
use tokio::net::TcpListener;
use wharf_protocol::LoggingLevel;
use wharf_redis::Redis;
use wharf_server::{HttpOptions, RequestContext, ResourceDef, Server, ToolDef, serve_http_on};

fn server() -> Server {
    Server::builder("fleet", "1")
        .tool(ToolDef::new("whoami", |context: RequestContext| async move {
            let level = if context.logs_at(LoggingLevel::Info) { "logs info" } else { "quiet" };
            format!("{} {level}", context.session_id())
        }))
        .resource(ResourceDef::text("demo://note", "note", "hello"))
        .build()
        .unwrap()
}

/// One more instance of the server on a free loopback port, sharing `redis`'s sessions.
async fn instance(redis: &Redis, idle: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let options = HttpOptions::default().session_store(redis.session_store()).session_idle_timeout(idle);
    tokio::spawn(serve_http_on(server(), listener, options));
    port
}

use support::{initialize, request};

fn whoami(id: u64) -> String {
    request(id, "tools/call", json!({"name": "whoami", "arguments": {}}))
}

fn text_of(reply: &Reply) -> String {
    reply.json()["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {reply:?}")).to_owned()
}

/// Reads what Redis keeps of a session, as another instance would.
async fn stored_fields(redis_url: &str, key: &str) -> (Vec<String>, i64) {
    let client = redis::Client::open(redis_url).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let fields: Vec<String> = redis::cmd("HKEYS").arg(key).query_async(&mut connection).await.unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg(key).query_async(&mut connection).await.unwrap();
    (fields, ttl)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_instance_is_served_by_the_others_until_deleted() {
    let redis_server = RedisServer::start();
    let redis = Redis::connect(&redis_server.url()).unwrap().prefix("fleet-a");
    let idle = Duration::from_secs(60);
    let (a, b, c) = (instance(&redis, idle).await, instance(&redis, idle).await, instance(&redis, idle).await);

    let opened = initialize(a).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = send(b, "POST", Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{initialized:?}");

    // The session, its revision and its id are the same wherever the request lands.
    for (n, port) in [c, b, a].into_iter().enumerate() {
        let reply = send(port, "POST", Some(&id), &whoami(n as u64 + 1)).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(text_of(&reply), format!("{id} logs info"));
    }

    // A log level set on one instance holds on the others.
    let set = send(c, "POST", Some(&id), &request(10, "logging/setLevel", json!({"level": "error"}))).await;
    assert_eq!(set.status, 200, "{set:?}");
    assert_eq!(set.json()["result"], json!({}));
    for port in [a, b] {
        assert_eq!(text_of(&send(port, "POST", Some(&id), &whoami(11)).await), format!("{id} quiet"));
    }

    // Subscriptions and `initialized` are kept beside what initialize settled, each made or
    // undone on any instance; the key expires after the idle timeout unless a request comes.
    for (n, (port, method, uri)) in
        [(b, "subscribe", "demo://note"), (c, "subscribe", "demo://later"), (a, "unsubscribe", "demo://later")]
            .into_iter()
            .enumerate()
    {
        let params = json!({"uri": uri});
        let reply =
            send(port, "POST", Some(&id), &request(12 + n as u64, &format!("resources/{method}"), params)).await;
        assert_eq!(reply.json()["result"], json!({}), "{reply:?}");
    }
    let key = format!("fleet-a:{{{id}}}:session");
    let (mut fields, ttl) = stored_fields(&redis_server.url(), &key).await;
    fields.sort();
    assert_eq!(fields, ["initialized", "level", "opened", "sub:demo://note"]);
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");

    // Deleted on one instance, the session is gone on every instance.
    let deleted = send(b, "DELETE", Some(&id), "").await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    for port in [a, b, c] {
        assert_eq!(send(port, "POST", Some(&id), &whoami(20)).await.status, 404);
    }
    // An id no instance made is not looked up at all.
    assert_eq!(send(a, "POST", Some("not-a-session"), &whoami(21)).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_idles_out_for_the_whole_fleet_and_requests_anywhere_keep_it_alive() {
    let redis_server = RedisServer::start();
    let redis = Redis::connect(&redis_server.url()).unwrap().prefix("fleet-b");
    let idle = Duration::from_millis(1500);
    let (a, b) = (instance(&redis, idle).await, instance(&redis, idle).await);
    let id = initialize(a).await.header("mcp-session-id").unwrap().to_owned();
    // Requests on B keep the session alive past A's idle timeout.
    for n in 0..3 {
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(send(b, "POST", Some(&id), &whoami(n)).await.status, 200, "request {n} on B");
    }
    assert_eq!(send(a, "POST", Some(&id), &whoami(5)).await.status, 200, "A still serves it");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(send(b, "POST", Some(&id), &whoami(6)).await.status, 404);
    assert_eq!(send(a, "POST", Some(&id), &whoami(7)).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_is_down_requests_get_503_with_retry_after_and_work_again_once_it_is_back() {
    let mut redis_server = RedisServer::start();
    let redis = Redis::connect(&redis_server.url()).unwrap().prefix("fleet-c");
    let idle = Duration::from_secs(60);
    let (a, b) = (instance(&redis, idle).await, instance(&redis, idle).await);
    let id = initialize(a).await.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(send(b, "POST", Some(&id), &whoami(1)).await.status, 200);

    redis_server.stop();
    for reply in [
        send(a, "POST", Some(&id), &whoami(2)).await,
        send(b, "POST", Some(&id), &whoami(3)).await,
        initialize(b).await,
    ] {
        assert_eq!(reply.status, 503, "{reply:?}");
        assert_eq!(reply.header("retry-after"), Some("1"));
        assert_eq!(reply.json()["error"]["code"], -32603);
    }
    let deleted = send(b, "DELETE", Some(&id), "").await;
    assert_eq!(deleted.status, 503, "{deleted:?}");

    // Back, with what it had written: the session goes on wherever the request lands.
    redis_server.run();
    let mut status = 0;
    for _ in 0..50 {
        status = send(b, "POST", Some(&id), &whoami(4)).await.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the session is served again once Redis is back");
    assert_eq!(send(a, "POST", Some(&id), &whoami(5)).await.status, 200);
    assert_eq!(initialize(b).await.status, 200);
}
