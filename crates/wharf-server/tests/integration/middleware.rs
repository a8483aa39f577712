//! Middleware: layers in order around every request of both eras, answering themselves or
//! passing on, watching what handlers send; and the built-in rate limit, timeout, concurrency
//! limit and audit log, in memory (the line transport; over HTTP in `wharf-http`'s tests).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ProtocolVersion, RequestId};
use wharf_server::middleware::{Audit, ConcurrencyLimit, Quota, RateKey, RateLimit, Timeout};
use wharf_server::testing::InMemoryClient;
use wharf_server::{McpResponse, RequestContext, RpcError, SessionEndReason, Subject, ToolDef, Transport, layer_fn};
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::layers::{Recorder, SessionEnds, recorded};

/// The text of a tool result's first content block.
pub(crate) fn text_of(result: &wharf_protocol::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

fn with_tasks() -> ClientCapabilities {
    serde_json::from_value(json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})).unwrap()
}

#[tokio::test]
async fn layers_run_in_the_order_added_around_every_request_of_both_eras() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let server = fixture::builder()
        .layer(Recorder { name: "outer", log: log.clone() })
        .layer(Recorder { name: "inner", log: log.clone() })
        .build()
        .unwrap();

    let session = InMemoryClient::latest_session(server.clone()).await;
    assert_eq!(
        recorded(&log),
        [
            "outer before initialize  stateless=false version=2025-11-25 session=true transport=Stream",
            "inner before initialize  stateless=false version=2025-11-25 session=true transport=Stream",
            "inner after ok",
            "outer after ok",
        ]
    );
    let echoed = session.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text_of(&echoed), "hi");
    let failed = session.call_tool("fails", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    let refused = session.request("tools/call", json!({"name": "rpc_error"})).await.unwrap_err();
    assert_eq!(refused.code.0, 4001);
    session.request("ping", json!({})).await.unwrap();
    assert_eq!(
        recorded(&log),
        [
            "outer before tools/call Tool(\"echo\") stateless=false version=2025-11-25 session=true transport=Stream",
            "inner before tools/call Tool(\"echo\") stateless=false version=2025-11-25 session=true transport=Stream",
            "inner after ok",
            "outer after ok",
            "outer before tools/call Tool(\"fails\") stateless=false version=2025-11-25 session=true transport=Stream",
            "inner before tools/call Tool(\"fails\") stateless=false version=2025-11-25 session=true transport=Stream",
            "inner after tool_error",
            "outer after tool_error",
            "outer before tools/call Tool(\"rpc_error\") stateless=false version=2025-11-25 session=true transport=Stream",
            "inner before tools/call Tool(\"rpc_error\") stateless=false version=2025-11-25 session=true transport=Stream",
            "inner after error 4001",
            "outer after error 4001",
            "outer before ping  stateless=false version=2025-11-25 session=true transport=Stream",
            "inner before ping  stateless=false version=2025-11-25 session=true transport=Stream",
            "inner after ok",
            "outer after ok",
        ]
    );

    // A stateless request has no session; its revision is the one its `_meta` names, and a
    // request refused for its `_meta` still passes the layers.
    let stateless = InMemoryClient::stateless(server, ClientCapabilities::default());
    // (The prompt asks for input; what it answers does not matter here.)
    let _ = stateless.request("prompts/get", json!({"name": "personal"})).await;
    let lines = recorded(&log);
    assert_eq!(
        lines[0],
        "outer before prompts/get Prompt(\"personal\") stateless=true version=2026-07-28 session=false transport=Stream"
    );
    stateless
        .send_line(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#)
        .await;
    fixture::wait_until(|| log.lock().unwrap().len() == 4, "the refused request to pass both layers").await;
    assert_eq!(
        recorded(&log),
        [
            "outer before tools/list  stateless=true version=- session=false transport=Stream",
            "inner before tools/list  stateless=true version=- session=false transport=Stream",
            "inner after error -32022",
            "outer after error -32022",
        ]
    );
}

#[tokio::test]
async fn a_layer_answers_itself_or_rewrites_and_the_handler_does_not_run() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let server = fixture::builder()
        .tool(ToolDef::new("counted", move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { "ran" }
        }))
        // Denies `counted` for everyone but "admin"; answers `fortune` itself; passes the rest.
        .layer(layer_fn(|request, next| {
            let admin = request.principal().is_some_and(|principal| principal.as_str() == "admin");
            if request.subject() == Some(Subject::Tool("counted")) && !admin {
                let error = RpcError::new(-32003, "Forbidden: `counted` is for admins");
                return McpResponse::error(error).ready();
            }
            if request.tool_name() == Some("fortune") {
                let result = json!({"content": [{"type": "text", "text": "from the layer"}]});
                return McpResponse::result(&request, &result).ready();
            }
            next.run(request)
        }))
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let denied = client.request("tools/call", json!({"name": "counted"})).await.unwrap_err();
    assert_eq!((denied.code.0, denied.message.as_str()), (-32003, "Forbidden: `counted` is for admins"));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler of a denied call never runs");
    let fortune = client.call_tool("fortune", json!({})).await.unwrap();
    assert_eq!(text_of(&fortune), "from the layer");
    // The rest still reaches the server, which still checks arguments.
    let refused = client.call_tool("echo", json!({"message": 5})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
}

#[tokio::test]
async fn a_layer_that_authenticates_sets_the_principal_handlers_see() {
    let server = fixture::builder()
        .tool(ToolDef::new("whoami", |context: RequestContext| async move {
            context.principal().map(|principal| principal.as_str().to_owned()).unwrap_or_default()
        }))
        .layer(layer_fn(|mut request, next| {
            request.set_principal(wharf_server::Principal::new("layer-user"));
            next.run(request)
        }))
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let whoami = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(text_of(&whoami), "layer-user");
}

#[tokio::test]
async fn layers_see_what_handlers_send_the_client() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let server = fixture::builder().layer(Recorder { name: "watch", log: log.clone() }).build().unwrap();
    let (client, _) =
        InMemoryClient::session(server, ProtocolVersion::V2025_11_25, fixture::all_capabilities()).await.unwrap();
    recorded(&log);
    client
        .request_with_id(
            RequestId::number(70),
            "tools/call",
            json!({"name": "progress", "_meta": {"progressToken": "p"}}),
        )
        .await
        .unwrap();
    let lines = recorded(&log);
    let sent: Vec<&String> = lines.iter().filter(|line| line.contains(" sent ")).collect();
    assert!(!sent.is_empty(), "{lines:?}");
    assert!(sent.iter().all(|line| *line == "watch sent Notification notifications/progress for 70"), "{lines:?}");

    client.on_request(|_| Ok(json!({"action": "accept", "content": {"name": "Ada"}})));
    client.request_with_id(RequestId::number(71), "tools/call", json!({"name": "ask_name"})).await.unwrap();
    let lines = recorded(&log);
    assert!(lines.contains(&"watch sent Request elicitation/create for 71".to_owned()), "{lines:?}");
}

#[tokio::test]
async fn the_rate_limit_refuses_with_a_retry_hint_per_principal_and_tool() {
    let server = fixture::builder()
        .layer(layer_fn(|mut request, next| {
            // The caller's name comes in the arguments here, to have two principals in memory.
            let name = if request.tool_arguments().is_some_and(|arguments| arguments.contains("bob")) {
                "bob"
            } else {
                "alice"
            };
            request.set_principal(wharf_server::Principal::new(name));
            next.run(request)
        }))
        .layer(RateLimit::new(Quota::per_minute(2)).tool("weather", Quota::per_minute(1)))
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    for _ in 0..2 {
        client.call_tool("echo", json!({"message": "alice"})).await.unwrap();
    }
    let refused = client.request("tools/call", json!({"name": "echo", "arguments": {"message": "alice"}})).await;
    let refused = refused.unwrap_err();
    assert_eq!(refused.code.0, -32000);
    assert!(refused.message.starts_with("Rate limit exceeded: calls of tool `echo`"), "{}", refused.message);
    let retry = refused.data.as_ref().unwrap()["retryAfterSeconds"].as_u64().unwrap();
    assert!((1..=30).contains(&retry), "one token of two per minute comes back within 30 s: {retry}");
    // Another principal, and another tool, have buckets of their own.
    client.call_tool("echo", json!({"message": "bob"})).await.unwrap();
    client.call_tool("weather", json!({"message": "alice"})).await.unwrap();
    // A tool's own quota.
    let refused = client.request("tools/call", json!({"name": "weather", "arguments": {"message": "alice"}})).await;
    assert_eq!(refused.unwrap_err().code.0, -32000);
    // Lists are not limited unless asked.
    for _ in 0..5 {
        client.list_tools().await.unwrap();
    }
    // Made-up tool names share one bucket, so they cannot each bring a fresh burst.
    for name in ["made_up_1", "made_up_2"] {
        assert_eq!(client.request("tools/call", json!({"name": name})).await.unwrap_err().code.0, -32602);
    }
    assert_eq!(client.request("tools/call", json!({"name": "made_up_3"})).await.unwrap_err().code.0, -32000);
}

#[tokio::test]
async fn a_rate_limit_on_every_request_keyed_by_session() {
    let server = fixture::builder()
        .layer(RateLimit::new(Quota::per_minute(3)).keyed_by(RateKey::Principal).every_request())
        .build()
        .unwrap();
    let first = InMemoryClient::latest_session(server.clone()).await;
    first.list_tools().await.unwrap();
    first.call_tool("echo", json!({"message": "x"})).await.unwrap();
    first.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(first.list_tools().await.unwrap_err().code.0, -32000);
    first.request("ping", json!({})).await.unwrap();
    // Another connection is another session, with a bucket of its own.
    let second = InMemoryClient::latest_session(server).await;
    second.list_tools().await.unwrap();
}

#[tokio::test]
async fn a_call_past_its_timeout_is_cancelled_and_answered_with_an_error() {
    let counters = Arc::new(Counters::default());
    let seen_cancelled = Arc::new(AtomicUsize::new(0));
    let seen = seen_cancelled.clone();
    let server = fixture::builder_with(counters.clone())
        .tool(ToolDef::new("spawns", move |context: RequestContext| {
            let seen = seen.clone();
            async move {
                // Work the handler started on its own learns of the timeout through the
                // cancellation, as it would of a client's.
                let cancellation = context.cancellation().clone();
                tokio::spawn(async move {
                    cancellation.cancelled().await;
                    seen.fetch_add(1, Ordering::SeqCst);
                });
                std::future::pending::<String>().await
            }
        }))
        .layer(
            Timeout::new(Duration::from_secs(30))
                .tool("slow", Duration::from_millis(100))
                .tool("spawns", Duration::from_millis(50)),
        )
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let started = Instant::now();
    let timed_out = client.request("tools/call", json!({"name": "slow"})).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(timed_out.code.0, -32001);
    assert!(timed_out.message.contains("tool `slow` ran longer than its limit of 0.100 s"), "{}", timed_out.message);
    assert_eq!(timed_out.data.as_ref().unwrap()["timeoutMs"], 100);
    assert!(took >= Duration::from_millis(100) && took < Duration::from_secs(4), "{took:?}");
    fixture::slow_was_stopped(&counters).await;

    assert_eq!(client.request("tools/call", json!({"name": "spawns"})).await.unwrap_err().code.0, -32001);
    fixture::wait_until(|| seen_cancelled.load(Ordering::SeqCst) == 1, "the spawned work to see the cancellation")
        .await;
    // Other tools keep the default limit, which a quick call never reaches.
    client.call_tool("echo", json!({"message": "quick"})).await.unwrap();
}

#[tokio::test]
async fn a_call_that_may_become_a_task_does_so_at_its_timeout_instead_of_failing() {
    let counters = Arc::new(Counters::default());
    let server = fixture::builder_with(counters.clone())
        .layer(Timeout::new(Duration::from_millis(150)).become_task())
        .build()
        .unwrap();
    let client = InMemoryClient::stateless(server, with_tasks());
    // Done within the limit: answered directly (without the layer, a call that waits at all
    // becomes a task at once).
    let quick = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 20}})).await.unwrap();
    assert_eq!(quick["resultType"], "complete", "{quick}");
    assert_eq!(quick["content"][0]["text"], "done after 20 ms");
    // Past the limit: a task, which then completes.
    let started = Instant::now();
    let created = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 600}})).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(150), "the call stayed a call until its limit");
    assert_eq!(created["resultType"], "task", "{created}");
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let mut status = Value::Null;
    for _ in 0..300 {
        let task = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
        status = task["status"].clone();
        if status == "completed" {
            assert_eq!(task["result"]["content"][0]["text"], "done after 600 ms");
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, "completed");
    // A tool that never runs as a task still times out.
    let timed_out = client.request("tools/call", json!({"name": "slow"})).await.unwrap_err();
    assert_eq!(timed_out.code.0, -32001);
    fixture::slow_was_stopped(&counters).await;
}

/// A tool that records how many of its calls run at once.
fn gate(running: Arc<AtomicUsize>, most: Arc<AtomicUsize>) -> ToolDef {
    ToolDef::new("gate", move || {
        let (running, most) = (running.clone(), most.clone());
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(40)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            "through"
        }
    })
}

#[tokio::test]
async fn the_concurrency_limit_queues_calls_or_refuses_them() {
    let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let server = fixture::builder()
        .tool(gate(running.clone(), most.clone()))
        .layer(ConcurrencyLimit::per_tool(8).tool("gate", 2))
        .build()
        .unwrap();
    let client = Arc::new(InMemoryClient::latest_session(server).await);
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool("gate", json!({})).await })
        })
        .collect();
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    assert!(answers.iter().all(|answer| text_of(answer.as_ref().unwrap()) == "through"));
    assert_eq!(most.load(Ordering::SeqCst), 2, "never more than two calls at once");

    let counters = Arc::new(Counters::default());
    let server = fixture::builder_with(counters.clone())
        .layer(ConcurrencyLimit::only_named().tool("slow", 1).reject_when_busy())
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let first = client.start_request(RequestId::number(80), "tools/call", json!({"name": "slow"})).await;
    fixture::slow_has_run(&counters, 1).await;
    let refused = client.request("tools/call", json!({"name": "slow"})).await.unwrap_err();
    assert_eq!(refused.code.0, -32000);
    assert!(refused.message.contains("tool `slow` already runs 1 calls at once"), "{}", refused.message);
    client.call_tool("echo", json!({"message": "unlimited"})).await.unwrap();
    client.notify("notifications/cancelled", json!({"requestId": 80})).await;
    fixture::slow_was_stopped(&counters).await;
    drop(first);
    // The cancelled call's permit came back: another call runs.
    let steps = counters.slow_steps.load(Ordering::SeqCst);
    let again = client.start_request(RequestId::number(81), "tools/call", json!({"name": "slow"})).await;
    fixture::slow_has_run(&counters, steps + 2).await;
    client.notify("notifications/cancelled", json!({"requestId": 81})).await;
    drop(again);
}

async fn audited(audit: Audit) -> Vec<String> {
    let (captured, _default) = wharf_testkit::logs::capture_logs();
    let server = fixture::builder().layer(audit).build().unwrap();
    let client = InMemoryClient::latest_session(server).await;
    client.call_tool("echo", json!({"message": "the secret word"})).await.unwrap();
    client.call_tool("fails", json!({})).await.unwrap();
    client.request("tools/call", json!({"name": "nope"})).await.unwrap_err();
    client.list_tools().await.unwrap();
    // A call the client cancels leaves a record too.
    let slow = client.start_request(RequestId::number(500), "tools/call", json!({"name": "slow"})).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    client.notify("notifications/cancelled", json!({"requestId": 500})).await;
    let cancelled = || captured.text().contains("outcome=\"cancelled\"");
    fixture::wait_until(cancelled, "the cancelled call's audit record").await;
    drop(slow);
    let text = String::from_utf8(captured.text().into_bytes()).unwrap();
    text.lines().filter(|line| line.contains("wharf::audit")).map(str::to_owned).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn the_audit_log_names_who_called_what_and_how_it_ended_but_not_the_arguments() {
    let lines = audited(Audit::new()).await;
    assert_eq!(lines.len(), 5, "initialize and four calls; the list is not audited: {lines:#?}");
    assert!(lines[0].contains("method=\"initialize\"") && lines[0].contains("outcome=\"ok\""), "{}", lines[0]);
    assert!(lines[1].contains("method=\"tools/call\" target=\"echo\""), "{}", lines[1]);
    assert!(lines[1].contains("outcome=\"ok\"") && lines[1].contains("micros="), "{}", lines[1]);
    assert!(lines[1].contains("session=\"conn-") && lines[1].contains("transport=Stream"), "{}", lines[1]);
    assert!(lines.iter().all(|line| !line.contains("secret")), "{lines:#?}");
    assert!(lines[2].contains("target=\"fails\"") && lines[2].contains("outcome=\"tool_error\""), "{}", lines[2]);
    assert!(lines[3].contains("outcome=\"error\" code=-32602"), "{}", lines[3]);
    assert!(lines[4].contains("target=\"slow\"") && lines[4].contains("outcome=\"cancelled\""), "{}", lines[4]);

    let lines = audited(Audit::new().with_arguments().every_request()).await;
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[1].contains(r#"arguments="{\"message\":\"the secret word\"}""#), "{}", lines[1]);
    assert!(lines[4].contains("method=\"tools/list\""), "{}", lines[4]);
}

#[tokio::test]
async fn a_panicking_layer_is_answered_as_an_internal_error_and_the_connection_lives_on() {
    let server = fixture::builder()
        .layer(layer_fn(|request, next| {
            if request.tool_name() == Some("fails") {
                panic!("the layer broke");
            }
            next.run(request)
        }))
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let broken = client.request("tools/call", json!({"name": "fails"})).await.unwrap_err();
    assert_eq!(broken.code.0, -32603);
    assert!(broken.message.contains("the layer broke"), "{}", broken.message);
    client.call_tool("echo", json!({"message": "still here"})).await.unwrap();
}

#[tokio::test]
async fn a_call_kept_a_call_by_the_timeout_answers_its_request_for_input_at_once() {
    let server = fixture::builder()
        .tool(
            ToolDef::new("asks_while_waiting", |context: RequestContext| async move {
                let (answer, ()) = tokio::join!(
                    context.input("name").elicit(fixture::ask_for("Who?", "name")),
                    tokio::time::sleep(Duration::from_secs(20)),
                );
                answer.map(|_| "answered")
            })
            .task_support(wharf_server::TaskSupport::Optional),
        )
        .layer(Timeout::new(Duration::from_secs(30)).become_task())
        .build()
        .unwrap();
    let client = InMemoryClient::stateless(server, with_tasks());
    let started = Instant::now();
    let asked = client.request("tools/call", json!({"name": "asks_while_waiting", "arguments": {}})).await.unwrap();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert!(started.elapsed() < Duration::from_secs(5), "not after the 30 s limit: {:?}", started.elapsed());
}

/// A stream's session ends when the client closes it, once, with the negotiated revision and
/// how long it lasted; a connection that only made stateless requests had no session to end.
#[tokio::test]
async fn layers_hear_once_that_a_stream_session_ended() {
    let ends = SessionEnds::default();
    let server = fixture::builder().layer(ends.clone()).build().unwrap();
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::V2025_06_18, ClientCapabilities::default())
            .await
            .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert!(ends.take().is_empty(), "the session is still open");
    client.close().await.unwrap();
    let ended = ends.take();
    assert_eq!(ended.len(), 1, "{ended:?}");
    let (id, reason, version, transport, duration) = &ended[0];
    assert!(!id.is_empty());
    assert_eq!(*reason, SessionEndReason::Closed);
    assert_eq!(*version, ProtocolVersion::V2025_06_18);
    assert_eq!(*transport, Transport::Stream);
    assert!(*duration >= Duration::from_millis(20) && *duration < Duration::from_secs(30), "{duration:?}");

    let stateless = InMemoryClient::stateless(server, ClientCapabilities::default());
    stateless.call_tool("echo", json!({"message": "no session"})).await.unwrap();
    stateless.close().await.unwrap();
    assert!(ends.take().is_empty(), "stateless requests open no session");
}
