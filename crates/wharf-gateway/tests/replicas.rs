//! Two gateways sharing a `redis-server` (a real one, started here; `scripts/test` installs
//! Debian's) as replicas behind a load balancer, each in front of its own upstream held in a
//! 2025-11-25 session: a 2026-07-28 client's retry that reaches the replica that does not hold
//! its upstream request is carried to the one that does, and what the request does next comes
//! back through it: progress, log messages, the answer, a question still unanswered, and the
//! client's cancellation going the other way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use wharf_client::ClientOptions;
use wharf_gateway::{Gateway, Mount};
use wharf_protocol::{ClientCapabilities, ElicitParams, LoggingLevel, ProtocolVersion, RequestId};
use wharf_redis::Redis;
use wharf_server::testing::InMemoryClient;
use wharf_server::{RequestContext, RpcError, Server, ToolDef};
use wharf_testkit::eventually::until;
use wharf_testkit::redis_server::RedisServer;

fn ask(field: &str) -> ElicitParams {
    let schema = json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]});
    ElicitParams {
        message: format!("Your {field}?"),
        requested_schema: Some(serde_json::from_value(schema).unwrap()),
        ..ElicitParams::default()
    }
}

fn field(answer: Result<wharf_protocol::ElicitResult, RpcError>, field: &str) -> Result<String, RpcError> {
    let content = answer?.content.unwrap_or_default();
    Ok(content.get(field).and_then(Value::as_str).unwrap_or_default().to_owned())
}

/// Sets its flag when dropped: the upstream's tool was stopped.
struct Stopped(Arc<AtomicBool>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// An upstream whose `survey` asks a name and a colour together, then reports progress and
/// logs before it answers; a name of `wait` makes it work until it is stopped.
fn upstream(stopped: Arc<AtomicBool>) -> Server {
    Server::builder("upstream", "1.0.0")
        .tool(ToolDef::new("survey", move |context: RequestContext| {
            let stopped = stopped.clone();
            async move {
                let (name, colour) = tokio::join!(
                    context.input("name").elicit(ask("name")),
                    context.input("colour").elicit(ask("colour"))
                );
                let (name, colour) = (field(name, "name")?, field(colour, "colour")?);
                context.progress(1.0, Some(2.0), Some("answered")).await;
                context.log(LoggingLevel::Info, Some("survey"), "thanks").await;
                if name == "wait" {
                    let _stopped = Stopped(stopped);
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                Ok::<_, RpcError>(format!("{name} likes {colour}"))
            }
        }))
        .build()
        .unwrap()
}

/// A replica: a gateway on `redis`'s bus, sealing `requestState` with the fleet's key.
async fn replica(redis: &Redis, stopped: Arc<AtomicBool>, capabilities: &Value) -> InMemoryClient {
    let mount = Mount::server("up", upstream(stopped))
        .namespace("")
        .client_options(ClientOptions::default().protocol_version(ProtocolVersion::V2025_11_25));
    let builder = Server::builder("gateway", "1.0.0").request_state_key("fleet", &[7; 32]);
    let server = Gateway::with_builder(builder).mount(mount).replicas(redis.bus()).build().await.unwrap();
    let capabilities: ClientCapabilities = serde_json::from_value(capabilities.clone()).unwrap();
    InMemoryClient::stateless(server, capabilities).with_log_level("info")
}

fn survey(state: &Value, answers: Value) -> Value {
    json!({"name": "survey", "arguments": {}, "requestState": state, "inputResponses": answers,
           "_meta": {"progressToken": "survey"}})
}

fn accept(field: &str, value: &str) -> Value {
    json!({"action": "accept", "content": {field: value}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_replica_is_carried_to_the_one_holding_the_upstream_request() {
    let redis_server = RedisServer::start();
    let redis = Redis::connect(&redis_server.url()).unwrap().prefix("replicas");
    // A client with the tasks extension too: the gateway's call may become a task, and is
    // answered as soon as it lacks an input.
    let tasks = json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    for capabilities in [json!({"elicitation": {"form": {}}}), tasks] {
        across_replicas(&redis, &capabilities).await;
    }
}

async fn across_replicas(redis: &Redis, capabilities: &Value) {
    let (holder_stopped, other_stopped) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let holder = replica(redis, holder_stopped.clone(), capabilities).await;
    let other = replica(redis, other_stopped.clone(), capabilities).await;

    let start = json!({"name": "survey", "arguments": {}, "_meta": {"progressToken": "survey"}});
    let first = holder.request("tools/call", start.clone()).await.unwrap();
    assert_eq!(first["resultType"], "input_required", "{first}");
    let mut keys: Vec<&String> = first["inputRequests"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["colour", "name"]);

    // Half the answers, on the other replica: the holder takes the name and asks again for the
    // colour alone.
    let half =
        other.request("tools/call", survey(&first["requestState"], json!({"name": accept("name", "Ada")}))).await;
    let half = half.unwrap();
    assert_eq!(half["resultType"], "input_required", "{half}");
    let keys: Vec<&String> = half["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["colour"], "{half}");

    // The rest, on the other replica again: the upstream's progress and log message come
    // back through it, then the answer.
    let done = other.request("tools/call", survey(&half["requestState"], json!({"colour": accept("colour", "teal")})));
    let done = done.await.unwrap();
    assert_eq!(done["content"][0]["text"], "Ada likes teal", "{done}");
    let received = other.received();
    let progress = received.iter().find(|message| message["method"] == "notifications/progress");
    assert_eq!(progress.map(|message| message["params"]["message"].clone()), Some(json!("answered")), "{received:?}");
    assert!(
        received
            .iter()
            .any(|message| message["method"] == "notifications/message" && message["params"]["data"] == "thanks"),
        "{received:?}"
    );

    // A client that cancels on the other replica stops the upstream request on the holder.
    let first = holder.request("tools/call", start).await.unwrap();
    let answers = json!({"name": accept("name", "wait"), "colour": accept("colour", "red")});
    let id = RequestId::number(99);
    let waiting = other.start_request(id, "tools/call", survey(&first["requestState"], answers)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!holder_stopped.load(Ordering::SeqCst), "the upstream works");
    other.notify("notifications/cancelled", json!({"requestId": 99})).await;
    until("the holder's upstream to stop", Duration::from_secs(10), || holder_stopped.load(Ordering::SeqCst)).await;
    assert!(!other_stopped.load(Ordering::SeqCst), "the other replica's own upstream never ran it");
    drop(waiting);
}
