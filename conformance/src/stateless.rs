//! The fixtures of the 2026-07-28 requirement set: multi round-trip requests (the
//! `test_input_required_result_*` tools and prompt), the capability and logging probes, and the
//! hooks that change the tool and prompt lists while listeners watch.

use serde_json::{Value, json};
use wharf::protocol::{CreateMessageParams, ElicitParams, ElicitResult, ElicitSchema, PromptMessage, Role};
use wharf::{Args, PromptDef, RequestContext, RpcError, ToolDef, content};

/// The tool `test_trigger_tool_change` shows and hides.
const DYNAMIC_TOOL: &str = "test_dynamic_tool";
/// The prompt `test_trigger_prompt_change` shows and hides.
const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";

/// A form elicitation; the schemas here are fixed, so a bad one is a bug in this file.
fn form(message: &str, schema: Value) -> ElicitParams {
    let schema: ElicitSchema = serde_json::from_value(schema).expect("the fixture schemas are valid");
    ElicitParams { message: message.to_owned(), requested_schema: Some(schema), ..ElicitParams::default() }
}

fn one_field(field: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]})
}

/// The accepted answer's `field` as text.
fn field(answer: &ElicitResult, field: &str) -> String {
    match answer.content.as_ref().and_then(|content| content.get(field)) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => format!("({:?})", answer.action),
    }
}

async fn ask_name(context: &RequestContext, key: &str, message: &str) -> Result<String, RpcError> {
    let answer = context.input(key).elicit(form(message, one_field("name", "string"))).await?;
    Ok(field(&answer, "name"))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct HeaderArgs {
    /// The region the call is routed to; clients mirror it into `Mcp-Param-Region`.
    region: String,
    /// An optional priority, mirrored into `Mcp-Param-Priority`.
    priority: Option<i64>,
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new("test_x_mcp_header", |Args(args): Args<HeaderArgs>| async move {
            format!("Routed to {} (priority {})", args.region, args.priority.unwrap_or(0))
        })
        .mirror_to_header("region", "Region")
        .mirror_to_header("priority", "Priority")
        .description("Arguments mirrored into Mcp-Param headers, which the server checks against the body (SEP-2243)"),
        ToolDef::new("test_input_required_result_elicitation", |context: RequestContext| async move {
            let name = ask_name(&context, "user_name", "What is your name?").await?;
            Ok::<_, RpcError>(format!("Hello, {name}!"))
        })
        .description("Asks for the user's name with an InputRequiredResult (SEP-2322)"),
        ToolDef::new("test_input_required_result_sampling", |context: RequestContext| async move {
            let question = CreateMessageParams::user_text("What is the capital of France?", 100);
            let answer = context.input("capital_question").create_message(question).await?;
            Ok::<_, RpcError>(format!("Sampling response: {}", answer.text()))
        })
        .description("Asks the client's model a question with an InputRequiredResult (SEP-2322)"),
        ToolDef::new("test_input_required_result_list_roots", |context: RequestContext| async move {
            let roots = context.input("client_roots").list_roots().await?;
            let uris: Vec<&str> = roots.roots.iter().map(|root| root.uri.as_str()).collect();
            Ok::<_, RpcError>(format!("Client roots: {}", uris.join(", ")))
        })
        .description("Asks for the client's roots with an InputRequiredResult (SEP-2322)"),
        ToolDef::new("test_input_required_result_request_state", |context: RequestContext| async move {
            // What the first round keeps comes back sealed in `requestState`.
            let kept = context.round_state::<String>();
            if kept.is_none() {
                context.set_round_state(&"awaiting-confirmation")?;
            }
            let answer = context.input("confirm").elicit(form("Please confirm", one_field("ok", "boolean"))).await?;
            let verified = if kept.as_deref() == Some("awaiting-confirmation") { "state-ok" } else { "state-missing" };
            Ok::<_, RpcError>(format!("{verified}: confirmed={}", field(&answer, "ok")))
        })
        .description("Round-trips its own requestState (SEP-2322)"),
        ToolDef::new("test_input_required_result_multiple_inputs", |context: RequestContext| async move {
            let (name, greeting, roots) = tokio::join!(
                ask_name(&context, "user_name", "What is your name?"),
                context.input("greeting").create_message(CreateMessageParams::user_text("Generate a greeting", 50)),
                context.input("client_roots").list_roots(),
            );
            let (name, greeting, roots) = (name?, greeting?, roots?);
            Ok::<_, RpcError>(format!("{} {name}; {} root(s)", greeting.text(), roots.roots.len()))
        })
        .description("Asks for three inputs in one round (SEP-2322)"),
        ToolDef::new("test_input_required_result_multi_round", |context: RequestContext| async move {
            let name = ask_name(&context, "step1", "Step 1: What is your name?").await?;
            let color = context
                .input("step2")
                .elicit(form("Step 2: What is your favorite color?", one_field("color", "string")))
                .await?;
            Ok::<_, RpcError>(format!("{name} likes {}", field(&color, "color")))
        })
        .description("Asks in two rounds (SEP-2322)"),
        ToolDef::new("test_input_required_result_tampered_state", |context: RequestContext| async move {
            let answer = context.input("confirm").elicit(form("Please confirm", one_field("ok", "boolean"))).await?;
            Ok::<_, RpcError>(format!("confirmed={}", field(&answer, "ok")))
        })
        .description("Seals its requestState, so a tampered one is refused (SEP-2322)"),
        ToolDef::new("test_input_required_result_capabilities", |context: RequestContext| async move {
            // Wharf asks only for what the client declared; an input it cannot ask for fails
            // with -32021 here, and the others go out.
            let (name, answer) = tokio::join!(
                ask_name(&context, "user_name", "What is your name?"),
                context
                    .input("capital_question")
                    .create_message(CreateMessageParams::user_text("Capital of France?", 50)),
            );
            match (name, answer) {
                (Ok(name), Ok(answer)) => Ok(format!("{name}: {}", answer.text())),
                (Ok(name), Err(_)) => Ok(name),
                (Err(_), Ok(answer)) => Ok(answer.text()),
                (Err(err), Err(_)) => Err(err),
            }
        })
        .description("Asks only for the kinds of input the client declared (SEP-2322)"),
        ToolDef::new("test_missing_capability", |context: RequestContext| async move {
            let answer = context.create_message(CreateMessageParams::user_text("Say hello", 20)).await?;
            Ok::<_, RpcError>(answer.text())
        })
        .description("Needs sampling: without it in the client's capabilities the answer is -32021"),
        ToolDef::new("test_streaming_elicitation", |context: RequestContext| async move {
            let name = ask_name(&context, "user_name", "What is your name?").await?;
            Ok::<_, RpcError>(format!("Hello, {name}!"))
        })
        .description("Asks for input: on 2026-07-28 with an InputRequiredResult, never a request of its own"),
        ToolDef::new("test_logging_tool", |context: RequestContext| async move {
            context.log(wharf::protocol::LoggingLevel::Info, Some("conformance"), json!("a log message")).await;
            "Logged, if the request asked for logs"
        })
        .description("Logs only when the request set a log level"),
        // Enabling and disabling (not adding and removing) is what every instance of a fleet
        // does alike: the change is relayed, the handler cannot be.
        ToolDef::new("test_trigger_tool_change", |context: RequestContext| async move {
            let server = context.server();
            let enabled = server.is_tool_enabled(DYNAMIC_TOOL).unwrap_or(false);
            server.set_tool_enabled(DYNAMIC_TOOL, !enabled);
            "The tool list changed"
        })
        .description("Shows or hides test_dynamic_tool, so that listeners hear of it"),
        ToolDef::new(DYNAMIC_TOOL, || async { "I come and go" })
            .description("Shown and hidden by test_trigger_tool_change")
            .disabled(),
        ToolDef::new("test_trigger_prompt_change", |context: RequestContext| async move {
            let server = context.server();
            let enabled = server.is_prompt_enabled(DYNAMIC_PROMPT).unwrap_or(false);
            server.set_prompt_enabled(DYNAMIC_PROMPT, !enabled);
            "The prompt list changed"
        })
        .description("Shows or hides test_dynamic_prompt, so that listeners hear of it"),
    ]
}

pub(crate) fn prompts() -> Vec<PromptDef> {
    vec![
        PromptDef::template(DYNAMIC_PROMPT, "I come and go")
            .description("Shown and hidden by test_trigger_prompt_change")
            .disabled(),
        PromptDef::new("test_input_required_result_prompt", |call| async move {
            let answer = call
                .context
                .input("user_context")
                .elicit(form("What context should the prompt use?", one_field("context", "string")))
                .await?;
            Ok::<_, RpcError>(vec![PromptMessage {
                role: Role::User,
                content: content::text(format!("Use this context: {}", field(&answer, "context"))),
            }])
        })
        .description("Asks for context with an InputRequiredResult before it is rendered (SEP-2322)"),
    ]
}
