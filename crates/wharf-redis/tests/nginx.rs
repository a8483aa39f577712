//! A fleet as it is deployed: three `wharf serve --http --redis` processes behind nginx, which
//! sends each request to the next instance in turn (round robin, no stickiness, no buffering
//! of SSE), sharing one `redis-server` (or a Redis Cluster, or Sentinel's primary, as the
//! fleet's other tests take it). Every process is started here on free loopback ports
//! and killed at the end. Needs `redis-server`, `nginx` and the `wharf` binary in `WHARF_BIN`:
//! `scripts/test` installs the Debian packages, builds the binary and runs it with `--ignored`.

mod support;

use std::time::Duration;

use serde_json::json;
use support::demo::{echo, progress_values, start_task, wait_for_task, wharf_serve};
use support::{SharedRedis, Streamed, change_until_heard, initialize, request, send, send_with};
use wharf_testkit::nginx::{Nginx, upstream};
use wharf_testkit::process::Process;

/// Starts `wharf serve --http 127.0.0.1:0` sharing `shared`, and waits for the banner naming
/// its port.
fn wharf_instance(shared: &SharedRedis) -> (Process, u16) {
    let keys = format!("fleet-2026={},retired={}", "ab".repeat(32), "cd".repeat(32));
    let args = [&["--redis-prefix".to_owned(), "nginx-fleet".to_owned()][..], &shared.serve_args()].concat();
    wharf_serve(&args, &[("WHARF_REQUEST_STATE_KEYS", &keys)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server, nginx and WHARF_BIN (scripts/test provides them)"]
async fn behind_round_robin_nginx_every_request_of_a_session_lands_on_the_next_instance() {
    let redis = SharedRedis::start();
    let mut instances: Vec<(Process, u16)> = (0..3).map(|_| wharf_instance(&redis)).collect();
    let proxy = Nginx::start(&instances.iter().map(|(_, port)| *port).collect::<Vec<_>>());

    let opened = initialize(proxy.port).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let mut served = vec![upstream(&opened)];
    let initialized =
        send(proxy.port, "POST", Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{initialized:?}");
    served.push(upstream(&initialized));
    for n in 1..=9 {
        let reply = send(proxy.port, "POST", Some(&id), &echo(n)).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.json()["result"]["content"][0]["text"], format!("hello {n}"));
        served.push(upstream(&reply));
    }
    // A streamed answer (progress and log messages before the result) passes unbuffered.
    let countdown = request(
        10,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 2},
        "_meta": {"progressToken": "t"}}),
    );
    let streamed = send(proxy.port, "POST", Some(&id), &countdown).await;
    assert_eq!(streamed.status, 200, "{streamed:?}");
    assert!(streamed.body.contains("notifications/progress") && streamed.body.contains("\"id\":10"), "{streamed:?}");
    served.push(upstream(&streamed));
    eprintln!("instances that served each request, in order: {served:?}");
    for pair in served.windows(2) {
        assert_ne!(pair[0], pair[1], "each request went to another instance than the one before: {served:?}");
    }
    let mut distinct = served.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "all three instances served: {served:?}");

    // The standalone stream is on one instance; the subscription and the change land on
    // others; the stream hears of it. Instances hear of each other's changes from their first
    // request on, so the change is made again until it is heard (at most 10 s).
    let subscribe = request(11, "resources/subscribe", json!({"uri": "demo://clock"}));
    assert_eq!(send(proxy.port, "POST", Some(&id), &subscribe).await.status, 200);
    let mut standalone = Streamed::get(proxy.port, &id).await;
    standalone.until("200 OK").await;
    let heard = change_until_heard(proxy.port, &id, "tick", "demo://clock", &mut standalone).await;
    assert!(heard, "the GET stream heard of the tick: {:?}", standalone.read);
    drop(standalone);

    // Every instance describes the server alike: `server/discover` and a cacheable list, with
    // its cache hints, are the same from each of the three.
    for method in ["server/discover", "tools/list"] {
        let mut answers = Vec::new();
        let mut instances_seen = Vec::new();
        for _ in 0..3 {
            let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
            let mut params = json!({});
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}});
            let reply = send_with(proxy.port, "POST", &headers, &request(1, method, params)).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            instances_seen.push(upstream(&reply));
            answers.push(reply.json()["result"].clone());
        }
        instances_seen.sort();
        instances_seen.dedup();
        assert_eq!(instances_seen.len(), 3, "{method} went to each instance");
        assert!(answers.windows(2).all(|pair| pair[0] == pair[1]), "{method} differs between instances: {answers:?}");
        if method == "tools/list" {
            assert!(
                answers[0]["ttlMs"].is_u64() && answers[0]["cacheScope"].is_string(),
                "cache hints: {}",
                answers[0]
            );
        }
    }

    // A task started on one instance is polled through the others until it is done.
    let counting = start_task(proxy.port, 3).await.0;
    let done = wait_for_task(proxy.port, &counting, "completed", Duration::from_secs(5)).await;
    assert_eq!(done["result"]["content"][0]["text"], "Counted down 3 steps", "{done}");

    // The instance running a long task is killed: the task fails once its lease (10 s) runs
    // out, and the session goes on on the other two instances.
    let (long, runner) = start_task(proxy.port, 1000).await;
    let at = instances.iter().position(|(_, port)| runner.ends_with(&format!(":{port}"))).expect("the runner is ours");
    let (killed, _) = instances.remove(at);
    drop(killed);
    let failed = wait_for_task(proxy.port, &long, "failed", Duration::from_secs(20)).await;
    assert!(failed["error"]["message"].as_str().unwrap_or_default().contains("stopped"), "{failed}");
    for n in 20..26 {
        let reply = send(proxy.port, "POST", Some(&id), &echo(n)).await;
        assert_eq!(reply.status, 200, "request {n} after an instance died: {reply:?}");
    }

    // The instance streaming a call is killed (SIGKILL) while Redis holds its writes back
    // (`CLIENT PAUSE WRITE`): every event the client saw was kept before it was sent, so a
    // resume through the proxy on another instance with `Last-Event-ID` replays them all, in
    // order, without a gap, from the stream's first event on; and from the last one read, what
    // followed. (Sent before being kept, the client would have read some thirty more events in
    // the pause, lost with their instance.)
    let countdown = request(
        50,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 1000},
        "_meta": {"progressToken": "long"}}),
    );
    let mut streamed = Streamed::post(proxy.port, &id, &countdown).await;
    streamed.until("\"progress\":2.0").await;
    let client = redis::Client::open(redis.url_holding(&format!("nginx-fleet:{{{id}}}:events"))).unwrap();
    let mut paused = client.get_multiplexed_async_connection().await.unwrap();
    let pause: String =
        redis::cmd("CLIENT").arg("PAUSE").arg(1500).arg("WRITE").query_async(&mut paused).await.unwrap();
    assert_eq!(pause, "OK");
    assert!(!streamed.within("\"progress\":40.0", Duration::from_millis(700)).await, "events kept before sent");
    let read = streamed.read.clone();
    let streamer = read.lines().find_map(|line| line.strip_prefix("X-Upstream: ")).expect("nginx names the instance");
    let at =
        instances.iter().position(|(_, port)| streamer.ends_with(&format!(":{port}"))).expect("the streamer is ours");
    let (killed, _) = instances.remove(at);
    drop(killed);
    drop(streamed);
    let ids: Vec<&str> = read.lines().filter_map(|line| line.strip_prefix("id: ")).collect();
    let (first_event, last_event) = (ids[0], ids[ids.len() - 1]);
    let read_up_to = progress_values(&read).last().copied().expect("progress was read");
    let _: String = redis::cmd("CLIENT").arg("UNPAUSE").query_async(&mut paused).await.unwrap();
    let resumed = Streamed::resume(proxy.port, &id, Some(first_event)).await.end().await;
    assert!(resumed.starts_with("HTTP/1.1 200"), "{resumed}");
    let replayed = progress_values(&resumed);
    assert!(replayed.len() as u64 >= read_up_to, "every event the client saw is replayed: {resumed}");
    assert_eq!(replayed, (1..=replayed.len() as u64).collect::<Vec<_>>(), "in order, without a gap");
    let resumed = Streamed::resume(proxy.port, &id, Some(last_event)).await.end().await;
    let after = progress_values(&resumed);
    assert_eq!(after, (read_up_to + 1..=read_up_to + after.len() as u64).collect::<Vec<_>>(), "{resumed}");
    // Past what it kept, the dead sender's stream is gone: the client is told so (410), where
    // it would otherwise resume again and again and wait for an answer that cannot come.
    let gone = match resumed.lines().filter_map(|line| line.strip_prefix("id: ")).next_back() {
        Some(last_kept) => Streamed::resume(proxy.port, &id, Some(last_kept)).await.end().await,
        None => resumed.clone(),
    };
    assert!(gone.starts_with("HTTP/1.1 410"), "{gone}");
    assert!(gone.contains("outcome is unknown"), "{gone}");
    eprintln!(
        "read up to progress {read_up_to} and killed the sender: {} events replayed from the first, {} after the last read",
        replayed.len(),
        after.len()
    );

    // Deleted through one instance, the session is gone on every one.
    assert_eq!(send(proxy.port, "DELETE", Some(&id), "").await.status, 204);
    for n in 30..33 {
        assert_eq!(send(proxy.port, "POST", Some(&id), &echo(n)).await.status, 404);
    }
}
