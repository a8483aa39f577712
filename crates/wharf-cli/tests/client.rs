//! The client crate against the real `wharf serve`, as a process on stdio and over Streamable
//! HTTP on a loopback port, in both eras: every typed call, the server's questions answered by
//! a handler (server-to-client requests in a session, input requests on 2026-07-28), progress,
//! notifications and closing. What needs no binary (an in-process server: timeouts, GET and
//! listen streams, a target that cannot be reached) is in wharf-client's own tests.

use serde_json::json;
use tokio::sync::mpsc;
use wharf_client::protocol::{
    ClientCapabilities, CompletionArgument, CompletionReference, ContentBlock, CreateMessageParams,
    CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ElicitationCapability, Era, ErrorCode, OneOrMany,
    ProtocolVersion, ResourceContents, Role, SamplingCapability, SamplingContent, TextContent,
};
use wharf_client::{Answer, Client, ClientHandler, ClientOptions, ErrorKind, RequestOptions, StderrMode, Target};

mod support;
use support::Serving;

/// Answers elicitation with the name "Ada" and sampling with a fixed message.
struct Answering;

impl ClientHandler for Answering {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: Some(ElicitationCapability::default()),
            sampling: Some(SamplingCapability::default()),
            ..ClientCapabilities::default()
        }
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        Box::pin(async move {
            assert_eq!(params.message, "What is your name?");
            let content = json!({"name": "Ada"}).as_object().cloned();
            Ok(ElicitResult { action: ElicitAction::Accept, content, meta: None })
        })
    }

    fn create_message(&self, params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        Box::pin(async move {
            assert!(!params.messages.is_empty());
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: OneOrMany::One(Box::new(SamplingContent::Text(TextContent {
                    text: "It is short.".to_owned(),
                    annotations: None,
                    meta: None,
                }))),
                model: "test-model".to_owned(),
                stop_reason: Some("endTurn".to_owned()),
                meta: None,
            })
        })
    }
}

fn stdio() -> Target {
    Target::command(env!("CARGO_BIN_EXE_wharf"), ["serve"])
}

fn http_server() -> (Serving, Target) {
    let serving = Serving::start("127.0.0.1:0", &[], "warn");
    let url = format!("http://127.0.0.1:{}/mcp", serving.port);
    (serving, Target::url(url))
}

fn options(version: Option<ProtocolVersion>) -> ClientOptions {
    let options = ClientOptions::default().handler(Answering).stderr(StderrMode::Capture);
    match version {
        Some(version) => options.protocol_version(version),
        None => options,
    }
}

fn text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// Everything the demo offers, through the typed calls.
async fn exercise(client: &Client) {
    assert_eq!(client.server_info().map(|info| info.name).as_deref(), Some("wharf-demo"));
    assert!(client.instructions().is_some_and(|text| text.contains("echo")));

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    for wanted in ["echo", "calculator", "countdown", "greet_interactively", "summarize"] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
    let echoed = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&echoed.content), "hi");
    assert_ne!(echoed.is_error, Some(true));

    let divided = client.call_tool("calculator", json!({"operation": "divide", "a": 1, "b": 0})).await.unwrap();
    assert_eq!(divided.is_error, Some(true));
    assert!(text(&divided.content).contains("Division by zero"));

    let unknown = client.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::Rpc);
    assert_eq!(unknown.code(), Some(ErrorCode::INVALID_PARAMS));

    let (progress, mut steps) = mpsc::unbounded_channel();
    let counted = client
        .call_tool_with("countdown", json!({"steps": 3}), &RequestOptions::default().progress(progress))
        .await
        .unwrap();
    assert_eq!(text(&counted.content), "Counted down 3 steps");
    let mut seen = Vec::new();
    while let Ok(step) = steps.try_recv() {
        seen.push(step.progress);
    }
    assert_eq!(seen, [1.0, 2.0, 3.0], "every progress notification came before the answer");

    let greeted = client.call_tool("greet_interactively", json!({})).await.unwrap();
    assert_eq!(text(&greeted.content), "Hello, Ada!");
    let summary = client.call_tool("summarize", json!({"text": "a long text"})).await.unwrap();
    assert_eq!(text(&summary.content), "Summary from test-model: It is short.");

    let prompts = client.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|prompt| prompt.name == "code_review"));
    let rendered = client.get_prompt("code_review", json!({"language": "rust", "code": "fn main() {}"})).await.unwrap();
    assert!(serde_json::to_string(&rendered.messages).unwrap().contains("fn main() {}"));
    let completed = client
        .complete(
            CompletionReference::Prompt { name: "code_review".to_owned(), title: None },
            CompletionArgument { name: "language".to_owned(), value: "ru".to_owned() },
            None,
        )
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["rust"]);

    let resources = client.list_resources().await.unwrap();
    assert!(resources.iter().any(|resource| resource.uri == "config://app"));
    let templates = client.list_resource_templates().await.unwrap();
    assert!(templates.iter().any(|template| template.uri_template == "users://{id}/profile"));
    let profile = client.read_resource("users://1/profile").await.unwrap();
    match &profile.contents[0] {
        ResourceContents::Text(contents) => assert!(contents.text.contains("Ada Lovelace")),
        other => panic!("not text: {other:?}"),
    }
    let missing = client.read_resource("users://9/profile").await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::Rpc);

    let raw = client.request("tools/list", json!({})).await.unwrap();
    assert!(raw["tools"].is_array());

    // A request encoded once and sent many times, as `wharf bench` does: each under its own id.
    let prepared = client.prepare("tools/call", json!({"name": "echo", "arguments": {"message": "again"}})).unwrap();
    let answers = futures_join(client, &prepared).await;
    for answer in answers {
        let result: serde_json::Value = serde_json::from_str(answer.get()).unwrap();
        assert_eq!(result["content"][0]["text"], "again");
    }
    assert!(client.anomalies().0.is_empty(), "{:?}", client.anomalies());
}

/// Three prepared calls in flight at once.
async fn futures_join(
    client: &Client,
    prepared: &wharf_client::PreparedRequest,
) -> Vec<Box<serde_json::value::RawValue>> {
    let (a, b, c) =
        tokio::join!(client.send_prepared(prepared), client.send_prepared(prepared), client.send_prepared(prepared));
    vec![a.unwrap(), b.unwrap(), c.unwrap()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_newest_revision_is_chosen_and_everything_works() {
    let client = Client::connect_with(stdio(), options(None)).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.era(), Era::Stateless);
    exercise(&client).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_2025_session_works_the_same() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18] {
        let client = Client::connect_with(stdio(), options(Some(version))).await.unwrap();
        assert_eq!(client.protocol_version(), version);
        assert!(client.initialize_result().is_some());
        client.ping().await.unwrap();
        exercise(&client).await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_newest_revision_is_chosen_and_everything_works() {
    let (_server, target) = http_server();
    let client = Client::connect_with(target, options(None)).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    exercise(&client).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_2025_session_works_the_same_and_ends_with_delete() {
    let (_server, target) = http_server();
    let client = Client::connect_with(target, options(Some(ProtocolVersion::V2025_11_25))).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    exercise(&client).await;
    client.close().await;
    let after = client.ping().await.unwrap_err();
    assert!(matches!(after.kind(), ErrorKind::Rpc | ErrorKind::Http | ErrorKind::Closed), "{after}");
}
