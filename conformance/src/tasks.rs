//! The fixtures of the tasks scenarios (the 2026-07-28 extension `io.modelcontextprotocol/tasks`):
//! a tool that never runs as a task, tools that do when they have to wait, and tools that
//! gather input before and during a task.

use std::time::Duration;

use serde_json::{Value, json};
use wharf::protocol::{ElicitParams, ElicitResult, ElicitSchema};
use wharf::{Args, RequestContext, RpcError, ToolDef, content, task::TaskSupport};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ComputeArgs {
    /// How long the computation takes, in seconds.
    #[serde(default)]
    seconds: f64,
    /// A label for the result.
    #[serde(default)]
    label: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DeleteArgs {
    /// The file to delete.
    #[serde(default)]
    filename: Option<String>,
}

fn confirm(message: &str, field: &str) -> ElicitParams {
    let schema: ElicitSchema = serde_json::from_value(json!({
        "type": "object", "properties": {field: {"type": "boolean"}}, "required": [field]
    }))
    .expect("the fixture schema is valid");
    ElicitParams { message: message.to_owned(), requested_schema: Some(schema), ..ElicitParams::default() }
}

fn accepted(answer: &ElicitResult) -> String {
    let content = answer.content.as_ref().map_or(Value::Null, |content| Value::Object(content.clone()));
    format!("{:?} {content}", answer.action)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new("greet", |Args(args): Args<GreetArgs>| async move { format!("Hello, {}!", args.name) })
            .description("Greets at once; never a task"),
        ToolDef::new("slow_compute", |context: RequestContext, Args(args): Args<ComputeArgs>| async move {
            let seconds = args.seconds.clamp(0.0, 3600.0);
            if seconds > 0.0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
                    () = context.cancellation().cancelled() => return Err(RpcError::internal("cancelled")),
                }
            }
            let label = args.label.unwrap_or_else(|| "compute".to_owned());
            Ok::<_, RpcError>(format!("{label}: done after {seconds} s"))
        })
        .task_support(TaskSupport::Optional)
        .description("Computes for `seconds` seconds; a task when it has to wait"),
        ToolDef::new("failing_job", || async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err::<String, _>("the job failed: the input was rejected")
        })
        .task_support(TaskSupport::Required)
        .description("Always a task; ends with a tool error after a second"),
        ToolDef::new("protocol_error_job", || async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Err::<String, _>(RpcError::internal("Internal error: the job's backend is down"))
        })
        .task_support(TaskSupport::Optional)
        .description("A task that ends with a protocol error"),
        ToolDef::new("confirm_delete", |context: RequestContext, Args(args): Args<DeleteArgs>| async move {
            // Looking the file up takes a moment, so the call becomes a task before it asks.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let filename = args.filename.unwrap_or_else(|| "the file".to_owned());
            let answer = context.input("confirm").elicit(confirm(&format!("Delete {filename}?"), "confirm")).await?;
            Ok::<_, RpcError>(format!("Deleted {filename}: {}", accepted(&answer)))
        })
        .task_support(TaskSupport::Optional)
        .description("Asks for confirmation while running as a task"),
        ToolDef::new("multi_input", |context: RequestContext| async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let (first, second) = tokio::join!(
                context.input("first").elicit(confirm("First question?", "confirm")),
                context.input("second").elicit(confirm("Second question?", "confirm")),
            );
            Ok::<_, RpcError>(format!("{} / {}", accepted(&first?), accepted(&second?)))
        })
        .task_support(TaskSupport::Optional)
        .description("Asks two things at once while running as a task"),
        ToolDef::new("test_tool_with_task", |context: RequestContext| async move {
            // Input first, in InputRequiredResult rounds; then the work, as a task.
            let schema: ElicitSchema = serde_json::from_value(json!({
                "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
            }))
            .expect("the fixture schema is valid");
            let params = ElicitParams {
                message: "What is your name?".to_owned(),
                requested_schema: Some(schema),
                ..ElicitParams::default()
            };
            let answer = context.input("user_name").elicit(params).await?;
            let name = answer.content.as_ref().and_then(|content| content.get("name")).and_then(Value::as_str);
            let name = name.unwrap_or("stranger").to_owned();
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok::<_, RpcError>(content::text(format!("Hello, {name}! The task finished.")))
        })
        .task_support(TaskSupport::Required)
        .description("Gathers a name with InputRequiredResult, then runs as a task"),
    ]
}
