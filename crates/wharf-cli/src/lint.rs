//! `wharf lint SERVER`: what some real clients refuse or mangle in a server's surface, each
//! rule with the source that says so. Names outside what model APIs accept, a server and tool
//! name too long for Cursor, descriptions and instructions Claude Code cuts, a root
//! `anyOf`/`oneOf`/`allOf` in an input schema, results whose text does not carry their
//! structured content, tools without annotations. Exit 1 when anything is found.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};
use wharf::client::{Client, RequestOptions};

use crate::answers::Declining;
use crate::exit;
use crate::server_args::{ServerArgs, block_on_unless_stopped, only_target, runtime};
use crate::surface::{self, Surface};

#[derive(Debug, Args)]
pub(crate) struct LintArgs {
    /// [URL]: the server, when it is reached over HTTP.
    #[arg(value_name = "[URL]")]
    words: Vec<String>,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    /// Do not call tools (the rule on structured results needs one call of each tool with an
    /// output schema that is not destructive).
    #[arg(long)]
    no_calls: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// A rule: its name, what it finds, and who says so.
struct Rule {
    name: &'static str,
    why: &'static str,
    source: &'static str,
}

const TOOL_NAME: Rule = Rule {
    name: "tool-name",
    why: "tool names outside ^[a-zA-Z0-9_-]{1,64}$ are refused by the Anthropic and OpenAI model APIs clients hand tools to, and names with dots are dropped by some clients (MCP itself allows 1 to 128 of A-Z a-z 0-9 _ - .)",
    source: "Anthropic Messages API, tools[].name; OpenAI function calling, function.name; MCP 2025-11-25, server/tools (tool names)",
};
const SERVER_AND_TOOL_NAME: Rule = Rule {
    name: "server-and-tool-name-length",
    why: "Cursor drops a tool whose server name and tool name together pass 60 characters",
    source: "Cursor's MCP limits: server name + tool name <= 60 characters (as documented at easymanage.com/res/docs/tutorials/ai-agent/chapter-3-mcp-advanced)",
};
const DESCRIPTION_LENGTH: Rule = Rule {
    name: "description-length",
    why: "Claude Code cuts tool descriptions and server instructions at 2 KB: what follows never reaches the model",
    source: "Claude Code documentation, MCP (tool descriptions and server instructions are truncated at 2KB); Claude Code 2.1",
};
const ROOT_COMBINATOR: Rule = Rule {
    name: "input-schema-root-combinator",
    why: "an inputSchema whose root is anyOf, oneOf or allOf is flattened or refused by clients that pass it to model APIs wanting an object at the root",
    source: "OpenAI Structured Outputs (the root must be an object, not anyOf); MCP: inputSchema is an object schema",
};
const STRUCTURED_WITHOUT_TEXT: Rule = Rule {
    name: "structured-result-without-text",
    why: "a tool with an outputSchema whose results do not also carry the same data as text content: Claude Desktop reads only content, Claude Code only structuredContent",
    source: "MCP 2025-06-18, server/tools, structured content (a tool that returns structured content SHOULD also return the serialized JSON in a TextContent block)",
};
const ANNOTATIONS: Rule = Rule {
    name: "missing-annotations",
    why: "a tool without readOnlyHint or destructiveHint: clients cannot tell a read from a change, and ask before every call or none",
    source: "MCP 2025-03-26, server/tools (tool annotations)",
};

/// The most of a description or instructions Claude Code passes on.
const MAX_DESCRIPTION_BYTES: usize = 2048;

/// One thing found.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Finding {
    rule: &'static str,
    at: String,
    detail: String,
    why: &'static str,
    source: &'static str,
}

fn found(rule: &Rule, at: String, detail: String) -> Finding {
    Finding { rule: rule.name, at, detail, why: rule.why, source: rule.source }
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-'))
}

/// What the rules find in the listings alone.
pub(crate) fn static_findings(surface: &Surface) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(instructions) = &surface.instructions
        && instructions.len() > MAX_DESCRIPTION_BYTES
    {
        findings.push(found(&DESCRIPTION_LENGTH, "instructions".to_owned(), format!("{} bytes", instructions.len())));
    }
    for (name, tool) in &surface.tools {
        let at = format!("tool `{name}`");
        if !valid_name(name) {
            findings.push(found(&TOOL_NAME, at.clone(), format!("`{name}`")));
        }
        let together = surface.server_name.chars().count() + name.chars().count();
        if together > 60 {
            findings.push(found(
                &SERVER_AND_TOOL_NAME,
                at.clone(),
                format!("`{}` + `{name}`: {together} characters", surface.server_name),
            ));
        }
        if let Some(description) = tool.get("description").and_then(Value::as_str)
            && description.len() > MAX_DESCRIPTION_BYTES
        {
            findings.push(found(&DESCRIPTION_LENGTH, at.clone(), format!("{} bytes", description.len())));
        }
        let input = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        if let Some(combinator) = ["anyOf", "oneOf", "allOf"].into_iter().find(|key| input.get(*key).is_some()) {
            findings.push(found(&ROOT_COMBINATOR, at.clone(), format!("its root has `{combinator}`")));
        }
        let annotations = tool.get("annotations");
        let hinted =
            ["readOnlyHint", "destructiveHint"].iter().any(|hint| annotations.and_then(|a| a.get(*hint)).is_some());
        if !hinted {
            findings.push(found(&ANNOTATIONS, at, "neither readOnlyHint nor destructiveHint".to_owned()));
        }
    }
    findings
}

/// Whether `result`'s text content carries its structured content: some text block is JSON
/// equal to it.
pub(crate) fn text_carries_structured(result: &Value) -> bool {
    let Some(structured) = result.get("structuredContent") else { return true };
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .any(|text| serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == structured))
}

/// Calls each tool with an output schema that is not destructive, with arguments made from its
/// schema, and finds the results whose text does not carry their structured content.
async fn call_findings(client: &Client, surface: &Surface) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (name, tool) in &surface.tools {
        let destructive = tool.pointer("/annotations/destructiveHint") == Some(&Value::Bool(true))
            && tool.pointer("/annotations/readOnlyHint") != Some(&Value::Bool(true));
        if tool.get("outputSchema").is_none() || destructive {
            continue;
        }
        let input = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        let Ok(arguments) = crate::check::generate::valid_arguments(&input) else { continue };
        let options = RequestOptions::default().timeout(std::time::Duration::from_secs(10));
        let Ok(result) =
            client.request_with("tools/call", json!({"name": name, "arguments": arguments}), &options).await
        else {
            continue;
        };
        if result.get("isError") != Some(&Value::Bool(true)) && !text_carries_structured(&result) {
            findings.push(found(
                &STRUCTURED_WITHOUT_TEXT,
                format!("tool `{name}`"),
                "no text block holds its structuredContent as JSON".to_owned(),
            ));
        }
    }
    findings
}

pub(crate) fn lint(mut args: LintArgs) -> ExitCode {
    let target = match only_target("lint", &mut args.words, &args.server) {
        Ok(target) => target,
        Err(exit) => return exit,
    };
    let options = match args.server.options(&target, Declining { tell: false }) {
        Ok(options) => options,
        Err(message) => return exit::usage("lint", &message),
    };
    let no_calls = args.no_calls;
    let linted = block_on_unless_stopped(&runtime(), async {
        let client = Client::connect_with(target, options).await?;
        let surface = surface::fetch(&client).await;
        let findings = match &surface {
            Ok(surface) => {
                let mut findings = static_findings(surface);
                if !no_calls {
                    findings.extend(call_findings(&client, surface).await);
                }
                Ok(findings)
            }
            Err(_) => Ok(Vec::new()),
        };
        client.close().await;
        surface.and(findings)
    });
    let linted = match linted {
        Ok(linted) => linted,
        Err(stopped) => stopped.exit("lint"),
    };
    let findings = match linted {
        Ok(findings) => findings,
        Err(err) => return exit::failure("lint", &err),
    };
    if args.json {
        println!("{}", json!({"findings": findings}));
    } else {
        for finding in &findings {
            println!(
                "{}  {}: {}\n    {}\n    source: {}",
                finding.rule, finding.at, finding.detail, finding.why, finding.source
            );
        }
        println!("{} finding{}", findings.len(), if findings.len() == 1 { "" } else { "s" });
    }
    if findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(exit::TOOL_ERROR) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_finds_its_problem() {
        let surface = Surface {
            server_name: "a-server-with-a-rather-long-name".to_owned(),
            instructions: Some("x".repeat(3000)),
            tools: vec![
                (
                    "dotted.name".to_owned(),
                    json!({"inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
                ),
                (
                    "a_tool_whose_name_is_long_enough_to_pass".to_owned(),
                    json!({"inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
                ),
                (
                    "wordy".to_owned(),
                    json!({"description": "y".repeat(2049), "inputSchema": {"anyOf": [{"type": "object"}]}}),
                ),
            ],
            ..Surface::default()
        };
        let rules: Vec<(&str, String)> = static_findings(&surface).into_iter().map(|f| (f.rule, f.at)).collect();
        for wanted in [
            ("description-length", "instructions"),
            ("tool-name", "tool `dotted.name`"),
            ("server-and-tool-name-length", "tool `a_tool_whose_name_is_long_enough_to_pass`"),
            ("description-length", "tool `wordy`"),
            ("input-schema-root-combinator", "tool `wordy`"),
            ("missing-annotations", "tool `wordy`"),
        ] {
            assert!(rules.iter().any(|(rule, at)| *rule == wanted.0 && at == wanted.1), "{wanted:?} not in {rules:#?}");
        }
        assert_eq!(rules.len(), 6, "{rules:#?}");
        assert!(text_carries_structured(
            &json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": {"a": 1}})
        ));
        assert!(!text_carries_structured(
            &json!({"content": [{"type": "text", "text": "a is 1"}], "structuredContent": {"a": 1}})
        ));
    }
}
