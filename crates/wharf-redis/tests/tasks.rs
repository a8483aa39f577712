//! Tasks of a fleet: instances sharing a real `redis-server` (started here on a free loopback
//! port, killed at the end) for task records. A task started on one instance is polled,
//! answered (`tasks/update`) and cancelled through another; a task whose instance died fails
//! once its lease runs out. Requests are raw HTTP/1.1 bytes of revision 2026-07-28.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::{SharedRedis, Streamed, request, send, send_with, session_across};
use tokio::net::TcpListener;
use wharf_http::{HttpOptions, serve};
use wharf_protocol::ElicitParams;
use wharf_redis::Redis;
use wharf_server::{RequestContext, Server, TaskSupport, ToolDef};
use wharf_testkit::eventually::{eventually_async, until};

/// How many handlers of `sleepy` were stopped before their time.
static STOPPED: AtomicUsize = AtomicUsize::new(0);

struct CountsStop;

impl Drop for CountsStop {
    fn drop(&mut self) {
        STOPPED.fetch_add(1, Ordering::SeqCst);
    }
}

fn server(redis: &Redis, lease: Duration) -> Server {
    Server::builder("fleet-tasks", "1")
        .task_store(redis.task_store().with_lease(lease))
        .tool(
            ToolDef::new("approve", |context: RequestContext| async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let ask = ElicitParams { message: "Approve?".to_owned(), ..ElicitParams::default() };
                let answer = context.input("ok").elicit(ask).await?;
                Ok::<_, wharf_server::RpcError>(format!("{:?}", answer.action))
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("sleepy", |context: RequestContext| async move {
                let stop = CountsStop;
                tokio::select! {
                    () = context.cancellation().cancelled() => "cancelled".to_owned(),
                    () = tokio::time::sleep(Duration::from_secs(30)) => {
                        std::mem::forget(stop);
                        "slept".to_owned()
                    }
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .build()
        .unwrap()
}

/// An instance on a free loopback port of the current runtime.
async fn instance(redis: &Redis, lease: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // The session store carries what instances tell each other, task changes among them.
    let options = HttpOptions::default().session_store(redis.session_store());
    tokio::spawn(serve(listener, server(redis, lease)).options(options).into_future());
    port
}

/// The body of a 2026-07-28 request from a client that takes part in tasks.
fn modern_body(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}});
    request(1, method, params)
}

/// A 2026-07-28 request with its headers, from a client that takes part in tasks.
async fn modern(port: u16, method: &str, name: Option<&str>, params: Value) -> Value {
    let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    let reply = send_with(port, "POST", &headers, &modern_body(method, params)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.json()
}

async fn start(port: u16, tool: &str) -> String {
    let created = modern(port, "tools/call", Some(tool), json!({"name": tool, "arguments": {}})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn task(port: u16, method: &str, task_id: &str, extra: Value) -> Value {
    let mut params = extra;
    params["taskId"] = json!(task_id);
    modern(port, method, Some(task_id), params).await
}

/// Polls `tasks/get` on `port` until the task has `status` (at most 10 s).
async fn wait_for(port: u16, task_id: &str, status: &str) -> Value {
    eventually_async(&format!("task {task_id} to become {status}"), Duration::from_secs(10), || async {
        let got = task(port, "tasks/get", task_id, json!({})).await;
        (got["result"]["status"] == status).then(|| got["result"].clone())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_on_one_instance_is_polled_answered_and_cancelled_through_another() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("tasks-a");
    let lease = Duration::from_secs(5);
    let (a, b) = (instance(&redis, lease).await, instance(&redis, lease).await);

    // Input asked on A, answered through B; a listener on B hears the task end on A.
    let approving = start(a, "approve").await;
    let waiting = wait_for(b, &approving, "input_required").await;
    let watch = modern_body("subscriptions/listen", json!({"notifications": {"taskIds": [approving]}}));
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "subscriptions/listen")];
    let mut listener = Streamed::post_with(b, &headers, &watch).await;
    listener.until(&approving).await;
    assert_eq!(waiting["inputRequests"]["ok"]["method"], "elicitation/create", "{waiting}");
    let malformed = task(b, "tasks/update", &approving, json!({"inputResponses": {"ok": 7}})).await;
    assert_eq!(malformed["error"]["code"], -32602, "answers are checked where they arrive: {malformed}");
    let update = json!({"inputResponses": {"ok": {"action": "accept", "content": {}}}});
    assert_eq!(task(b, "tasks/update", &approving, update).await["result"]["resultType"], "complete");
    let done = wait_for(b, &approving, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Accept", "{done}");
    let heard = listener.until(r#""status":"completed""#).await;
    assert!(heard.contains("notifications/tasks"), "{heard}");
    drop(listener);
    assert_eq!(wait_for(a, &approving, "completed").await["result"], done["result"]);

    // Running on A, cancelled through B: B says cancelled at once, and A's handler stops.
    let before = STOPPED.load(Ordering::SeqCst);
    let sleeping = start(a, "sleepy").await;
    assert_eq!(task(b, "tasks/cancel", &sleeping, json!({})).await["result"]["resultType"], "complete");
    assert_eq!(task(a, "tasks/get", &sleeping, json!({})).await["result"]["status"], "cancelled");
    until("the handler on A to be stopped", Duration::from_secs(4), || STOPPED.load(Ordering::SeqCst) > before).await;
    assert_eq!(STOPPED.load(Ordering::SeqCst), before + 1, "the handler on A was stopped");
    // It stays cancelled: A does not write over it when its handler ends.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(task(b, "tasks/get", &sleeping, json!({})).await["result"]["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_died_fails_once_its_lease_runs_out() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("tasks-b");
    let lease = Duration::from_millis(600);
    let survivor = instance(&redis, lease).await;

    // The doomed instance runs on a runtime of its own, on a thread of its own, so that it can
    // die with everything it runs, as a killed process would.
    let (port_sender, port) = std::sync::mpsc::channel();
    let (kill, killed) = tokio::sync::oneshot::channel::<()>();
    let doomed_redis = redis.clone();
    let doomed = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        runtime.block_on(async move {
            port_sender.send(instance(&doomed_redis, lease).await).unwrap();
            let _ = killed.await;
        });
        runtime.shutdown_background();
    });
    let doomed_port = port.recv().unwrap();
    let orphan = start(doomed_port, "sleepy").await;
    // Alive, its lease is renewed: the task stays working well past one lease.
    tokio::time::sleep(lease * 2).await;
    assert_eq!(task(survivor, "tasks/get", &orphan, json!({})).await["result"]["status"], "working");

    kill.send(()).unwrap();
    doomed.join().unwrap();
    let failed = wait_for(survivor, &orphan, "failed").await;
    assert!(failed["error"]["message"].as_str().unwrap().contains("stopped"), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_task_on_one_instance_asks_through_the_stream_another_holds_and_hears_back() {
    let redis_server = SharedRedis::start();
    let redis = redis_server.connect("tasks-c");
    let lease = Duration::from_secs(5);
    let (a, b, c) = (instance(&redis, lease).await, instance(&redis, lease).await, instance(&redis, lease).await);
    let id = session_across(a, b, json!({"elicitation": {}})).await;

    // The stream is open on C; the task runs on A, where its handler asks the client.
    let mut standalone = Streamed::get(c, &id).await;
    standalone.until("200 OK").await;
    let call = request(1, "tools/call", json!({"name": "approve", "arguments": {}, "task": {"ttl": 60_000}}));
    let created = send(a, "POST", Some(&id), &call).await;
    let task_id = created.json()["result"]["task"]["taskId"].as_str().expect("a task").to_owned();
    let read = standalone.until("elicitation/create").await.to_owned();
    let asked: Value = read
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|message| message["method"] == "elicitation/create")
        .unwrap();
    assert_eq!(asked["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id.as_str());

    // The client answers through B; the handler on A hears it and the task completes.
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {}}});
    assert_eq!(send(b, "POST", Some(&id), &answer.to_string()).await.status, 202);
    let result = request(2, "tasks/result", json!({"taskId": task_id}));
    let finished = send(c, "POST", Some(&id), &result).await;
    assert_eq!(finished.json()["result"]["content"][0]["text"], "Accept", "{finished:?}");
}
