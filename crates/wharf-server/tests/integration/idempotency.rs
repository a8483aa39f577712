//! Tool calls that take effect once: a key claimed before the handler runs answers every
//! repeat with the first call's outcome, in both eras and as tasks; other arguments under the
//! key are refused; a claim whose instance stopped renewing it is of unknown outcome; keys
//! expire.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;
use wharf_server::{
    Args, Claimed, Idempotency, IdempotencyStore, MemoryIdempotencyStore, Server, ToolDef, arguments_fingerprint,
    derived_key,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Payment {
    to: String,
    #[schemars(range(min = 1))]
    amount: u32,
    #[serde(default)]
    wait_ms: u64,
}

/// A server whose `pay` counts its runs and holds each answer `wait_ms`; `policy` for `pay`.
fn server_with(policy: Idempotency, store: Option<Arc<dyn IdempotencyStore>>) -> (Server, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let pay = ToolDef::new("pay", move |Args(payment): Args<Payment>| {
        let run = counted.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if payment.wait_ms > 0 {
                tokio::time::sleep(Duration::from_millis(payment.wait_ms)).await;
            }
            format!("paid {} {} (run {run})", payment.to, payment.amount)
        }
    })
    .description("Pay someone")
    .task_support(wharf_server::TaskSupport::Optional)
    .idempotency(policy);
    let panicking = ToolDef::new("crash", || async {
        panic!("the handler fell over");
        #[allow(unreachable_code)]
        ""
    })
    .description("Panic")
    .idempotency(Idempotency::client_key());
    let mut builder = Server::builder("once", "1").tool(pay).tool(panicking);
    if let Some(store) = store {
        builder = builder.idempotency_store(store);
    }
    (builder.build().unwrap(), runs)
}

fn keyed(arguments: Value, key: &str) -> Value {
    json!({"name": "pay", "arguments": arguments, "_meta": {"wharf/idempotencyKey": key}})
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}"))
}

fn replayed(result: &Value) -> bool {
    result["_meta"]["wharf/idempotentReplay"] == true
}

#[tokio::test]
async fn a_key_runs_once_and_every_repeat_gets_the_first_result_in_a_session() {
    let (server, runs) = server_with(Idempotency::client_key(), None);
    let client = Arc::new(InMemoryClient::latest_session(server).await);
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(listed["tools"][0]["_meta"]["wharf/idempotency"], json!({"key": "client", "ttlSeconds": 86400}));

    // Ten at once with one key: one run, ten equal answers.
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let client = client.clone();
            let call = keyed(json!({"to": "ada", "amount": 5, "wait_ms": 100}), "k1");
            tokio::spawn(async move { client.request("tools/call", call).await.unwrap() })
        })
        .collect();
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "{answers:?}");
    assert!(answers.iter().all(|answer| text(answer) == "paid ada 5 (run 1)"), "{answers:?}");
    assert_eq!(answers.iter().filter(|answer| !replayed(answer)).count(), 1, "{answers:?}");

    // The same arguments written in another order are the same call.
    let again = client.request("tools/call", keyed(json!({"wait_ms": 100, "amount": 5, "to": "ada"}), "k1")).await;
    assert_eq!(text(&again.unwrap()), "paid ada 5 (run 1)");
    // Other arguments under the key: -32602 naming it; nothing runs.
    let other = client.request("tools/call", keyed(json!({"to": "bob", "amount": 5}), "k1")).await.unwrap_err();
    assert_eq!(other.code.0, -32602, "{other:?}");
    assert!(other.message.contains("`k1`"), "{other:?}");
    assert_eq!(other.data, Some(json!({"wharf/idempotencyKey": "k1"})));
    // Without a key, each call runs.
    for n in 2..=3 {
        let plain = client.request("tools/call", json!({"name": "pay", "arguments": {"to": "cy", "amount": 1}})).await;
        assert_eq!(text(&plain.unwrap()), format!("paid cy 1 (run {n})"));
    }
    // A key that is not a string of 1 to 255 bytes is refused.
    for bad in [json!(5), json!(""), json!("x".repeat(256))] {
        let params =
            json!({"name": "pay", "arguments": {"to": "d", "amount": 1}, "_meta": {"wharf/idempotencyKey": bad}});
        assert_eq!(client.request("tools/call", params).await.unwrap_err().code.0, -32602);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn refused_arguments_give_the_key_back_and_a_panic_is_recorded_as_its_error() {
    let (server, runs) = server_with(Idempotency::client_key(), None);
    let client = InMemoryClient::latest_session(server).await;
    // Refused by the schema (amount below 1): a tool error result, and the key is free again.
    let refused = client.request("tools/call", keyed(json!({"to": "ada", "amount": 0}), "k")).await.unwrap();
    assert_eq!(refused["isError"], true, "{refused}");
    let fixed = client.request("tools/call", keyed(json!({"to": "ada", "amount": 1}), "k")).await.unwrap();
    assert_eq!(text(&fixed), "paid ada 1 (run 1)");
    // A panic is the call's outcome: the repeat hears the same error.
    let crash = json!({"name": "crash", "arguments": {}, "_meta": {"wharf/idempotencyKey": "c"}});
    let first = client.request("tools/call", crash.clone()).await.unwrap_err();
    let second = client.request("tools/call", crash).await.unwrap_err();
    assert!(first.message.contains("panicked"), "{first:?}");
    assert_eq!(first, second);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_duplicate_waits_for_the_running_call_or_is_told_to_retry_later() {
    let (server, runs) = server_with(Idempotency::client_key().wait(Duration::from_millis(100)), None);
    let client = InMemoryClient::latest_session(server).await;
    let slow = client.request("tools/call", keyed(json!({"to": "ada", "amount": 1, "wait_ms": 1500}), "slow"));
    let later = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        client.request("tools/call", keyed(json!({"to": "ada", "amount": 1, "wait_ms": 1500}), "slow")).await
    };
    let (slow, later) = tokio::join!(slow, later);
    assert_eq!(text(&slow.unwrap()), "paid ada 1 (run 1)");
    let later = later.unwrap_err();
    assert_eq!(later.code.0, -32000, "{later:?}");
    assert!(later.message.contains("still running"), "{later:?}");
    assert_eq!(
        later.data.as_ref().unwrap()["retryAfterSeconds"],
        10,
        "one lease: by then it ended or its instance died"
    );
    // Once it finished, the key answers.
    let after = client.request("tools/call", keyed(json!({"to": "ada", "amount": 1, "wait_ms": 1500}), "slow")).await;
    assert!(replayed(&after.unwrap()));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn derived_keys_make_the_same_call_once_and_a_lost_claim_is_of_unknown_outcome() {
    let store = Arc::new(MemoryIdempotencyStore::default());
    let (server, runs) = server_with(Idempotency::derived(), Some(store.clone()));
    let client = InMemoryClient::latest_session(server).await;
    let arguments = json!({"to": "ada", "amount": 2});
    let first = client.call_tool("pay", arguments.clone()).await.unwrap();
    let second = client.call_tool("pay", arguments.clone()).await.unwrap();
    assert_eq!(first.content, second.content);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // A call another instance claimed and stopped renewing (its lease is zero): not run.
    let orphan = json!({"to": "bob", "amount": 3});
    let claimed = store
        .claim(
            &derived_key("", "pay", &orphan),
            &arguments_fingerprint("pay", &orphan),
            Duration::ZERO,
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(claimed, Ok(Claimed::Run));
    let unknown = client.request("tools/call", json!({"name": "pay", "arguments": orphan})).await.unwrap_err();
    assert_eq!(unknown.code.0, -32005, "{unknown:?}");
    assert_eq!(unknown.data.as_ref().unwrap()["outcome"], "unknown");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn keys_expire_with_their_ttl() {
    let (server, runs) = server_with(Idempotency::client_key().ttl(Duration::from_secs(1)), None);
    let client = InMemoryClient::latest_session(server).await;
    let call = keyed(json!({"to": "ada", "amount": 1}), "short");
    assert_eq!(text(&client.request("tools/call", call.clone()).await.unwrap()), "paid ada 1 (run 1)");
    assert!(replayed(&client.request("tools/call", call.clone()).await.unwrap()));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(text(&client.request("tools/call", call).await.unwrap()), "paid ada 1 (run 2)");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn stateless_calls_replay_and_a_keyed_task_is_answered_with_the_same_task() {
    let (server, runs) = server_with(Idempotency::client_key(), None);
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})).unwrap();
    let client = InMemoryClient::stateless(server.clone(), capabilities);
    let quick = keyed(json!({"to": "ada", "amount": 1}), "quick");
    let first = client.request("tools/call", quick.clone()).await.unwrap();
    let second = client.request("tools/call", quick).await.unwrap();
    assert_eq!((first["resultType"].as_str(), second["resultType"].as_str()), (Some("complete"), Some("complete")));
    assert_eq!(text(&first), text(&second));
    assert!(!replayed(&first) && replayed(&second), "{second}");
    // A call that waits becomes a task; its repeat gets the same task, not a second run.
    let slow = keyed(json!({"to": "bob", "amount": 1, "wait_ms": 300}), "slow");
    let task = client.request("tools/call", slow.clone()).await.unwrap();
    assert_eq!(task["resultType"], "task", "{task}");
    let again = client.request("tools/call", slow.clone()).await.unwrap();
    assert_eq!((again["resultType"].clone(), again["taskId"].clone()), (json!("task"), task["taskId"].clone()));
    // A client without tasks that repeats the call waits for the task's result.
    let plain = InMemoryClient::stateless(server, ClientCapabilities::default());
    let waited = plain.request("tools/call", slow).await.unwrap();
    assert_eq!(text(&waited), "paid bob 1 (run 2)");
    assert!(replayed(&waited));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_keyed_task_augmented_call_of_2025_11_25_returns_the_existing_task() {
    let (server, runs) = server_with(Idempotency::client_key(), None);
    let client = InMemoryClient::latest_session(server).await;
    let mut call = keyed(json!({"to": "ada", "amount": 1, "wait_ms": 200}), "t");
    call["task"] = json!({"ttl": 60000});
    let first = client.request("tools/call", call.clone()).await.unwrap();
    let second = client.request("tools/call", call).await.unwrap();
    let id = first["task"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {first}"));
    assert_eq!(second["task"]["taskId"], id, "{second}");
    let result = client.request("tasks/result", json!({"taskId": id})).await.unwrap();
    assert_eq!(text(&result), "paid ada 1 (run 1)");
    // The same key without `task`: the task's result, from the record.
    let mut plain = keyed(json!({"to": "ada", "amount": 1, "wait_ms": 200}), "t");
    plain["_meta"]["progressToken"] = json!("p");
    let waited = client.request("tools/call", plain).await.unwrap();
    assert_eq!(text(&waited), "paid ada 1 (run 1)");
    assert!(replayed(&waited));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_structured_result_replays_as_each_revision_sees_it() {
    let tool = ToolDef::new("stamp", || async { wharf_server::Json(json!({"stamped": true})) })
        .description("Stamp")
        .idempotency(Idempotency::client_key());
    let server = Server::builder("once", "1").tool(tool).build().unwrap();
    let stateless = InMemoryClient::stateless(server.clone(), ClientCapabilities::default());
    let call = json!({"name": "stamp", "arguments": {}, "_meta": {"wharf/idempotencyKey": "s"}});
    let first = stateless.request("tools/call", call.clone()).await.unwrap();
    assert_eq!(first["structuredContent"], json!({"stamped": true}));
    let (old, _) =
        InMemoryClient::session(server, ProtocolVersion::V2024_11_05, ClientCapabilities::default()).await.unwrap();
    let replay = old.request("tools/call", call).await.unwrap();
    assert_eq!(replay["structuredContent"], Value::Null, "2024-11-05 has no structured content: {replay}");
    assert_eq!(text(&replay), "{\"stamped\":true}");
    assert!(replayed(&replay));
}
