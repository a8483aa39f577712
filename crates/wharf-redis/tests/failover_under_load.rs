//! A Redis primary lost under load: three `wharf serve --redis-cluster --redis-wait-replicas 1`
//! (the binary in `WHARF_BIN`) behind round-robin nginx, on a Redis Cluster of three primaries
//! with a replica each, all on free loopback ports. While a 2025 session's calls come four at a
//! time, one of its calls streams progress, a 2026-07-28 task counts down and a 2026-07-28
//! input round waits for its answer, the primary holding the session (and the task) is failed
//! over on purpose (`CLUSTER FAILOVER`), then, in a second round, killed (`SIGKILL`). Every
//! answer is right; what was in flight completes or gets a clear error (`503`), counted; the
//! session, its stream (live and resumed with `Last-Event-ID`), the task and the input round go
//! on. `scripts/test` runs it with `--ignored`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use support::demo::{echo, progress_values, start_task, wait_for_task, wharf_serve};
use support::{Streamed, initialize, request, send};
use wharf_testkit::nginx::Nginx;
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::stateless_call_blocking;
use wharf_testkit::redis_cluster::RedisCluster;

/// How the primary is lost.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Its replica takes over with its agreement (`CLUSTER FAILOVER`): nothing acknowledged is
    /// lost.
    FailedOver,
    /// It dies (`SIGKILL`); its replica is elected after the node timeout.
    Killed,
}

/// What the calls sent during a round got.
#[derive(Debug, Default)]
struct Calls {
    answered: usize,
    refused: usize,
}

/// Calls `echo` in `session` through `proxy` one after another until `stop`: each answer is
/// the echo of its own message, or `503` (Redis unavailable for a moment).
async fn calling(proxy: u16, session: String, first_id: u64, stop: Arc<AtomicBool>) -> Calls {
    let mut calls = Calls::default();
    let mut id = first_id;
    while !stop.load(Ordering::SeqCst) {
        id += 1;
        let reply = send(proxy, "POST", Some(&session), &echo(id)).await;
        match reply.status {
            200 => {
                assert_eq!(reply.json()["result"]["content"][0]["text"], format!("hello {id}"), "{reply:?}");
                calls.answered += 1;
            }
            503 => {
                assert!(reply.header("retry-after").is_some(), "a 503 says when to retry: {reply:?}");
                calls.refused += 1;
            }
            other => panic!("a call in flight got {other}: {reply:?}"),
        }
    }
    calls
}

/// One round: the load set up, the session's primary lost by `fault`, and what went on after.
async fn round(cluster: &mut RedisCluster, proxy: u16, fault: Fault) {
    let opened = initialize(proxy).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = send(proxy, "POST", Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{initialized:?}");
    let primary = cluster.primary_of(&format!("load:{{{id}}}:session"));

    // A task whose record lies on that primary too (its random id decides its slot: tasks are
    // started until one's does, the others running to their end meanwhile). A task misses a
    // primary of three two times in three: twelve tries missed it about once in 130 rounds, and
    // forty miss it about once in ten million.
    let mut task = None;
    for _ in 0..40 {
        let (started, _) = start_task(proxy, 150).await;
        if cluster.primary_of(&format!("load:{{{started}}}:task")) == primary {
            task = Some(started);
            break;
        }
    }
    let task = task.expect("one of forty tasks lies on the session's primary");

    // A call that streams its progress, read up to its third step.
    let countdown = request(
        7,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 150}, "_meta": {"progressToken": "load"}}),
    );
    let mut streamed = Streamed::post(proxy, &id, &countdown).await;
    streamed.until("\"progress\":3.0").await;

    // A 2026-07-28 input round, asked before the fault and answered after it.
    let asked = tokio::task::spawn_blocking(move || stateless_call_blocking(proxy, "greet_interactively", json!({})))
        .await
        .unwrap()
        .json();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].clone();
    let key = asked["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();

    // Calls four at a time, through the fault.
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> =
        (0..4u64).map(|n| tokio::spawn(calling(proxy, id.clone(), 1000 * (n + 1), stop.clone()))).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    match fault {
        Fault::FailedOver => {
            let replica = cluster.replica_of(primary);
            cluster.fail_over_to(replica);
        }
        Fault::Killed => cluster.kill(primary),
    }
    let took = started.elapsed();
    assert_ne!(cluster.primary_of(&format!("load:{{{id}}}:session")), primary, "another node holds the session now");
    // The session is served again within 15 s.
    let served_again = async {
        for n in 0..300 {
            if send(proxy, "POST", Some(&id), &echo(900 + n)).await.status == 200 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    };
    assert!(served_again.await, "the session is served again after the {fault:?} primary");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    let mut calls = Calls::default();
    for caller in callers {
        let one = caller.await.unwrap();
        calls.answered += one.answered;
        calls.refused += one.refused;
    }
    assert!(calls.answered > 0, "calls were answered through the {fault:?} primary");

    // The streamed call ends with its result, every step in order on the live stream; a resume
    // from its first event replays, in order, what the store kept.
    assert!(streamed.within("Counted down 150 steps", Duration::from_secs(30)).await, "{:?}", streamed.read);
    let live = progress_values(&streamed.read);
    assert_eq!(live, (1..=150).collect::<Vec<_>>(), "the live stream, step by step");
    let first_event =
        streamed.read.lines().find_map(|line| line.strip_prefix("id: ")).expect("the stream's events have ids");
    let resumed = Streamed::resume(proxy, &id, Some(first_event)).await.end().await;
    assert!(resumed.starts_with("HTTP/1.1 200"), "{resumed}");
    let replayed = progress_values(&resumed);
    assert!(replayed.windows(2).all(|pair| pair[0] < pair[1]), "replayed in order: {replayed:?}");
    assert!(replayed.iter().all(|step| (1..=150).contains(step)), "only steps the call made: {replayed:?}");
    if let Fault::FailedOver = fault {
        // A failover the primary agreed to loses nothing it acknowledged (a kill may lose the
        // last writes not yet replicated, which events do not wait for).
        assert_eq!(replayed, live, "every step replayed after a failover agreed to");
    }

    // The task ends with its result, and the input round with its answer.
    let done = wait_for_task(proxy, &task, "completed", Duration::from_secs(40)).await;
    assert_eq!(done["result"]["content"][0]["text"], "Counted down 150 steps", "{done}");
    let answers = json!({key: {"action": "accept", "content": {"name": "Ada"}}});
    let answered = tokio::task::spawn_blocking(move || {
        stateless_call_blocking(proxy, "greet_interactively", json!({"requestState": state, "inputResponses": answers}))
    })
    .await
    .unwrap()
    .json();
    assert_eq!(answered["result"]["content"][0]["text"], "Hello, Ada!", "{answered}");
    assert_eq!(send(proxy, "DELETE", Some(&id), "").await.status, 204);
    eprintln!(
        "{fault:?} ({:.1} s until every node agreed): calls {} answered, {} refused with 503; live stream 150 of 150 \
         steps; {} of the 150 steps replayed on resume from the first event; the task completed; the input round answered",
        took.as_secs_f64(),
        calls.answered,
        calls.refused,
        replayed.len(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server, redis-cli, nginx and WHARF_BIN (scripts/test provides them)"]
async fn the_session_its_stream_a_task_and_an_input_round_go_on_when_their_primary_is_failed_over_or_killed() {
    let mut cluster = RedisCluster::start();
    let keys = format!("load={}", "ef".repeat(32));
    let mut args: Vec<String> = ["--redis-prefix", "load", "--redis-wait-replicas", "1"].map(str::to_owned).to_vec();
    args.extend(cluster.seeds().into_iter().flat_map(|seed| ["--redis-cluster".to_owned(), seed]));
    let instances: Vec<(Process, u16)> =
        (0..3).map(|_| wharf_serve(&args, &[("WHARF_REQUEST_STATE_KEYS", &keys)])).collect();
    let proxy = Nginx::start(&instances.iter().map(|(_, port)| *port).collect::<Vec<_>>());
    round(&mut cluster, proxy.port, Fault::FailedOver).await;
    round(&mut cluster, proxy.port, Fault::Killed).await;
}
