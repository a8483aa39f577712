//! Command tools: each `[[tools]]` entry becomes a tool whose call runs its program with the
//! arguments put into its argv template. Standard output is the result (text, or JSON as
//! structured content); a non-zero exit is a tool error carrying standard error.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use wharf_protocol::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use wharf_server::{Args, ToolDef};

use crate::command::CommandTemplate;
use crate::config::{OutputKind, ToolSpec};
use crate::run::{Invocation, Outcome, run};

/// How long a program may run unless its tool says.
const DEFAULT_TIMEOUT: f64 = 30.0;

/// Environment variables every program gets from the server's, so that it finds its own.
const ALWAYS_PASSED: [&str; 1] = ["PATH"];

/// What a call needs to run the program.
struct Runner {
    template: CommandTemplate,
    cwd: std::path::PathBuf,
    env: Vec<String>,
    timeout: Duration,
    output: OutputKind,
}

/// The tool `spec` describes, its program run from `folder`.
pub(crate) fn command_tool(spec: &ToolSpec, folder: &Path) -> Result<ToolDef, String> {
    let schema = spec.schema()?;
    let known: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let template = CommandTemplate::parse(&spec.command, &known)?;
    let cwd = match &spec.cwd {
        Some(cwd) if Path::new(cwd).is_absolute() || cwd.split(['/', '\\']).any(|part| part == "..") => {
            return Err(format!("`cwd` = `{cwd}` must be a directory inside the folder"));
        }
        Some(cwd) => folder.join(cwd),
        None => folder.to_path_buf(),
    };
    let seconds = spec.timeout.unwrap_or(DEFAULT_TIMEOUT);
    if !(seconds > 0.0 && seconds <= 24.0 * 3600.0) {
        return Err(format!("`timeout` = {seconds} must be a positive number of seconds, at most a day"));
    }
    let output_schema = match (&spec.output_schema, spec.output) {
        (Some(Value::Object(schema)), OutputKind::Json) => Some(schema.clone()),
        (Some(_), OutputKind::Json) => return Err("`output_schema` must be a JSON Schema object".to_owned()),
        (Some(_), OutputKind::Text) => return Err("`output_schema` needs `output = \"json\"`".to_owned()),
        (None, _) => None,
    };
    let runner = Arc::new(Runner {
        template,
        cwd,
        env: spec.env.clone(),
        timeout: Duration::from_secs_f64(seconds),
        output: spec.output,
    });
    let mut tool = ToolDef::new(spec.name.clone(), move |Args(arguments): Args<JsonObject>| {
        let runner = runner.clone();
        async move { call(&runner, &arguments).await }
    })
    .input_schema(schema)
    .annotations(ToolAnnotations {
        title: spec.title.clone(),
        read_only_hint: spec.read_only.then_some(true),
        destructive_hint: spec.destructive,
        idempotent_hint: spec.idempotent.then_some(true),
        open_world_hint: spec.open_world,
    });
    if let Some(description) = &spec.description {
        tool = tool.description(description.clone());
    }
    if let Some(title) = &spec.title {
        tool = tool.title(title.clone());
    }
    if let Some(schema) = output_schema {
        tool = tool.output_schema(schema);
    }
    Ok(tool)
}

/// One call: the program run with `arguments`, its outcome as a tool result.
async fn call(runner: &Runner, arguments: &Map<String, Value>) -> CallToolResult {
    let env = ALWAYS_PASSED
        .iter()
        .copied()
        .chain(runner.env.iter().map(String::as_str))
        .filter_map(|name| std::env::var(name).ok().map(|value| (name.to_owned(), value)))
        .collect();
    let invocation = Invocation {
        program: runner.template.program().to_owned(),
        argv: runner.template.expand(arguments),
        cwd: runner.cwd.clone(),
        env,
        timeout: runner.timeout,
    };
    match run(&invocation).await {
        Ok(outcome) => result(&invocation, runner.output, outcome),
        Err(message) => CallToolResult::error(message),
    }
}

fn result(invocation: &Invocation, output: OutputKind, outcome: Outcome) -> CallToolResult {
    if outcome.timed_out {
        return CallToolResult::error(format!(
            "`{}` did not finish within {:?} and was stopped",
            invocation.program, invocation.timeout
        ));
    }
    let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
    let note = if outcome.truncated { "\n(output cut at 1 MiB)" } else { "" };
    if outcome.code != Some(0) {
        let how = outcome.code.map_or_else(|| "was killed".to_owned(), |code| format!("exited with {code}"));
        let mut text = format!("`{}` {how}", invocation.program);
        for (name, stream) in [("stderr", &stderr), ("stdout", &stdout)] {
            if !stream.trim().is_empty() {
                text.push_str(&format!("\n{name}:\n{}", stream.trim_end()));
            }
        }
        text.push_str(note);
        return CallToolResult::error(text);
    }
    match output {
        OutputKind::Text => CallToolResult::text(format!("{stdout}{note}")),
        OutputKind::Json => match serde_json::from_str::<Value>(&stdout) {
            Ok(value) if !outcome.truncated => CallToolResult {
                content: vec![ContentBlock::text(stdout.trim_end())],
                structured_content: Some(value),
                ..CallToolResult::default()
            },
            _ => CallToolResult::error(format!(
                "`{}` was to print JSON, but printed: {}{note}",
                invocation.program,
                stdout.chars().take(500).collect::<String>()
            )),
        },
    }
}
