//! What an upstream asks and says during a request crosses the gateway whatever revision each
//! side speaks: elicitation and sampling (asked together), log messages and completions, for a
//! client in a 2025 session and a 2026-07-28 client, in front of an upstream spoken to in
//! 2026-07-28 and one held in a 2025 session. Every message the clients receive is checked
//! against the official schema of their revision.

use serde_json::{Value, json};
use wharf_client::ClientOptions;
use wharf_gateway::{Gateway, Mount};
use wharf_protocol::{
    ClientCapabilities, Completion, CreateMessageParams, ElicitParams, LoggingLevel, ProtocolVersion, ServerRequest,
};
use wharf_server::testing::InMemoryClient;
use wharf_server::{PromptDef, RequestContext, RpcError, Server, ToolDef};
use wharf_testkit::schemas::assert_valid;

/// An upstream whose `interview` asks for a name (elicitation) and a model's line (sampling)
/// at once, logging before and after, and whose prompt `greet` completes its argument.
fn upstream() -> Server {
    Server::builder("upstream", "1.0.0")
        .tool(ToolDef::new("interview", |context: RequestContext| async move {
            context.log(LoggingLevel::Info, Some("interview"), "asking").await;
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
            let question = ElicitParams {
                message: "Your name?".to_owned(),
                requested_schema: Some(serde_json::from_value(schema).unwrap()),
                ..ElicitParams::default()
            };
            let (name, line) = tokio::join!(
                context.input("name").elicit(question),
                context.input("line").create_message(CreateMessageParams::user_text("Say hi", 20)),
            );
            let name = name?.content.and_then(|content| content.get("name").cloned()).unwrap_or_default();
            let line = serde_json::to_value(line?.content).unwrap_or_default();
            context.log(LoggingLevel::Debug, Some("interview"), "answered").await;
            Ok::<_, RpcError>(format!("{} said {}", name.as_str().unwrap_or_default(), line["text"]))
        }))
        .prompt(
            PromptDef::template("greet", "Hello {who}!")
                .argument("who", "Whom to greet", true)
                .complete_from("who", ["Ada", "Alan", "Grace"]),
        )
        .prompt(PromptDef::template("pick", "Pick {item}").argument("item", "An item", true).complete_counted(
            "item",
            |_| async {
                // A page of a long list, counted by whoever holds the list.
                let values = (0..100).map(|n| format!("item-{n}")).collect();
                Completion { values, total: Some(5000), has_more: Some(true) }
            },
        ))
        .build()
        .unwrap()
}

/// Answers elicitation with a name and sampling with a line, and records what was asked.
fn answers(client: &InMemoryClient, asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    client.on_request(move |request| {
        asked.lock().unwrap().push(request.method().to_owned());
        match request {
            ServerRequest::Elicit(params) => {
                assert_eq!(params.message, "Your name?");
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }
            ServerRequest::CreateMessage(_) => {
                Ok(json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test"}))
            }
            other => panic!("unexpected question {}", other.method()),
        }
    });
}

fn capabilities() -> ClientCapabilities {
    serde_json::from_value(json!({"elicitation": {"form": {}}, "sampling": {}})).unwrap()
}

async fn gateway(upstream_revision: Option<ProtocolVersion>) -> Server {
    let mut mount = Mount::server("up", upstream()).namespace("");
    if let Some(version) = upstream_revision {
        mount = mount.client_options(ClientOptions::default().protocol_version(version));
    }
    Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap()
}

const UPSTREAMS: [Option<ProtocolVersion>; 2] = [None, Some(ProtocolVersion::V2025_11_25)];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_client_is_asked_directly_and_hears_the_upstreams_logs() {
    for revision in UPSTREAMS {
        let label = format!("upstream {revision:?}");
        let (client, _) =
            InMemoryClient::session(gateway(revision).await, ProtocolVersion::V2025_11_25, capabilities())
                .await
                .unwrap();
        let asked = std::sync::Arc::default();
        answers(&client, std::sync::Arc::clone(&asked));
        let result = client.request("tools/call", json!({"name": "interview", "arguments": {}})).await.unwrap();
        assert_eq!(result["content"][0]["text"], "Ada said \"hi\"", "{label}");
        let mut asked = asked.lock().unwrap().clone();
        asked.sort();
        assert_eq!(asked, ["elicitation/create", "sampling/createMessage"], "{label}");

        let logs: Vec<(String, String)> = client
            .received()
            .iter()
            .filter(|message| message["method"] == "notifications/message")
            .map(|message| {
                (message["params"]["level"].as_str().unwrap().to_owned(), message["params"]["data"].to_string())
            })
            .collect();
        // A 2026-07-28 upstream runs the tool once per round: it says "asking" each time.
        let asking = ("info".to_owned(), "\"asking\"".to_owned());
        let answered = ("debug".to_owned(), "\"answered\"".to_owned());
        let rounds = if revision.is_none() { 2 } else { 1 };
        let mut expected = vec![asking; rounds];
        expected.push(answered);
        assert_eq!(logs, expected, "{label}: the upstream's log messages, with their levels");
        // The key the upstream asked under rides along in `_meta`; the client may ignore it.
        let keys: Vec<String> = client
            .received()
            .iter()
            .filter(|message| message["method"] == "elicitation/create")
            .map(|message| message["params"]["_meta"]["wharf/inputKey"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(keys, ["name"], "{label}");

        client.request("logging/setLevel", json!({"level": "info"})).await.unwrap();
        let before = client.received().len();
        answers(&client, std::sync::Arc::default());
        client.request("tools/call", json!({"name": "interview", "arguments": {}})).await.unwrap();
        let levels: Vec<Value> = client.received()[before..]
            .iter()
            .filter(|message| message["method"] == "notifications/message")
            .map(|message| message["params"]["level"].clone())
            .collect();
        assert_eq!(levels, vec![json!("info"); rounds], "{label}: the client's own level decides");

        let completed = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}}),
            )
            .await
            .unwrap();
        assert_eq!(completed["completion"]["values"], json!(["Ada", "Alan"]), "{label}: completed upstream");
        let page = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "pick"}, "argument": {"name": "item", "value": ""}}),
            )
            .await
            .unwrap();
        assert_eq!(page["completion"]["values"].as_array().map(Vec::len), Some(100), "{label}");
        assert_eq!(
            (&page["completion"]["total"], &page["completion"]["hasMore"]),
            (&json!(5000), &json!(true)),
            "{label}: the upstream's count"
        );
        assert_valid(&client, ProtocolVersion::V2025_11_25);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_is_asked_in_rounds_under_the_upstreams_keys() {
    for revision in UPSTREAMS {
        let label = format!("upstream {revision:?}");
        let client = InMemoryClient::stateless(gateway(revision).await, capabilities()).with_log_level("debug");
        let first = client.request("tools/call", json!({"name": "interview", "arguments": {}})).await.unwrap();
        assert_eq!(first["resultType"], "input_required", "{label}");
        let mut keys: Vec<&String> = first["inputRequests"].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["line", "name"], "{label}: both questions in one round, under the upstream's keys");
        assert_eq!(first["inputRequests"]["name"]["method"], "elicitation/create");
        assert!(
            first["inputRequests"]["name"]["params"].get("_meta").is_none(),
            "{label}: the key is the input request's own, not left in `_meta`"
        );
        assert!(first["requestState"].is_string(), "{label}");

        let asked = std::sync::Arc::default();
        answers(&client, std::sync::Arc::clone(&asked));
        let result =
            client.request_resolving_input("tools/call", json!({"name": "interview", "arguments": {}})).await.unwrap();
        assert_eq!(result["content"][0]["text"], "Ada said \"hi\"", "{label}");
        assert_eq!(asked.lock().unwrap().len(), 2, "{label}: each question asked once");
        let logs: Vec<String> = client
            .received()
            .iter()
            .filter(|message| message["method"] == "notifications/message")
            .map(|message| message["params"]["data"].as_str().unwrap().to_owned())
            .collect();
        assert!(
            logs.iter().any(|data| data == "answered"),
            "{label}: log messages of the last round reach the client: {logs:?}"
        );
        assert_valid(&client, ProtocolVersion::V2026_07_28);
    }
}

/// A retry naming an upstream request that no longer waits is refused, clearly: a new call
/// starts afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_whose_parked_request_is_gone_is_refused() {
    let first_gateway = gateway(Some(ProtocolVersion::V2025_11_25)).await;
    let client = InMemoryClient::stateless(first_gateway, capabilities());
    let first = client.request("tools/call", json!({"name": "interview", "arguments": {}})).await.unwrap();
    let state = first["requestState"].clone();
    let responses = json!({
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "line": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test"},
    });
    let retry = json!({"name": "interview", "arguments": {}, "inputResponses": responses, "requestState": state});
    let answered = client.request("tools/call", retry.clone()).await.unwrap();
    assert_eq!(answered["content"][0]["text"], "Ada said \"hi\"");
    // The same retry again: the parked request was taken by the first.
    let refused = client.request("tools/call", retry).await.unwrap_err();
    assert_eq!(refused.code.0, -32602, "{refused:?}");
    assert!(refused.message.contains("no longer waiting"), "{}", refused.message);
}

/// An upstream whose `confirm` runs as a task when it may: it works a moment, asks, and ends.
fn task_upstream() -> Server {
    Server::builder("tasks", "1.0.0")
        .tool(
            ToolDef::new("confirm", |context: RequestContext| async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
                let question = ElicitParams {
                    message: "Go on?".to_owned(),
                    requested_schema: Some(serde_json::from_value(schema).unwrap()),
                    ..ElicitParams::default()
                };
                let answer = context.input("go").elicit(question).await?;
                Ok::<_, RpcError>(format!("went on: {}", answer.content.map(Value::Object).unwrap_or_default()))
            })
            .task_support(wharf_server::TaskSupport::Optional),
        )
        .build()
        .unwrap()
}

/// A tool call that becomes a task upstream is a task on the gateway: its input requests reach
/// the client through `tasks/get`, its answers go on with `tasks/update`, and its result comes
/// with the completed task; whether the upstream has the 2026-07-28 tasks extension or
/// 2025-11-25 tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_upstream_is_a_task_on_the_gateway() {
    for revision in UPSTREAMS {
        let label = format!("upstream {revision:?}");
        let mut mount = Mount::server("up", task_upstream()).namespace("");
        if let Some(version) = revision {
            mount = mount.client_options(ClientOptions::default().protocol_version(version));
        }
        let gateway = Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap();
        let capabilities = serde_json::from_value(json!({
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }))
        .unwrap();
        let client = InMemoryClient::stateless(gateway, capabilities);
        let created = client.request("tools/call", json!({"name": "confirm", "arguments": {}})).await.unwrap();
        assert_eq!(created["resultType"], "task", "{label}: {created}");
        let task_id = created["taskId"].as_str().unwrap().to_owned();
        let mut answered = false;
        let mut last = Value::Null;
        for _ in 0..200 {
            last = client.request("tasks/get", json!({"taskId": task_id})).await.unwrap();
            match last["status"].as_str().unwrap() {
                "input_required" if !answered => {
                    let keys: Vec<&String> = last["inputRequests"].as_object().unwrap().keys().collect();
                    assert_eq!(keys, ["go"], "{label}: the upstream's key");
                    let responses = json!({"go": {"action": "accept", "content": {"ok": true}}});
                    client
                        .request("tasks/update", json!({"taskId": task_id, "inputResponses": responses}))
                        .await
                        .unwrap();
                    answered = true;
                }
                "completed" => break,
                "failed" | "cancelled" => panic!("{label}: {last}"),
                _ => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
        }
        assert!(answered, "{label}: the question reached the client");
        assert_eq!(last["result"]["content"][0]["text"], "went on: {\"ok\":true}", "{label}: {last}");
        assert_valid(&client, ProtocolVersion::V2026_07_28);
    }
}

/// A client's subscription to a mounted resource subscribes the gateway upstream; the
/// upstream's update reaches the client under the gateway's URI: a 2025 session subscribed
/// with `resources/subscribe`, a 2026-07-28 client listening, in front of either upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_resource_update_reaches_the_subscribers() {
    for revision in UPSTREAMS {
        let label = format!("upstream {revision:?}");
        let up = Server::builder("docs", "1.0.0")
            .resource(wharf_server::ResourceDef::text("file:///a.txt", "a", "first"))
            .build()
            .unwrap();
        let mut mount = Mount::server("docs", up.clone());
        if let Some(version) = revision {
            mount = mount.client_options(ClientOptions::default().protocol_version(version));
        }
        let gateway = Gateway::new("gateway", "1.0.0").mount(mount).build().await.unwrap();

        let session = InMemoryClient::latest_session(gateway.clone()).await;
        session.request("resources/subscribe", json!({"uri": "docs+file:///a.txt"})).await.unwrap();
        let listener = InMemoryClient::stateless(gateway, ClientCapabilities::default());
        let filter = json!({"notifications": {"resourceSubscriptions": ["docs+file:///a.txt"]}});
        let _listening =
            listener.start_request(wharf_protocol::RequestId::number(99), "subscriptions/listen", filter).await;
        wharf_testkit::fixture::wait_for(&listener, |message| {
            message["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;

        // Updated until both have heard: the upstream subscription may lag the client's.
        let heard = |client: &InMemoryClient| {
            client.received().iter().any(|message| {
                message["method"] == "notifications/resources/updated"
                    && message["params"]["uri"] == "docs+file:///a.txt"
            })
        };
        wharf_testkit::eventually::eventually_async(&label, std::time::Duration::from_secs(10), || async {
            up.notify_resource_updated("file:///a.txt");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            (heard(&session) && heard(&listener)).then_some(())
        })
        .await;
        assert_valid(&session, ProtocolVersion::V2025_11_25);
        assert_valid(&listener, ProtocolVersion::V2026_07_28);
    }
}
