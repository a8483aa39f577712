//! The client against Wharf's own server running in this process (the test kit's fixture, one
//! of everything), over Streamable HTTP on a loopback port and over stdio, in both eras: every
//! typed call, a tool error and an error code, the server's questions answered by a handler
//! (server-to-client requests in a 2025 session, input requests on 2026-07-28), progress and
//! log notifications, resource updates on a session's GET stream and a 2026-07-28 listen
//! stream, timeouts and dropped requests that stop the handler, and what cannot be reached.
//!
//! stdio: the client's line transport over an in-memory duplex (`Client::connect_stream`), whose
//! other end `wharf_server::serve_connection` serves in this process: the engine every stdio
//! server runs, without a process in between.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use wharf_client::protocol::{
    ClientCapabilities, CompletionArgument, CompletionReference, ContentBlock, CreateMessageParams,
    CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, Era, ErrorCode, ListRootsResult, LoggingLevel,
    OneOrMany, ProtocolVersion, ResourceContents, Role, Root, SamplingContent, ServerNotification, SubscriptionFilter,
    TextContent,
};
use wharf_client::{Answer, Client, ClientHandler, ClientOptions, ErrorKind, RequestOptions, Target};
use wharf_server::{RequestContext, Server, ToolDef};
use wharf_testkit::fixture::{self, Counters};
use wharf_testkit::ports::free_port;

/// How the client reaches the server.
#[derive(Debug, Clone, Copy)]
enum Transport {
    Stdio,
    Http,
}

/// The fixture server, with `touch`, which tells subscribers that `config://app` changed;
/// what its `slow` tool does is counted in `counters`.
fn server(counters: Arc<Counters>) -> Server {
    fixture::builder_with(counters)
        .tool(
            ToolDef::new("touch", |context: RequestContext| async move {
                context.server().notify_resource_updated("config://app");
                "touched"
            })
            .description("Changes config://app"),
        )
        .build()
        .unwrap()
}

/// Serves `server` over `transport` and connects a client with `options`: over Streamable HTTP
/// on a free loopback port, or as newline-delimited JSON on one end of an in-memory duplex.
async fn serve_and_connect(transport: Transport, server: Server, options: ClientOptions) -> Result<Client, String> {
    match transport {
        Transport::Http => {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            tokio::spawn(wharf_http::serve(listener, server).into_future());
            let target = Target::url(format!("http://127.0.0.1:{port}/mcp"));
            Client::connect_with(target, options).await.map_err(|err| err.to_string())
        }
        Transport::Stdio => {
            let (client_end, server_end) = tokio::io::duplex(1 << 16);
            let (server_reader, server_writer) = tokio::io::split(server_end);
            tokio::spawn(wharf_server::serve_connection(server, server_reader, server_writer));
            let (reader, writer) = tokio::io::split(client_end);
            Client::connect_stream(reader, writer, options).await.map_err(|err| err.to_string())
        }
    }
}

/// Answers every question the fixture asks: a form is filled from [`ANSWERS`], the model
/// suggests "a walk", and the root is `file:///work`.
struct Answering;

/// What the person types into each field the fixture asks for.
const ANSWERS: [(&str, &str); 4] = [("name", "Ada"), ("place", "Lisbon"), ("ok", "yes"), ("pin", "1234")];

impl ClientHandler for Answering {
    fn capabilities(&self) -> ClientCapabilities {
        fixture::all_capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        Box::pin(async move {
            let schema = serde_json::to_value(&params.requested_schema).unwrap();
            let fields = schema["properties"].as_object().cloned().unwrap_or_default();
            let content = fields
                .keys()
                .map(|field| {
                    let typed = ANSWERS.iter().find(|(name, _)| name == field).map_or("?", |(_, answer)| answer);
                    (field.clone(), json!(typed))
                })
                .collect();
            Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content), meta: None })
        })
    }

    fn create_message(&self, params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        Box::pin(async move {
            assert!(!params.messages.is_empty());
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: OneOrMany::One(Box::new(SamplingContent::Text(TextContent {
                    text: "a walk".to_owned(),
                    annotations: None,
                    meta: None,
                }))),
                model: "test-model".to_owned(),
                stop_reason: Some("endTurn".to_owned()),
                meta: None,
            })
        })
    }

    fn list_roots(&self) -> Answer<'_, ListRootsResult> {
        Box::pin(async {
            let root = Root { uri: "file:///work".to_owned(), name: None, meta: None };
            Ok(ListRootsResult { roots: vec![root], meta: None })
        })
    }
}

/// Connects to a new fixture server over `transport`, speaking `version` (the newest when
/// `None`); the client and what the server's `slow` tool did.
async fn connect(transport: Transport, version: Option<ProtocolVersion>) -> (Client, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let options = ClientOptions::default().handler(Answering).log_level(LoggingLevel::Debug);
    let options = match version {
        Some(version) => options.protocol_version(version),
        None => options,
    };
    let client = serve_and_connect(transport, server(counters.clone()), options)
        .await
        .unwrap_or_else(|err| panic!("{transport:?} {version:?}: {err}"));
    (client, counters)
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

/// The next notification, waiting at most five seconds.
async fn next(notifications: &mut wharf_client::Notifications) -> ServerNotification {
    tokio::time::timeout(Duration::from_secs(5), notifications.next())
        .await
        .expect("a notification within 5 s")
        .expect("the connection is open")
}

/// Everything the fixture offers, through the typed calls; `label` names the transport and era.
async fn exercise(client: &Client, label: &str) {
    let info = client.server_info().expect("the server names itself");
    assert_eq!((info.name.as_str(), info.version.as_str()), ("fixture", "1.2.3"), "{label}");
    assert_eq!(client.instructions(), Some("Test instructions"), "{label}");

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    for wanted in ["echo", "fails", "rpc_error", "progress", "logs", "ask_name", "plan_trip", "roots", "slow"] {
        assert!(names.contains(&wanted), "{label}: {wanted} missing from {names:?}");
    }
    let echoed = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&echoed.content), "hi", "{label}");
    assert_ne!(echoed.is_error, Some(true), "{label}");

    // A tool's own failure is a result; an error code and an unknown tool are errors.
    let failed = client.call_tool("fails", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true), "{label}");
    assert!(text(&failed.content).contains("the disk is full"), "{label}: {failed:?}");
    let refused = client.call_tool("rpc_error", json!({})).await.unwrap_err();
    assert_eq!((refused.kind(), refused.code()), (ErrorKind::Rpc, Some(ErrorCode(4001))), "{label}: {refused}");
    let unknown = client.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!((unknown.kind(), unknown.code()), (ErrorKind::Rpc, Some(ErrorCode::INVALID_PARAMS)), "{label}");

    // A tool whose arguments the client mirrors into headers (on 2026-07-28 over HTTP).
    let routed = client.call_tool("route", json!({"region": "eu", "shard": 3})).await.unwrap();
    assert_eq!(text(&routed.content), "eu #3", "{label}: {routed:?}");

    // Progress comes before the answer; the repeated 50 is dropped by the server.
    let (progress, mut steps) = mpsc::unbounded_channel();
    let options = RequestOptions::default().progress(progress);
    let done = client.call_tool_with("progress", json!({}), &options).await.unwrap();
    assert_eq!(text(&done.content), "done", "{label}");
    let mut seen = Vec::new();
    while let Ok(step) = steps.try_recv() {
        seen.push(step.progress);
    }
    assert_eq!(seen, [0.0, 50.0, 100.0], "{label}: every progress notification came before the answer");

    // Log messages, at the level the client asked for.
    let mut notifications = client.notifications();
    let logged = client.call_tool("logs", json!({})).await.unwrap();
    assert_eq!(text(&logged.content), "logged", "{label}");
    let mut levels = Vec::new();
    while levels.len() < 2 {
        if let ServerNotification::Message(message) = next(&mut notifications).await {
            levels.push(message.level);
        }
    }
    assert_eq!(levels, [LoggingLevel::Debug, LoggingLevel::Error], "{label}");

    // The server's questions, answered by the handler: a form, two questions at once and one
    // that depends on them (sampling among them), the client's roots.
    let asked = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(text(&asked.content), r#"Accept {"name":"Ada"}"#, "{label}");
    let planned = client.call_tool("plan_trip", json!({})).await.unwrap();
    // On 2026-07-28 the request is sent again with the answers, once per round: three rounds,
    // the handler's own state counting them. A 2025 session asks as it goes, in one.
    let rounds = if client.era() == Era::Stateless { 3 } else { 1 };
    assert_eq!(text(&planned.content), format!("Lisbon|a walk|yes|state {rounds}"), "{label}");
    let roots = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(text(&roots.content), "file:///work", "{label}");

    let prompts = client.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|prompt| prompt.name == "greeting"), "{label}");
    let greeting = client.get_prompt("greeting", json!({"name": "Ada", "place": "Lisbon"})).await.unwrap();
    let rendered = serde_json::to_value(&greeting.messages).unwrap();
    assert_eq!(rendered[0]["content"]["text"], "Hello Ada, welcome to Lisbon!", "{label}");
    let personal = client.get_prompt("personal", json!({})).await.unwrap();
    let rendered = serde_json::to_value(&personal.messages).unwrap();
    assert_eq!(rendered[0]["content"]["text"], "A prompt for Ada", "{label}: the prompt asked who");
    let completed = client
        .complete(
            CompletionReference::Prompt { name: "greeting".to_owned(), title: None },
            CompletionArgument { name: "name".to_owned(), value: "al".to_owned() },
            None,
        )
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["alice", "albert"], "{label}");

    let resources = client.list_resources().await.unwrap();
    assert!(resources.iter().any(|resource| resource.uri == "config://app"), "{label}");
    let templates = client.list_resource_templates().await.unwrap();
    assert!(templates.iter().any(|template| template.uri_template == "users://{id}/profile"), "{label}");
    for (uri, expected) in
        [("config://app", r#"{"a":1}"#), ("users://1/profile", "user 1"), ("vault://secret", "the treasure")]
    {
        let read = client.read_resource(uri).await.unwrap();
        match &read.contents[0] {
            ResourceContents::Text(contents) => assert_eq!(contents.text, expected, "{label}: {uri}"),
            other => panic!("{label}: {uri} is not text: {other:?}"),
        }
    }
    let missing = client.read_resource("users://101/profile").await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::Rpc, "{label}: {missing}");

    let raw = client.request("tools/list", json!({})).await.unwrap();
    assert!(raw["tools"].is_array(), "{label}");

    // A request encoded once and sent many times, as `wharf bench` does: each under its own id.
    let prepared = client.prepare("tools/call", json!({"name": "echo", "arguments": {"message": "again"}})).unwrap();
    let (a, b, c) =
        tokio::join!(client.send_prepared(&prepared), client.send_prepared(&prepared), client.send_prepared(&prepared));
    for answer in [a, b, c] {
        let result: Value = serde_json::from_str(answer.unwrap().get()).unwrap();
        assert_eq!(result["content"][0]["text"], "again", "{label}");
    }
    assert!(client.anomalies().0.is_empty(), "{label}: {:?}", client.anomalies());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_newest_revision_is_chosen_and_everything_works() {
    let (client, _) = connect(Transport::Http, None).await;
    assert_eq!((client.protocol_version(), client.era()), (ProtocolVersion::V2026_07_28, Era::Stateless));
    assert!(client.discover_result().is_some());
    exercise(&client, "http 2026-07-28").await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_2025_session_works_the_same_and_ends_with_delete() {
    let (client, _) = connect(Transport::Http, Some(ProtocolVersion::V2025_11_25)).await;
    assert_eq!((client.protocol_version(), client.era()), (ProtocolVersion::V2025_11_25, Era::Session));
    assert!(client.initialize_result().is_some());
    client.ping().await.unwrap();
    exercise(&client, "http 2025-11-25").await;
    client.close().await;
    let after = client.ping().await.unwrap_err();
    assert!(matches!(after.kind(), ErrorKind::Rpc | ErrorKind::Http | ErrorKind::Closed), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_newest_revision_is_chosen_and_everything_works() {
    let (client, _) = connect(Transport::Stdio, None).await;
    assert_eq!((client.protocol_version(), client.era()), (ProtocolVersion::V2026_07_28, Era::Stateless));
    exercise(&client, "stdio 2026-07-28").await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_2025_session_works_the_same() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18] {
        let (client, _) = connect(Transport::Stdio, Some(version)).await;
        assert_eq!((client.protocol_version(), client.era()), (version, Era::Session));
        client.ping().await.unwrap();
        exercise(&client, &format!("stdio {version}")).await;
        client.close().await;
    }
}

/// Every transport and era the client speaks.
const EVERY_WAY: [(Transport, Option<ProtocolVersion>); 4] = [
    (Transport::Http, None),
    (Transport::Http, Some(ProtocolVersion::V2025_11_25)),
    (Transport::Stdio, None),
    (Transport::Stdio, Some(ProtocolVersion::V2025_11_25)),
];

/// A request past its timeout fails with `Timeout`, and one whose future is dropped is given
/// up: in both cases the server hears of it and stops the handler, and the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_given_up_stops_its_handler_and_the_connection_goes_on() {
    for (transport, version) in EVERY_WAY {
        let label = format!("{transport:?} {version:?}");
        let (client, counters) = connect(transport, version).await;
        let options = RequestOptions::default().timeout(Duration::from_millis(300));
        let late = client.call_tool_with("slow", json!({}), &options).await.unwrap_err();
        assert_eq!(late.kind(), ErrorKind::Timeout, "{label}: {late}");
        fixture::slow_was_stopped(&counters).await;

        let counters_before = counters.slow_dropped.load(Ordering::SeqCst);
        let calling = client.clone();
        let call = tokio::spawn(async move { calling.call_tool("slow", json!({})).await });
        let steps = counters.slow_steps.load(Ordering::SeqCst);
        fixture::slow_has_run(&counters, steps + 3).await;
        call.abort();
        let what = format!("{label}: the dropped request's handler to be stopped");
        fixture::wait_until(|| counters.slow_dropped.load(Ordering::SeqCst) > counters_before, &what).await;

        let echoed = client.call_tool("echo", json!({"message": "still here"})).await.unwrap();
        assert_eq!(text(&echoed.content), "still here", "{label}");
        assert!(client.anomalies().0.is_empty(), "{label}: a late answer is no anomaly: {:?}", client.anomalies());
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_hears_resource_updates_on_its_get_stream() {
    for transport in [Transport::Http, Transport::Stdio] {
        let (client, _) = connect(transport, Some(ProtocolVersion::V2025_11_25)).await;
        let mut notifications = client.notifications();
        client.subscribe("config://app").await.unwrap();
        // Over HTTP the GET stream opens in the background: touch until an update arrives on it.
        let heard = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                client.call_tool("touch", json!({})).await.unwrap();
                let wait = tokio::time::timeout(Duration::from_millis(300), notifications.next()).await;
                if let Ok(Some(ServerNotification::ResourceUpdated(updated))) = wait {
                    return updated.uri;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{transport:?}: no resource update within 10 s"));
        assert_eq!(heard, "config://app");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_a_listen_stream_carries_resource_updates_until_it_is_dropped() {
    for transport in [Transport::Http, Transport::Stdio] {
        let (client, _) = connect(transport, None).await;
        let mut notifications = client.notifications();
        let filter = SubscriptionFilter {
            resource_subscriptions: Some(vec!["config://app".to_owned()]),
            ..SubscriptionFilter::default()
        };
        let listening = client.clone();
        let listen = tokio::spawn(async move { listening.listen(filter).await });
        let acknowledged = next(&mut notifications).await;
        assert!(matches!(acknowledged, ServerNotification::SubscriptionsAcknowledged(_)), "{acknowledged:?}");
        client.call_tool("touch", json!({})).await.unwrap();
        let updated = next(&mut notifications).await;
        assert!(
            matches!(&updated, ServerNotification::ResourceUpdated(params) if params.uri == "config://app"),
            "{transport:?}: {updated:?}"
        );
        listen.abort();
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_reached_is_a_connect_error() {
    let missing = Client::connect(Target::command("/nonexistent/server", Vec::<String>::new())).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::Connect);
    let closed = Client::connect(Target::url(format!("http://127.0.0.1:{}/mcp", free_port()))).await.unwrap_err();
    assert_eq!(closed.kind(), ErrorKind::Connect, "{closed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_fails_the_requests_in_flight() {
    let target = Target::command("sh", ["-c", "read line; exit 3"]);
    let error =
        Client::connect_with(target, ClientOptions::default().probe_timeout(Duration::from_secs(5))).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Closed, "{error}");
}

/// On a stream the caller opened, closing the client ends the server's side of the connection:
/// the server reads the end of its input and `serve_connection` returns.
#[tokio::test]
async fn closing_a_client_on_a_stream_ends_the_servers_connection() {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    let served = tokio::spawn(wharf_server::serve_connection(server(Arc::default()), server_reader, server_writer));
    let (reader, writer) = tokio::io::split(client_end);
    let client = Client::connect_stream(reader, writer, ClientOptions::default()).await.unwrap();
    assert_eq!(client.era(), Era::Stateless, "the newest revision the server speaks");
    let echoed = client.call_tool("echo", json!({"message": "over a duplex"})).await.unwrap();
    assert_eq!(text(&echoed.content), "over a duplex");
    client.close().await;
    let ended = tokio::time::timeout(Duration::from_secs(5), served).await.expect("the server's connection ends");
    ended.unwrap().expect("it ends cleanly");
}
