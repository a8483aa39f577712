//! A server with one of everything, as the engine's and the transports' integration tests use
//! it: tools that echo, stream, wait, ask the user and fail; prompts; resources and templates.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use wharf_protocol::{ClientCapabilities, ElicitParams, LoggingLevel, ProtocolVersion, Role};
use wharf_server::testing::InMemoryClient;
use wharf_server::{
    Args, Json, PromptDef, RequestContext, ResourceDef, RpcError, Server, ServerBuilder, State, TemplateDef, ToolDef,
    content,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message.
    message: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ForecastArgs {
    /// Where.
    #[schemars(length(min = 1, max = 100))]
    location: String,
    /// How many days.
    #[serde(default = "seven")]
    #[schemars(range(min = 1, max = 14))]
    days: u32,
}

fn seven() -> u32 {
    7
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Day {
    day: u32,
    high: i32,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    location: String,
    temperature: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RouteArgs {
    /// Where to run.
    region: String,
    /// Which shard; mirrored into `Mcp-Param-Shard` by the type itself.
    #[schemars(extend("x-mcp-header" = "Shard"))]
    shard: Option<i64>,
}

/// Counts how many steps `slow` has taken, and how often its work was dropped before it
/// finished, so tests can see that cancellation stopped it.
#[derive(Default, Debug)]
pub struct Counters {
    /// Steps `slow` has taken.
    pub slow_steps: AtomicUsize,
    /// `slow` calls whose future was dropped unfinished: stopped for good.
    pub slow_dropped: AtomicUsize,
    /// Task handlers that saw their cancellation.
    pub cancelled_jobs: AtomicUsize,
}

/// Counts a `slow` call in `slow_dropped` when dropped while still marked unfinished.
struct DroppedUnfinished(Arc<Counters>, bool);

impl Drop for DroppedUnfinished {
    fn drop(&mut self) {
        if self.1 {
            self.0.slow_dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Waits until `slow` has taken `steps` steps.
pub async fn slow_has_run(counters: &Counters, steps: usize) {
    wait_until(|| counters.slow_steps.load(Ordering::SeqCst) >= steps, "slow to take its steps").await;
}

/// Waits until a `slow` call's work was dropped unfinished: the handler can do nothing more.
pub async fn slow_was_stopped(counters: &Counters) {
    wait_until(|| counters.slow_dropped.load(Ordering::SeqCst) >= 1, "the slow handler to be dropped").await;
    assert!(counters.slow_steps.load(Ordering::SeqCst) < 500, "the slow handler ran to its end");
}

/// Waits (at most five seconds) until `done` is true, then fails saying what did not happen.
pub async fn wait_until(done: impl Fn() -> bool, what: &str) {
    crate::eventually::until(what, Duration::from_secs(5), done).await;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct JobArgs {
    /// How long the job takes, in milliseconds.
    ms: u64,
}

/// A form elicitation of one string field.
pub fn ask_for(message: &str, field: &str) -> ElicitParams {
    ElicitParams {
        message: message.to_owned(),
        requested_schema: Some(
            serde_json::from_value(
                json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
            )
            .unwrap(),
        ),
        ..ElicitParams::default()
    }
}

/// The accepted answer's `field`, or what the user did instead.
fn answer_text(answer: &wharf_protocol::ElicitResult, field: &str) -> String {
    answer
        .content
        .as_ref()
        .and_then(|content| content.get(field))
        .and_then(|value| value.as_str())
        .map_or_else(|| format!("{:?}", answer.action), str::to_owned)
}

/// Shared state for the `State<Greeting>` extractor.
#[derive(Debug)]
pub struct Greeting(pub &'static str);

/// The fixture server's builder, to add to before building.
pub fn builder() -> ServerBuilder {
    builder_with(Arc::default())
}

/// [`builder`], counting what `slow` and the jobs do in `counters`.
pub fn builder_with(counters: Arc<Counters>) -> ServerBuilder {
    Server::builder("fixture", "1.2.3")
        .title("Fixture server")
        .description("Everything at once")
        .icon(wharf_protocol::Icon { src: "data:image/png;base64,AA==".to_owned(), ..Default::default() })
        .instructions("Test instructions")
        .state(Greeting("Howdy"))
        .tool(ToolDef::new("echo", |Args(args): Args<EchoArgs>| async move { args.message }).description("Echo"))
        .tool(
            ToolDef::new("forecast", |Args(args): Args<ForecastArgs>| async move {
                let base = if args.location.is_empty() { 0 } else { 20 };
                let days: Vec<Day> = (1..=args.days).map(|day| Day { day, high: base + day as i32 }).collect();
                Json(days)
            })
            .description("A forecast as an array")
            .output::<Vec<Day>>(),
        )
        .tool(
            ToolDef::new("weather", |Args(args): Args<EchoArgs>| async move {
                Json(Weather { location: args.message, temperature: 21.5 })
            })
            .description("Weather as an object")
            .title("Weather")
            .icon(wharf_protocol::Icon { src: "https://example.com/w.png".to_owned(), ..Default::default() })
            .output::<Weather>(),
        )
        .tool(
            ToolDef::new("everything", || async {
                vec![
                    content::text("text"),
                    content::image(&[0x89, b'P', b'N', b'G'], "image/png"),
                    content::audio(&[1, 2, 3], "audio/wav"),
                    content::resource_link("config://app", "config"),
                    content::embedded_text("memo://1", Some("text/plain"), "memo"),
                    content::embedded_blob("blob://1", None, &[0, 1, 2]),
                ]
            })
            .description("Every content type"),
        )
        .tool(ToolDef::new("fails", || async { Err::<String, _>("the disk is full") }).description("Always fails"))
        .tool(
            ToolDef::new("rpc_error", || async { Err::<String, _>(RpcError::new(4001, "quota exceeded")) })
                .description("Answers with an application error code"),
        )
        .tool(
            ToolDef::new("greet", |State(greeting): State<Greeting>, Args(args): Args<EchoArgs>| async move {
                format!("{} {}", greeting.0, args.message)
            })
            .description("Greets with shared state"),
        )
        .tool(ToolDef::new("panics", || async { panic!("boom") as String }).description("Panics"))
        .tool(
            ToolDef::new("traced", || async {
                let mut result = wharf_protocol::CallToolResult::text("traced");
                result.meta = Some(serde_json::Map::from_iter([("trace".to_owned(), json!("abc"))]));
                result
            })
            .description("Sets result `_meta` of its own"),
        )
        .tool({
            let counters = counters.clone();
            ToolDef::new("slow", move || {
                let counters = counters.clone();
                async move {
                    let mut unfinished = DroppedUnfinished(counters.clone(), true);
                    for _ in 0..500 {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        counters.slow_steps.fetch_add(1, Ordering::SeqCst);
                    }
                    unfinished.1 = false;
                    "finished"
                }
            })
            .description("Runs for five seconds unless cancelled")
        })
        .tool(
            ToolDef::new("progress", |context: RequestContext| async move {
                for step in [0.0, 50.0, 50.0, 100.0] {
                    context.progress(step, Some(100.0), None).await;
                }
                "done"
            })
            .description("Reports progress 0, 50, 100 (and a repeated 50 that must be dropped)"),
        )
        .tool(
            ToolDef::new("reconnects", |context: RequestContext| async move {
                context.log(LoggingLevel::Info, None, "before the stream closes").await;
                context.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(50)).await;
                context.log(LoggingLevel::Info, None, "after the stream closed").await;
                "finished after the stream closed"
            })
            .description("Closes its SSE stream early (SSE polling) and finishes later"),
        )
        .tool(
            ToolDef::new("logs", |context: RequestContext| async move {
                context.log(LoggingLevel::Debug, None, "debug message").await;
                context.log(LoggingLevel::Error, Some("fixture"), json!({"detail": "error message"})).await;
                "logged"
            })
            .description("Logs at debug and error"),
        )
        .tool(
            ToolDef::new("ask_name", |context: RequestContext| async move {
                let answer = context
                    .elicit(ElicitParams {
                        message: "Name?".to_owned(),
                        requested_schema: Some(
                            serde_json::from_value(
                                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                            )
                            .unwrap(),
                        ),
                        ..ElicitParams::default()
                    })
                    .await?;
                Ok::<_, RpcError>(format!("{:?} {}", answer.action, json!(answer.content)))
            })
            .description("Elicits a name"),
        )
        .tool(
            ToolDef::new("route", |Args(args): Args<RouteArgs>| async move {
                format!("{} #{}", args.region, args.shard.unwrap_or(0))
            })
            .mirror_to_header("region", "Region")
            .description("Routes by region and shard, which clients mirror into headers"),
        )
        .tool({
            let counters = counters.clone();
            ToolDef::new("long_job", move |context: RequestContext, Args(args): Args<JobArgs>| {
                let counters = counters.clone();
                async move {
                    if args.ms > 0 {
                        tokio::select! {
                            () = tokio::time::sleep(Duration::from_millis(args.ms)) => {}
                            () = context.cancellation().cancelled() => {
                                counters.cancelled_jobs.fetch_add(1, Ordering::SeqCst);
                                // Cleaning up takes a moment; the task is stopped meanwhile.
                                std::future::pending::<()>().await;
                            }
                        }
                    }
                    format!("done after {} ms", args.ms)
                }
            })
            .task_support(wharf_server::TaskSupport::Optional)
            .description("Works for a while; a task for clients that have them")
        })
        .tool(
            ToolDef::new("approve", |context: RequestContext| async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                context.log(LoggingLevel::Info, Some("approve"), "asking the approvers").await;
                let (first, second) = tokio::join!(
                    context.input("manager").elicit(ask_for("Manager approves?", "ok")),
                    context.input("finance").elicit(ask_for("Finance approves?", "ok")),
                );
                Ok::<_, RpcError>(format!("{} and {}", answer_text(&first?, "ok"), answer_text(&second?, "ok")))
            })
            .task_support(wharf_server::TaskSupport::Optional)
            .description("Asks two approvers while running as a task"),
        )
        .tool(
            ToolDef::new("needs_task", || async { "ran" })
                .task_support(wharf_server::TaskSupport::Required)
                .description("Only ever runs as a task"),
        )
        .tool(
            ToolDef::new("sign_in", |context: RequestContext| async move {
                let params = ElicitParams {
                    mode: Some("url".to_owned()),
                    message: "Sign in to the calendar".to_owned(),
                    url: Some("https://auth.example.com/start?flow=flow-1".to_owned()),
                    elicitation_id: Some("flow-1".to_owned()),
                    ..ElicitParams::default()
                };
                let answer = context.elicit(params).await?;
                // Here the out-of-band flow would be awaited; it finishes at once.
                let told = context.complete_url_elicitation("flow-1").await;
                Ok::<_, RpcError>(format!("{:?}, completion sent: {told}", answer.action))
            })
            .description("Sends the user to a URL to sign in"),
        )
        .tool(
            ToolDef::new("calendar", |context: RequestContext| async move {
                let sign_in = ElicitParams {
                    mode: Some("url".to_owned()),
                    message: "Sign in first".to_owned(),
                    url: Some("https://auth.example.com/start".to_owned()),
                    ..ElicitParams::default()
                };
                Err::<String, _>(context.url_elicitation_required(vec![sign_in]))
            })
            .description("Needs a sign-in the user has not done"),
        )
        .tool(
            ToolDef::new("plan_trip", |context: RequestContext| async move {
                // Round one asks two things at once; round two asks for a confirmation whose
                // wording depends on them, and counts the rounds in the handler's own state.
                let rounds = context.round_state::<u32>().unwrap_or(0) + 1;
                context.set_round_state(&rounds)?;
                let (place, idea) = tokio::join!(
                    context.input("place").elicit(ask_for("Where to?", "place")),
                    context
                        .input("idea")
                        .create_message(wharf_protocol::CreateMessageParams::user_text("Suggest a trip", 50)),
                );
                let (place, idea) = (answer_text(&place?, "place"), idea?.text());
                let confirm =
                    context.input("confirm").elicit(ask_for(&format!("Book {place} ({idea})?"), "ok")).await?;
                Ok::<_, RpcError>(format!("{place}|{idea}|{}|state {rounds}", answer_text(&confirm, "ok")))
            })
            .description("Asks for a place and an idea at once, then for a confirmation"),
        )
        .tool(
            ToolDef::new("roots", |context: RequestContext| async move {
                let roots = context.list_roots().await?;
                Ok::<_, RpcError>(roots.roots.iter().map(|root| root.uri.clone()).collect::<Vec<_>>().join(","))
            })
            .description("Lists the client's roots"),
        )
        .prompt(
            PromptDef::template("greeting", "Hello {name}, welcome to {place}!")
                .description("A greeting")
                .argument("name", "Who", true)
                .argument("place", "Where", false)
                .complete_from("name", ["alice", "albert", "bob"]),
        )
        .prompt(
            PromptDef::new("personal", |call| async move {
                let answer = call.context.input("who").elicit(ask_for("Who is asking?", "name")).await?;
                Ok::<_, RpcError>(format!("A prompt for {}", answer_text(&answer, "name")))
            })
            .description("Asks who wants it"),
        )
        .prompt(
            PromptDef::new("dynamic", |call| async move {
                let topic = call.argument("topic").unwrap_or("nothing").to_owned();
                vec![
                    wharf_protocol::PromptMessage {
                        role: Role::User,
                        content: content::text(format!("Tell me about {topic}")),
                    },
                    wharf_protocol::PromptMessage {
                        role: Role::Assistant,
                        content: content::embedded_text("memo://topic", None, topic),
                    },
                ]
            })
            .description("A dynamic prompt")
            .argument("topic", "What about", false)
            .complete("topic", |call| async move { (0..150).map(|n| format!("{}{n}", call.value)).collect() }),
        )
        .resource(ResourceDef::text("config://app", "config", r#"{"a":1}"#).mime_type("application/json"))
        .resource(ResourceDef::bytes("bin://logo", "logo", vec![0u8, 159, 146, 150]).mime_type("image/png"))
        .resource(ResourceDef::dynamic("stats://calls", "stats", |call| async move {
            json!({"session": call.context.session_id()})
        }))
        .resource(
            ResourceDef::dynamic("vault://secret", "secret", |call| async move {
                let answer = call.context.input("pin").elicit(ask_for("PIN?", "pin")).await?;
                if answer_text(&answer, "pin") == "1234" {
                    Ok("the treasure".to_owned())
                } else {
                    Err(RpcError::invalid_params("wrong PIN"))
                }
            })
            .mime_type("text/plain"),
        )
        .resource_template(
            TemplateDef::new("users://{id}/profile", "profile", |call| async move {
                let id: u32 = call.parse("id")?;
                if id > 100 {
                    return Err(RpcError::resource_not_found(&call.uri));
                }
                Ok(format!("user {id}"))
            })
            .mime_type("text/plain")
            .complete("id", |call| async move {
                let mut ids = vec!["1".to_owned(), "2".to_owned(), "12".to_owned()];
                if call.arguments.get("region").is_some_and(|region| region == "eu") {
                    ids.push("99".to_owned());
                }
                ids.retain(|id| id.starts_with(&call.value));
                ids
            }),
        )
}

/// The fixture server.
pub fn server() -> Server {
    builder().build().unwrap()
}

/// Capabilities of a client that can do everything.
pub fn all_capabilities() -> ClientCapabilities {
    serde_json::from_value(json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": true}}))
        .unwrap()
}

/// An in-memory 2025 session of `version` with the fixture server, from a client that can
/// do everything.
pub async fn session(version: ProtocolVersion) -> InMemoryClient {
    InMemoryClient::session(server(), version, all_capabilities()).await.unwrap().0
}

/// Waits (at most five seconds) until `client` has received a message that satisfies
/// `wanted`, and returns it.
pub async fn wait_for(client: &InMemoryClient, wanted: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let limit = Duration::from_secs(5);
    crate::eventually::eventually("a message the client waits for", limit, || {
        client.received().into_iter().find(|message| wanted(message))
    })
    .await
}
