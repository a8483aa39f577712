//! The built-in demo server that `wharf serve` runs: the seed examples (echo, calculator,
//! code review, app config, user profiles) plus tools that show progress, logging,
//! elicitation and sampling, an MCP Apps view (`dice/`) and notes added once per key
//! (`notes.rs`).

use std::collections::BTreeMap;
use std::time::Duration;

use wharf::protocol::{CreateMessageParams, ElicitAction, ElicitParams, ElicitSchema, LoggingLevel, PrimitiveSchema};
use wharf::task::TaskSupport;
use wharf::{Args, PromptDef, RequestContext, ResourceDef, RpcError, Server, TemplateDef, ToolDef};

use crate::notes::{Notes, note_tool_and_resource};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message to send back.
    message: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CalculatorArgs {
    /// The operation to perform.
    operation: Operation,
    /// The first operand.
    a: f64,
    /// The second operand.
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CountdownArgs {
    /// How many steps to count down, reporting progress after each.
    #[serde(default = "default_steps")]
    #[schemars(range(min = 1, max = 1000))]
    steps: u32,
}

fn default_steps() -> u32 {
    5
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LogArgs {
    /// The severity.
    level: LoggingLevel,
    /// The message to log.
    message: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SummarizeArgs {
    /// The text to summarize.
    text: String,
}

/// The users that `users://{id}/profile` knows.
const USERS: [(&str, &str, &str); 3] = [
    ("1", "Ada Lovelace", "ada@example.com"),
    ("2", "Alan Turing", "alan@example.com"),
    ("3", "Grace Hopper", "grace@example.com"),
];

fn calculate(args: CalculatorArgs) -> Result<String, String> {
    let value = match args.operation {
        Operation::Add => args.a + args.b,
        Operation::Subtract => args.a - args.b,
        Operation::Multiply => args.a * args.b,
        Operation::Divide if args.b == 0.0 => return Err("Division by zero".to_owned()),
        Operation::Divide => args.a / args.b,
    };
    Ok(value.to_string())
}

async fn countdown(context: RequestContext, Args(args): Args<CountdownArgs>) -> String {
    let total = f64::from(args.steps);
    for step in 1..=args.steps {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let remaining = args.steps - step;
        context.progress(f64::from(step), Some(total), Some(&format!("{remaining} to go"))).await;
        context.log(LoggingLevel::Debug, Some("countdown"), format!("step {step} of {}", args.steps)).await;
    }
    format!("Counted down {} steps", args.steps)
}

async fn greet_interactively(context: RequestContext) -> Result<String, RpcError> {
    let schema = ElicitSchema {
        kind: "object".to_owned(),
        properties: BTreeMap::from([(
            "name".to_owned(),
            PrimitiveSchema {
                kind: "string".to_owned(),
                title: Some("Your name".to_owned()),
                min_length: Some(1),
                ..PrimitiveSchema::default()
            },
        )]),
        required: Some(vec!["name".to_owned()]),
        schema: None,
    };
    let answer = context
        .elicit(ElicitParams {
            message: "What is your name?".to_owned(),
            requested_schema: Some(schema),
            ..ElicitParams::default()
        })
        .await?;
    Ok(match answer.action {
        ElicitAction::Accept => {
            let name = answer.content.as_ref().and_then(|content| content.get("name")).and_then(|name| name.as_str());
            format!("Hello, {}!", name.unwrap_or("stranger"))
        }
        ElicitAction::Decline => "You declined to give your name.".to_owned(),
        ElicitAction::Cancel => "You dismissed the question.".to_owned(),
    })
}

async fn summarize(context: RequestContext, Args(args): Args<SummarizeArgs>) -> Result<String, RpcError> {
    let request = CreateMessageParams::user_text(format!("Summarize in one sentence:\n\n{}", args.text), 200);
    let answer = context.create_message(request).await?;
    Ok(format!("Summary from {}: {}", answer.model, answer.text()))
}

/// The scope `admin_report` needs.
pub const ADMIN_SCOPE: &str = "demo:admin";

/// What `admin_report` tells its caller: who the server takes it to be.
fn admin_report(context: &RequestContext) -> String {
    let Some(principal) = context.principal() else { return "No principal: this request was not authenticated".into() };
    let scopes: Vec<&str> = principal.scopes().collect();
    format!(
        "Admin report for {} (issuer {}, client {}); granted scopes: {}",
        principal.subject(),
        principal.issuer().unwrap_or("none"),
        principal.client_id().unwrap_or("unknown"),
        scopes.join(" ")
    )
}

/// Adds the tools that only make sense behind authentication: `admin_report`, which needs the
/// scope [`ADMIN_SCOPE`] of its own, so that a client can see the list hide it and the call
/// ask for the scope (the step-up).
pub fn with_authenticated_tools(builder: wharf::ServerBuilder) -> wharf::ServerBuilder {
    builder.tool(
        ToolDef::new("admin_report", |context: RequestContext| async move { admin_report(&context) })
            .description("Say who the server takes the caller to be; needs the demo:admin scope")
            .read_only()
            .scopes([ADMIN_SCOPE]),
    )
}

/// Adds `whoami`, which says who the server takes the caller to be: over a Unix socket, the
/// connecting user (`unix:uid:UID`, with its uid, gid and pid).
pub fn with_whoami(builder: wharf::ServerBuilder) -> wharf::ServerBuilder {
    builder.tool(
        ToolDef::new("whoami", |context: RequestContext| async move {
            match context.principal() {
                None => "No principal: this request was not authenticated".to_owned(),
                Some(principal) => {
                    let claims = principal.claims().map(|claims| serde_json::Value::Object(claims.clone()));
                    format!("{} {}", principal.as_str(), claims.unwrap_or_default())
                }
            }
        })
        .description("Say who the server takes the caller to be")
        .read_only(),
    )
}

/// Builds the demo server.
pub fn server() -> Result<Server, wharf::Error> {
    builder().build()
}

/// A resource that changes whenever it is read, and whose subscribers `tick` tells.
const CLOCK: &str = "demo://clock";

/// What the demo can be told on the command line.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The file `note_add` appends to (`--demo-notes`); in memory without one.
    pub notes_file: Option<std::path::PathBuf>,
    /// How long `note_add` keeps an idempotency key (`--idempotency-ttl`).
    pub idempotency_ttl: Duration,
}

impl Default for DemoOptions {
    fn default() -> DemoOptions {
        DemoOptions { notes_file: None, idempotency_ttl: Duration::from_secs(24 * 60 * 60) }
    }
}

/// The demo server, before it is built.
pub fn builder() -> wharf::ServerBuilder {
    builder_with(&DemoOptions::default())
}

/// The demo server as `options` say, before it is built.
pub fn builder_with(options: &DemoOptions) -> wharf::ServerBuilder {
    let (dice_view, dice_tools) = crate::dice::view_and_tools();
    let notes = std::sync::Arc::new(Notes::new(options.notes_file.clone()));
    let (note_tool, notes_resource) = note_tool_and_resource(notes, options.idempotency_ttl);
    Server::builder("wharf-demo", env!("CARGO_PKG_VERSION"))
        .title("Wharf demo server")
        .description("The examples Wharf was built from: tools, prompts and resources in every protocol revision")
        .instructions("Use `echo` and `calculator` for simple requests; `countdown` shows progress.")
        .tool(
            ToolDef::new("echo", |Args(args): Args<EchoArgs>| async move { args.message })
                .description("Echo a message back")
                .read_only(),
        )
        .tool(
            ToolDef::new("calculator", |Args(args): Args<CalculatorArgs>| async move { calculate(args) })
                .description("Add, subtract, multiply or divide two numbers")
                .read_only(),
        )
        .tool(
            ToolDef::new("countdown", countdown)
                .description("Count down, reporting progress and logging each step")
                .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("log", |context: RequestContext, Args(args): Args<LogArgs>| async move {
                context.log(args.level, Some("demo"), args.message.clone()).await;
                format!("Logged at {:?}: {}", args.level, args.message)
            })
            .description("Send a log message to the client at the given level"),
        )
        .tool(
            ToolDef::new("greet_interactively", greet_interactively)
                .description("Ask the user for their name, then greet them"),
        )
        .tool(ToolDef::new("summarize", summarize).description("Summarize text with the client's language model"))
        .tool(
            ToolDef::new("tick", |context: RequestContext| async move {
                context.server().notify_resource_updated(CLOCK);
                format!("{CLOCK} changed; its subscribers were told")
            })
            .description("Tell the subscribers of demo://clock that it changed (on every instance of a fleet)"),
        )
        .tool(note_tool)
        .tool(crate::report::long_report_tool())
        .resource(notes_resource)
        .tools(dice_tools)
        .resource(dice_view)
        .prompt(
            PromptDef::template(
                "code_review",
                "Please review the following {language} code. Review style: {style}.\n\n{code}",
            )
            .title("Code review")
            .description("Ask for a review of a piece of code")
            .argument("language", "The programming language of the code", true)
            .argument("code", "The code to review", true)
            .argument("style", "`detailed` or `brief`", false)
            .complete_from("language", ["c", "go", "java", "javascript", "python", "rust", "typescript"])
            .complete_from("style", ["detailed", "brief"]),
        )
        .resource(
            ResourceDef::text(
                "config://app",
                "app-config",
                r#"{"name":"wharf-demo","theme":"dark","features":{"logging":true,"progress":true}}"#,
            )
            .title("Application configuration")
            .description("The demo application's configuration")
            .mime_type("application/json"),
        )
        .resource(
            ResourceDef::dynamic(CLOCK, "clock", |_call| async move {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                serde_json::json!({"unix_seconds": now.as_secs()})
            })
            .title("Clock")
            .description("The time now; `tick` tells subscribers it changed")
            .mime_type("application/json"),
        )
        .resource_template(
            TemplateDef::new("users://{id}/profile", "user-profile", |call| async move {
                let id = call.variable("id").unwrap_or_default();
                let (id, name, email) = USERS
                    .iter()
                    .find(|(known, _, _)| *known == id)
                    .ok_or_else(|| RpcError::resource_not_found(&call.uri))?;
                Ok::<_, RpcError>(serde_json::json!({"id": id, "name": name, "email": email}))
            })
            .title("User profile")
            .description("The profile of a user, by id")
            .mime_type("application/json")
            .complete_from("id", USERS.map(|(id, _, _)| id)),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calculator_refuses_to_divide_by_zero() {
        let args = CalculatorArgs { operation: Operation::Divide, a: 1.0, b: 0.0 };
        assert_eq!(calculate(args), Err("Division by zero".to_owned()));
        let args = CalculatorArgs { operation: Operation::Multiply, a: 6.0, b: 7.0 };
        assert_eq!(calculate(args), Ok("42".to_owned()));
    }

    #[test]
    fn the_demo_server_builds() {
        let server = server().unwrap();
        let capabilities = server.capabilities();
        assert!(capabilities.tools.is_some() && capabilities.prompts.is_some() && capabilities.resources.is_some());
        assert!(capabilities.completions.is_some());
    }
}
