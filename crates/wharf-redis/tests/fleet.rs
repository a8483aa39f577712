//! Several instances of one server sharing sessions through a real `redis-server` (started
//! here on a free loopback port, in a temporary directory, and killed at the end): any
//! instance serves any request of a session, and an unreachable Redis gets 503, never a hang.
//! Requests are raw HTTP/1.1 bytes.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::{SharedRedis, Streamed, change_until_heard, publish_until_heard, raw_request, send, session_across};
use tokio::net::TcpListener;
use wharf_http::{HttpOptions, serve};
use wharf_protocol::{ElicitParams, LoggingLevel};
use wharf_redis::Redis;
use wharf_server::{Bus, RequestContext, ResourceDef, Server, ToolDef};
use wharf_testkit::eventually::eventually_async;
use wharf_testkit::raw_http::{self, Reply};

/// How many handlers of `wait_for_cancel` stopped before their time: dropped, or cancelled.
static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Counts a stop when the handler holding it ends early.
struct CountsStop;

impl Drop for CountsStop {
    fn drop(&mut self) {
        CANCELLED.fetch_add(1, Ordering::SeqCst);
    }
}

fn server() -> Server {
    Server::builder("fleet", "1")
        .tool(ToolDef::new("ask", |context: RequestContext| async move {
            let params = ElicitParams { message: "Your name?".to_owned(), ..ElicitParams::default() };
            match context.elicit(params).await {
                Ok(answer) => {
                    format!("{:?} {}", answer.action, serde_json::to_string(&answer.content).unwrap_or_default())
                }
                Err(err) => format!("failed: {err:?}"),
            }
        }))
        .tool(ToolDef::new("wait_for_cancel", |context: RequestContext| async move {
            let stop = CountsStop;
            tokio::select! {
                () = context.cancellation().cancelled() => "cancelled".to_owned(),
                () = tokio::time::sleep(Duration::from_secs(20)) => {
                    std::mem::forget(stop);
                    "never cancelled".to_owned()
                }
            }
        }))
        .tool(ToolDef::new("whoami", |context: RequestContext| async move {
            let level = if context.logs_at(LoggingLevel::Info) { "logs info" } else { "quiet" };
            format!("{} {level}", context.session_id())
        }))
        .tool(ToolDef::new("touch_note", |context: RequestContext| async move {
            context.server().notify_resource_updated("demo://note");
            "touched"
        }))
        .tool(ToolDef::new("touch_other", |context: RequestContext| async move {
            context.server().notify_resource_updated("demo://other");
            "touched"
        }))
        .tool(ToolDef::new("count", |context: RequestContext| async move {
            for step in 1..=4 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                context.log(LoggingLevel::Info, Some("count"), format!("step {step}")).await;
            }
            "counted"
        }))
        .tool(ToolDef::new("extra", || async { "here" }))
        .tool(ToolDef::new("hide_extra", |context: RequestContext| async move {
            context.server().set_tool_enabled("extra", false).to_string()
        }))
        .tool(ToolDef::new("show_extra", |context: RequestContext| async move {
            context.server().set_tool_enabled("extra", true).to_string()
        }))
        .resource(ResourceDef::text("demo://note", "note", "hello"))
        .resource(ResourceDef::text("demo://other", "other", "hi"))
        .build()
        .unwrap()
}

/// One more instance of the server on a free loopback port, sharing `redis`'s sessions.
async fn instance(redis: &Redis, idle: Duration) -> u16 {
    instance_with(HttpOptions::default().session_store(redis.session_store()).session_idle_timeout(idle)).await
}

/// One more instance of the server on a free loopback port, with `options`.
async fn instance_with(options: HttpOptions) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve(listener, server()).options(options).into_future());
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
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-a");
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
    let (mut fields, ttl) = stored_fields(&redis_server.url_holding(&key), &key).await;
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
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-b");
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
    let mut redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-c");
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
    eventually_async("the session to be served again once Redis is back", Duration::from_secs(5), || async {
        (send(b, "POST", Some(&id), &whoami(4)).await.status == 200).then_some(())
    })
    .await;
    assert_eq!(send(a, "POST", Some(&id), &whoami(5)).await.status, 200);
    assert_eq!(initialize(b).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_and_cancellations_the_client_sends_to_another_instance_reach_the_request() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-d");
    let idle = Duration::from_secs(60);
    let (a, b) = (instance(&redis, idle).await, instance(&redis, idle).await);
    let id = session_across(a, b, json!({"elicitation": {}})).await;

    // The handler on A asks; the client answers on B; the handler on A gets the answer.
    let mut asking = Streamed::post(a, &id, &request(1, "tools/call", json!({"name": "ask", "arguments": {}}))).await;
    let read = asking.until("elicitation/create").await;
    let event = read.lines().find(|line| line.contains("elicitation/create")).unwrap();
    let elicitation: Value = serde_json::from_str(event.trim_start_matches("data: ")).unwrap();
    let answer =
        json!({"jsonrpc": "2.0", "id": elicitation["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    let relayed = send(b, "POST", Some(&id), &answer.to_string()).await;
    assert_eq!(relayed.status, 202, "{relayed:?}");
    let answered = asking.end().await;
    assert!(answered.contains(r#"Accept {\"name\":\"Ada\"}"#), "{answered}");

    // A request running on A, cancelled on B, stops on A.
    let before = CANCELLED.load(Ordering::SeqCst);
    let mut waiting =
        Streamed::post(a, &id, &request(2, "tools/call", json!({"name": "wait_for_cancel", "arguments": {}}))).await;
    // The request may not have started on A yet: the cancellation is sent again until it has.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
    eventually_async("the handler on A to see the cancellation sent to B", Duration::from_secs(5), || async {
        assert_eq!(send(b, "POST", Some(&id), &cancel.to_string()).await.status, 202);
        (CANCELLED.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert_eq!(CANCELLED.load(Ordering::SeqCst), before + 1, "the handler on A saw the cancellation sent to B");
    let rest = waiting.until("\r\n\r\n").await.to_owned();
    assert!(!rest.contains("never cancelled"), "{rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_changed_on_one_instance_reaches_the_subscribers_stream_on_another() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-e");
    let idle = Duration::from_secs(60);
    let (a, b, c) = (instance(&redis, idle).await, instance(&redis, idle).await, instance(&redis, idle).await);
    let id = session_across(a, b, json!({})).await;
    let subscribe = |n: u64, uri: &str| request(n, "resources/subscribe", json!({"uri": uri}));
    assert_eq!(send(b, "POST", Some(&id), &subscribe(1, "demo://note")).await.status, 200);

    // The standalone stream is open on C; the resource changes on A.
    let mut standalone = Streamed::get(c, &id).await;
    standalone.until("200 OK").await;
    let heard = change_until_heard(a, &id, "touch_note", "demo://note", &mut standalone).await;
    assert!(heard, "C's stream heard of the change made on A: {:?}", standalone.read);
    let touch = |n: u64, tool: &str| request(n, "tools/call", json!({"name": tool, "arguments": {}}));

    // A subscription made through B after the stream opened on C counts too.
    assert_eq!(send(b, "POST", Some(&id), &subscribe(3, "demo://other")).await.status, 200);
    assert_eq!(send(a, "POST", Some(&id), &touch(4, "touch_other")).await.status, 200);
    standalone.until(r#""uri":"demo://other""#).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_one_instance_is_resumed_on_another_from_its_last_event() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-f");
    let idle = Duration::from_secs(60);
    let (a, b) = (instance(&redis, idle).await, instance(&redis, idle).await);
    let id = session_across(a, b, json!({})).await;

    // The client reads the first log message of a streamed call on A, then loses the stream.
    let mut counting =
        Streamed::post(a, &id, &request(1, "tools/call", json!({"name": "count", "arguments": {}}))).await;
    let read = counting.until("step 1").await.to_owned();
    drop(counting);
    let last_event = read
        .lines()
        .filter_map(|line| line.strip_prefix("id: "))
        .next_back()
        .expect("events carry ids in a 2025-11-25 session")
        .to_owned();
    // The handler goes on without its client; its events are kept.
    tokio::time::sleep(Duration::from_millis(800)).await;

    // Resumed on B: what followed the last event read, up to the result, and the stream ends.
    let resumed = Streamed::resume(b, &id, Some(&last_event)).await.end().await;
    assert!(resumed.starts_with("HTTP/1.1 200"), "{resumed}");
    for step in 2..=4 {
        assert!(resumed.contains(&format!("step {step}")), "step {step} is replayed: {resumed}");
    }
    assert!(!resumed.contains("step 1"), "nothing before the last event read: {resumed}");
    assert!(resumed.contains(r#""id":1,"result""#) && resumed.contains("counted"), "{resumed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_hidden_or_shown_on_one_instance_is_so_on_every_instance_and_their_clients_hear_it() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-g");
    let idle = Duration::from_secs(60);
    let (a, b, c) = (instance(&redis, idle).await, instance(&redis, idle).await, instance(&redis, idle).await);
    let id = session_across(a, b, json!({})).await;
    let subscribe = request(1, "resources/subscribe", json!({"uri": "demo://note"}));
    assert_eq!(send(a, "POST", Some(&id), &subscribe).await.status, 200);
    let mut standalone = Streamed::get(b, &id).await;
    standalone.until("200 OK").await;
    // B hears what A relays once its subscription is made: a resource change shows when.
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut standalone).await, "B hears what A relays");
    // And C too (a second session, whose stream C holds).
    let other = session_across(c, c, json!({})).await;
    assert_eq!(send(c, "POST", Some(&other), &subscribe).await.status, 200);
    let mut on_c = Streamed::get(c, &other).await;
    on_c.until("200 OK").await;
    assert!(change_until_heard(a, &other, "touch_note", "demo://note", &mut on_c).await, "C hears what A relays");
    let call = |n: u64, tool: &str| request(n, "tools/call", json!({"name": tool, "arguments": {}}));
    let listed = |port: u16| lists_extra(port, &id);
    assert!(listed(b).await && listed(c).await);

    // Hidden on A: gone from every instance's list and calls, and B's stream hears of it.
    assert_eq!(text_of(&send(a, "POST", Some(&id), &call(3, "hide_extra")).await), "true");
    standalone.until("notifications/tools/list_changed").await;
    on_c.until("notifications/tools/list_changed").await;
    assert!(!listed(b).await && !listed(c).await, "hidden everywhere");
    let refused = send(c, "POST", Some(&id), &call(4, "extra")).await;
    assert!(refused.json()["error"].is_object() || refused.json()["result"]["isError"] == true, "{refused:?}");

    // Shown again on C: back everywhere.
    assert_eq!(text_of(&send(c, "POST", Some(&id), &call(5, "show_extra")).await), "true");
    eventually_async("the tool to be shown everywhere", Duration::from_secs(5), || async {
        (listed(a).await && listed(b).await).then_some(())
    })
    .await;
}

/// True when `tools/list` on the instance at `port` shows the tool `extra`.
async fn lists_extra(port: u16, session: &str) -> bool {
    let reply = send(port, "POST", Some(session), &request(2, "tools/list", json!({}))).await;
    reply.json()["result"]["tools"].as_array().unwrap().iter().any(|tool| tool["name"] == "extra")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_holds_for_the_fleet_and_ends_the_session_heard_from_longest_ago() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-h");
    let options = || HttpOptions::default().session_store(redis.session_store()).max_sessions(2);
    let (a, b) = (instance_with(options()).await, instance_with(options()).await);
    let first = initialize(a).await.header("mcp-session-id").unwrap().to_owned();
    let second = initialize(b).await.header("mcp-session-id").unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The first is heard from again, on B: the second is now the one heard from longest ago.
    assert_eq!(send(b, "POST", Some(&first), &whoami(1)).await.status, 200);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let third = initialize(a).await.header("mcp-session-id").unwrap().to_owned();
    for port in [a, b] {
        assert_eq!(send(port, "POST", Some(&second), &whoami(2)).await.status, 404, "the second ended everywhere");
        assert_eq!(send(port, "POST", Some(&first), &whoami(3)).await.status, 200);
        assert_eq!(send(port, "POST", Some(&third), &whoami(4)).await.status, 200);
    }
}

/// A request of a 2025 session sent to `port` from `source`, another loopback address than the
/// flooding client's: the socket is bound here, the rest is the kit's.
async fn send_from(source: &str, port: u16, session: Option<&str>, body: &str) -> Reply {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let headers = match session {
        Some(session) => vec![("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")],
        None => Vec::new(),
    };
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(std::net::SocketAddr::new(source.parse().unwrap(), 0)).unwrap();
    let mut stream = socket.connect(std::net::SocketAddr::from(([127, 0, 0, 1], port))).await.unwrap();
    stream.write_all(raw_request(port, "POST", &headers, body).as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw)).await.unwrap().unwrap();
    raw_http::parse(&raw)
}

/// Issue 38, item 5, for a fleet: one client flooding every instance with `initialize` takes
/// no other client's session; the quota per client holds across instances, in the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_flooding_the_fleet_with_sessions_ends_only_its_own() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("fleet-quota");
    let options =
        || HttpOptions::default().session_store(redis.session_store()).max_sessions(6).max_sessions_per_client(2);
    let (a, b) = (instance_with(options()).await, instance_with(options()).await);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fleet-test", "version": "1"}}})
    .to_string();
    let other = send_from("127.0.0.2", a, None, &init).await.header("mcp-session-id").unwrap().to_owned();
    let mut flooded = Vec::new();
    for round in 0..12 {
        let port = if round % 2 == 0 { a } else { b };
        let reply = send_from("127.0.0.1", port, None, &init).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        flooded.push(reply.header("mcp-session-id").unwrap().to_owned());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    for port in [a, b] {
        let reply = send_from("127.0.0.2", port, Some(&other), &whoami(1)).await;
        assert_eq!(reply.status, 200, "the other client's session lives on: {reply:?}");
    }
    let mut alive = Vec::new();
    for session in &flooded {
        alive.push(send_from("127.0.0.1", b, Some(session), &whoami(2)).await.status == 200);
    }
    let expected: Vec<bool> = (0..12).map(|round| round >= 10).collect();
    assert_eq!(alive, expected, "the flooder keeps only its two newest sessions, fleet-wide");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_published_while_a_subscription_is_down_is_handed_over_once_it_is_back() {
    let redis_server = SharedRedis::start();
    let bus = redis_server.connect("gap").bus();
    let mut heard = bus.subscribe("news");
    assert!(publish_until_heard(&*bus, "news", b"before", &mut heard).await, "subscribed");
    // The node holding the channel cuts every subscription (as a failover or a lost
    // connection would), and two messages are published at once, before the listener has
    // subscribed again: they are handed over once it has, in order, each once.
    let node = redis::Client::open(redis_server.url_holding("gap:bus:news")).unwrap();
    let mut connection = node.get_multiplexed_async_connection().await.unwrap();
    let cut: i64 =
        redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("pubsub").query_async(&mut connection).await.unwrap();
    assert!(cut >= 1, "the subscription was cut");
    bus.publish("news", b"in the gap".to_vec()).await.expect("published");
    bus.publish("news", b"after it".to_vec()).await.expect("published");
    let mut got = Vec::new();
    while got.len() < 2 {
        let next = tokio::time::timeout(Duration::from_secs(5), heard.recv()).await;
        got.push(next.expect("handed over within 5 s").expect("still listening"));
    }
    assert_eq!(got, [b"in the gap".to_vec(), b"after it".to_vec()]);
    let more = tokio::time::timeout(Duration::from_millis(500), heard.recv()).await;
    assert!(more.is_err(), "nothing handed twice: {more:?}");
}
