//! Tasks (2026-07-28 extension): a call that has to wait becomes a task; `tasks/get`,
//! `tasks/update` and `tasks/cancel`; the gate on the extension; notifications on listen
//! streams.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ProtocolVersion, RequestId};
use wharf_server::testing::InMemoryClient;

use wharf_server::ServerOptions;
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::schemas::assert_valid;

fn with_tasks() -> ClientCapabilities {
    serde_json::from_value(json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})).unwrap()
}

fn client() -> (InMemoryClient, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let server = fixture::builder_with(counters.clone()).build().unwrap();
    (InMemoryClient::stateless(server, with_tasks()), counters)
}

async fn get(client: &InMemoryClient, task_id: &str) -> Value {
    client.request("tasks/get", json!({"taskId": task_id})).await.unwrap()
}

/// Polls until the task's status is `status`.
async fn wait_for(client: &InMemoryClient, task_id: &str, status: &str) -> Value {
    let what = format!("task {task_id} to become {status}");
    wharf_testkit::eventually::eventually_async(&what, Duration::from_secs(5), || async {
        let task = get(client, task_id).await;
        (task["status"] == status).then_some(task)
    })
    .await
}

fn is_iso8601(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    text.len() == 24 && text.ends_with('Z') && text.as_bytes()[10] == b'T'
}

#[tokio::test]
async fn a_call_that_has_to_wait_becomes_a_task_and_its_result_is_inlined() {
    let (client, _) = client();
    let quick = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 0}})).await.unwrap();
    assert_eq!(quick["resultType"], "complete", "a handler done at once answers at once");

    let created = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 100}})).await.unwrap();
    assert_eq!(created["resultType"], "task");
    assert!(created.get("task").is_none() && created.get("result").is_none() && created.get("requestState").is_none());
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task_id.len(), 32);
    assert_eq!(created["status"], "working");
    assert!(is_iso8601(&created["createdAt"]) && is_iso8601(&created["lastUpdatedAt"]), "{created}");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    assert_eq!(created["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "fixture");

    // Readable at once, then done with the tool's result inlined.
    assert_eq!(get(&client, &task_id).await["status"], "working");
    let done = wait_for(&client, &task_id, "completed").await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "done after 100 ms");
    assert!(done.get("error").is_none() && done.get("inputRequests").is_none());
    assert_valid(&client, ProtocolVersion::V2026_07_28);
}

#[tokio::test]
async fn without_the_extension_calls_are_direct_and_the_task_methods_refused() {
    let client = InMemoryClient::stateless(fixture::server(), ClientCapabilities::default());
    let direct = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 20}})).await.unwrap();
    assert_eq!(direct["resultType"], "complete");
    assert_eq!(direct["content"][0]["text"], "done after 20 ms");
    let err = client.request("tools/call", json!({"name": "needs_task", "arguments": {}})).await.unwrap_err();
    assert_eq!(err.code.0, -32021);
    assert_eq!(err.data.unwrap()["requiredCapabilities"], json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let err = client.request(method, json!({"taskId": "x", "inputResponses": {}})).await.unwrap_err();
        assert_eq!(err.code.0, -32021, "{method}");
    }
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discovered["capabilities"]["extensions"], json!({"io.modelcontextprotocol/tasks": {}}));
    let (client, _) = self::client();
    for removed in ["tasks/result", "tasks/list"] {
        let err = client.request(removed, json!({"taskId": "x"})).await.unwrap_err();
        assert_eq!(err.code.0, -32601, "{removed} does not exist in 2026-07-28");
    }
    let err = client.request("tasks/get", json!({"taskId": "no-such-task"})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
}

#[tokio::test]
async fn input_asked_during_a_task_waits_for_tasks_update_and_may_come_in_parts() {
    let (client, _) = client();
    let created = client.request("tools/call", json!({"name": "approve", "arguments": {}})).await.unwrap();
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let waiting = wait_for(&client, &task_id, "input_required").await;
    let keys: Vec<&String> = waiting["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["finance", "manager"]);
    assert_eq!(waiting["inputRequests"]["manager"]["method"], "elicitation/create");

    let update =
        |responses: Value| client.request("tasks/update", json!({"taskId": task_id, "inputResponses": responses}));
    let malformed = update(json!({"manager": 7})).await.unwrap_err();
    assert_eq!(malformed.code.0, -32602);
    let ack = update(json!({"manager": {"action": "accept", "content": {"ok": "yes"}}, "stranger": {}})).await.unwrap();
    assert_eq!(ack, json!({"resultType": "complete", "_meta": created["_meta"].clone()}));
    let partly = get(&client, &task_id).await;
    assert_eq!(partly["status"], "input_required");
    assert_eq!(partly["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["finance"]);
    update(json!({"finance": {"action": "decline"}})).await.unwrap();
    let done = wait_for(&client, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "yes and Decline");
}

#[tokio::test]
async fn cancelling_reaches_the_handler_settles_as_cancelled_and_is_idempotent() {
    let (client, counters) = client();
    let created = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 60_000}})).await.unwrap();
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let cancel = json!({"taskId": task_id});
    let ack = client.request("tasks/cancel", cancel.clone()).await.unwrap();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
    let cancelled = get(&client, &task_id).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("result").is_none());
    for _ in 0..100 {
        if counters.cancelled_jobs.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(counters.cancelled_jobs.load(Ordering::SeqCst), 1, "the handler saw its cancellation");
    assert_eq!(client.request("tasks/cancel", cancel).await.unwrap()["resultType"], "complete");
    let err = client.request("tasks/cancel", json!({"taskId": "unknown"})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
}

#[tokio::test]
async fn listeners_hear_of_the_tasks_they_watch() {
    let (client, _) = client();
    let created = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 50}})).await.unwrap();
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let _listening = client
        .start_request(
            RequestId::string("watch"),
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task_id]}}),
        )
        .await;
    let ack = client.next_notification(Duration::from_secs(5)).await.unwrap();
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task_id]));
    let update = client.next_notification(Duration::from_secs(5)).await.unwrap();
    assert_eq!(update["method"], "notifications/tasks");
    assert_eq!(update["params"]["taskId"], task_id.as_str());
    assert_eq!(update["params"]["status"], "completed");
    assert_eq!(update["params"]["result"]["content"][0]["text"], "done after 50 ms");
    assert_eq!(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "watch");
}

async fn session_2025() -> InMemoryClient {
    let (client, init) =
        InMemoryClient::session(fixture::server(), ProtocolVersion::V2025_11_25, ClientCapabilities::default())
            .await
            .unwrap();
    assert_eq!(
        serde_json::to_value(&init.capabilities.tasks).unwrap(),
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    client
}

#[tokio::test]
async fn experimental_tasks_of_2025_11_25_start_at_once_and_deliver_their_result() {
    let client = session_2025().await;
    let tools = client.list_tools().await.unwrap();
    let support = |name: &str| {
        let tool = tools.tools.iter().find(|tool| tool.name == name).unwrap();
        tool.execution.as_ref().and_then(|execution| execution.task_support.clone())
    };
    assert_eq!(support("long_job").as_deref(), Some("optional"));
    assert_eq!(support("needs_task").as_deref(), Some("required"));
    assert_eq!(support("echo"), None);

    let created = client
        .request("tools/call", json!({"name": "long_job", "arguments": {"ms": 50}, "task": {"ttl": 60_000}}))
        .await
        .unwrap();
    let task = &created["task"];
    let task_id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60_000, "the client's shorter ttl wins");
    assert_eq!(task["pollInterval"], 500);
    assert!(task.get("ttlMs").is_none());
    // tasks/result waits for the end, and answers what the call would have.
    let result = client.request("tasks/result", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "done after 50 ms");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id.as_str());
    let done = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(done["status"], "completed");
    // The session heard of the task's changes.
    let mut statuses = Vec::new();
    while let Some(notification) = client.next_notification(Duration::from_millis(200)).await {
        assert_eq!(notification["method"], "notifications/tasks/status");
        assert_eq!(notification["params"]["taskId"], task_id.as_str());
        statuses.push(notification["params"]["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses.last().map(String::as_str), Some("completed"), "{statuses:?}");
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], task_id.as_str());
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 1);
    let err = client.request("tasks/cancel", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(err.code.0, -32602, "a finished task cannot be cancelled in 2025-11-25");
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

/// 2025-11-25: every message about a task carries its id in `_meta`, the handler's requests
/// for input and its log messages included, beside whatever `_meta` they had.
#[tokio::test]
async fn what_a_2025_11_25_task_sends_names_the_task() {
    let capabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
    let (client, _) =
        InMemoryClient::session(fixture::server(), ProtocolVersion::V2025_11_25, capabilities).await.unwrap();
    client.on_request(|_| Ok(json!({"action": "accept", "content": {"ok": "yes"}})));
    let created = client.request("tools/call", json!({"name": "approve", "arguments": {}, "task": {}})).await.unwrap();
    let task_id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let result = client.request("tasks/result", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "yes and yes");

    let received = client.received();
    let about_the_task = |method: &str| -> Vec<Value> {
        received.iter().filter(|message| message["method"] == method).cloned().collect()
    };
    let elicitations = about_the_task("elicitation/create");
    let logs = about_the_task("notifications/message");
    assert_eq!((elicitations.len(), logs.len()), (2, 1), "{received:?}");
    for message in elicitations.iter().chain(&logs) {
        assert_eq!(message["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id.as_str());
    }
    assert_eq!(elicitations[0]["params"]["message"], "Manager approves?");
    assert_eq!(logs[0]["params"]["data"], "asking the approvers");
    // While its questions were out the task was `input_required`, then `working` again.
    let statuses: Vec<Value> = about_the_task("notifications/tasks/status")
        .into_iter()
        .filter(|status| status["params"]["taskId"] == task_id.as_str())
        .map(|status| status["params"]["status"].clone())
        .collect();
    let asked = statuses.iter().position(|status| status == "input_required").unwrap_or(statuses.len());
    assert_eq!(statuses[asked..], [json!("input_required"), json!("working"), json!("completed")], "{statuses:?}");
    // A call that is no task sends nothing of the kind.
    let direct = client.request("tools/call", json!({"name": "approve", "arguments": {}})).await.unwrap();
    assert_eq!(direct["content"][0]["text"], "yes and yes");
    let later: Vec<Value> = client.received().into_iter().skip(received.len()).collect();
    assert!(later.iter().any(|message| message["method"] == "elicitation/create"), "{later:?}");
    assert!(
        later.iter().all(|message| message["params"]["_meta"].get("io.modelcontextprotocol/related-task").is_none())
    );
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn experimental_tasks_follow_each_tools_task_support_and_cancel() {
    let client = session_2025().await;
    let err = client.request("tools/call", json!({"name": "needs_task", "arguments": {}})).await.unwrap_err();
    assert_eq!(err.code.0, -32601);
    let err = client
        .request("tools/call", json!({"name": "echo", "arguments": {"message": "x"}, "task": {}}))
        .await
        .unwrap_err();
    assert_eq!(err.code.0, -32601);
    let err = client.request("tasks/list", json!({"cursor": "bogus"})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);

    let created = client
        .request("tools/call", json!({"name": "long_job", "arguments": {"ms": 60_000}, "task": {}}))
        .await
        .unwrap();
    let task_id = created["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["ttl"], 3_600_000);
    let cancelled = client.request("tasks/cancel", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    let err = client.request("tasks/result", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(err.code.0, -32603);

    // Another session does not see the task.
    let other = session_2025().await;
    let err = other.request("tasks/get", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(err.code.0, -32602);
    assert_eq!(other.request("tasks/list", json!({})).await.unwrap()["tasks"], json!([]));
    assert_valid(&client, ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn a_task_is_stopped_when_it_outlives_its_ttl() {
    let counters = Arc::new(Counters::default());
    let server = fixture::builder_with(counters.clone())
        .options(ServerOptions::default().task_ttl(Some(Duration::from_millis(100))))
        .build()
        .unwrap();
    let client = InMemoryClient::stateless(server, with_tasks());
    let created = client.request("tools/call", json!({"name": "long_job", "arguments": {"ms": 60_000}})).await.unwrap();
    assert_eq!(created["ttlMs"], 100);
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    for _ in 0..200 {
        if counters.cancelled_jobs.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(counters.cancelled_jobs.load(Ordering::SeqCst), 1, "the handler was told to stop");
    let err = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(err.code.0, -32602, "the record is gone with its ttl");
}
