//! `wharf tokens SERVER`: what a server's catalog costs in a model's context. Each tool's
//! definition (as `tools/list` gives it, which clients hand to the model), each prompt and
//! resource is counted with a real tokenizer (OpenAI's `o200k_base`), sorted, with the
//! outliers named; `--max-total` fails a CI job when the catalog outgrows its budget.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use serde_json::Value;
use wharf::client::{Client, ClientError};

use crate::answers::Declining;
use crate::exit;
use crate::render;
use crate::server_args::{ServerArgs, block_on_unless_stopped, only_target, runtime};
use crate::surface::listed;
use crate::terminal_text::escaped;

/// The tokenizer: GPT-4o's and later OpenAI models'; other vendors' tokenizers count within a
/// few percent of it on JSON and English. Result budgets count with the same one.
const ENCODING: &str = wharf::results::TOKEN_ENCODING;

#[derive(Debug, Args)]
pub(crate) struct TokensArgs {
    /// [URL]: the server, when it is reached over HTTP.
    #[arg(value_name = "[URL]")]
    words: Vec<String>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Exit 1 when the whole catalog costs more than this many tokens.
    #[arg(long, value_name = "N")]
    max_total: Option<usize>,
    #[command(flatten)]
    server: ServerArgs,
}

/// One tool's cost.
#[derive(Debug, Serialize)]
pub(crate) struct ToolCost {
    name: String,
    /// The whole definition, as listed.
    total: usize,
    description: usize,
    /// The input and output schemas.
    schema: usize,
}

/// The catalog's cost.
#[derive(Debug, Serialize)]
pub(crate) struct Costs {
    encoding: &'static str,
    tools: Vec<ToolCost>,
    tools_total: usize,
    prompts: Vec<(String, usize)>,
    prompts_total: usize,
    resources: Vec<(String, usize)>,
    resources_total: usize,
    total: usize,
    warnings: Vec<String>,
}

/// Counts `text` with the tokenizer.
fn count(text: &str) -> usize {
    wharf::results::count_tokens(text)
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

pub(crate) fn tokens(mut args: TokensArgs) -> ExitCode {
    let target = match only_target("tokens", &mut args.words, &args.server) {
        Ok(target) => target,
        Err(exit) => return exit,
    };
    let options = match args.server.options(&target, Declining { tell: false }) {
        Ok(options) => options,
        Err(message) => return exit::usage("tokens", &message),
    };
    let costs = block_on_unless_stopped(&runtime(), async {
        let client = Client::connect_with(target, options).await?;
        let costs = measure(&client).await;
        client.close().await;
        costs
    });
    let costs = match costs {
        Ok(costs) => costs,
        Err(stopped) => stopped.exit("tokens"),
    };
    let costs = match costs {
        Ok(costs) => costs,
        Err(err) => return exit::failure("tokens", &err),
    };
    let mut out = std::io::stdout().lock();
    let _ = if args.json { render::json(&mut out, &costs) } else { print(&mut out, &costs) };
    match args.max_total {
        Some(budget) if costs.total > budget => {
            eprintln!("wharf tokens: the catalog costs {} tokens, over the budget of {budget}", costs.total);
            ExitCode::from(exit::TOOL_ERROR)
        }
        _ => ExitCode::SUCCESS,
    }
}

pub(crate) async fn measure(client: &Client) -> Result<Costs, ClientError> {
    let capabilities = client.capabilities().clone();
    let mut tools = Vec::new();
    if capabilities.tools.is_some() {
        for (name, tool) in listed(client, "tools/list", "tools", "name").await? {
            let description = tool.get("description").and_then(Value::as_str).map_or(0, count);
            let schema = ["inputSchema", "outputSchema"]
                .iter()
                .filter_map(|key| tool.get(*key))
                .map(|schema| count(&compact(schema)))
                .sum();
            tools.push(ToolCost { name, total: count(&compact(&tool)), description, schema });
        }
    }
    tools.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
    let mut prompts = Vec::new();
    if capabilities.prompts.is_some() {
        for (name, prompt) in listed(client, "prompts/list", "prompts", "name").await? {
            prompts.push((name, count(&compact(&prompt))));
        }
    }
    let mut resources = Vec::new();
    if capabilities.resources.is_some() {
        for (uri, resource) in listed(client, "resources/list", "resources", "uri").await? {
            resources.push((uri, count(&compact(&resource))));
        }
        for (uri, template) in listed(client, "resources/templates/list", "resourceTemplates", "uriTemplate").await? {
            resources.push((uri, count(&compact(&template))));
        }
    }
    for list in [&mut prompts, &mut resources] {
        list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    }
    let tools_total = tools.iter().map(|tool| tool.total).sum();
    let prompts_total = prompts.iter().map(|(_, cost)| cost).sum();
    let resources_total = resources.iter().map(|(_, cost)| cost).sum();
    let warnings = outliers(&tools);
    Ok(Costs {
        encoding: ENCODING,
        total: tools_total + prompts_total + resources_total,
        tools,
        tools_total,
        prompts,
        prompts_total,
        resources,
        resources_total,
        warnings,
    })
}

/// Tools whose description or schema costs far more than the others': over three times the
/// median and over a floor (a catalog of short tools has no outliers worth a warning).
/// A part of a tool's definition: its name, its cost, and the cost below which it is never an
/// outlier.
type Part = (&'static str, fn(&ToolCost) -> usize, usize);

fn outliers(tools: &[ToolCost]) -> Vec<String> {
    let parts: [Part; 2] = [("description", |tool| tool.description, 150), ("schema", |tool| tool.schema, 300)];
    let mut warnings = Vec::new();
    for (part, cost, floor) in parts {
        let mut costs: Vec<usize> = tools.iter().map(cost).collect();
        costs.sort_unstable();
        let median = costs.get(costs.len() / 2).copied().unwrap_or(0).max(1);
        for tool in tools.iter().filter(|tool| cost(tool) > floor && cost(tool) > 3 * median) {
            let tokens = cost(tool);
            warnings.push(format!(
                "the {part} of `{}` costs {tokens} tokens, {}x the median ({median})",
                tool.name,
                tokens / median
            ));
        }
    }
    warnings
}

fn print(out: &mut impl Write, costs: &Costs) -> std::io::Result<()> {
    if !costs.tools.is_empty() {
        let rows: Vec<Vec<String>> = costs
            .tools
            .iter()
            .map(|tool| {
                vec![tool.name.clone(), tool.total.to_string(), tool.description.to_string(), tool.schema.to_string()]
            })
            .collect();
        render::table(out, &["TOOL", "TOKENS", "DESCRIPTION", "SCHEMA"], &rows)?;
        writeln!(out)?;
    }
    for (title, items) in [("PROMPT", &costs.prompts), ("RESOURCE", &costs.resources)] {
        if !items.is_empty() {
            let rows: Vec<Vec<String>> =
                items.iter().map(|(name, cost)| vec![name.clone(), cost.to_string()]).collect();
            render::table(out, &[title, "TOKENS"], &rows)?;
            writeln!(out)?;
        }
    }
    writeln!(out, "tools:     {:>7} tokens ({} tools)", costs.tools_total, costs.tools.len())?;
    writeln!(out, "prompts:   {:>7} tokens ({} prompts)", costs.prompts_total, costs.prompts.len())?;
    writeln!(
        out,
        "resources: {:>7} tokens ({} resources and templates)",
        costs.resources_total,
        costs.resources.len()
    )?;
    writeln!(out, "total:     {:>7} tokens ({})", costs.total, costs.encoding)?;
    for warning in &costs.warnings {
        // A warning names the server's tools: escaped, so they cannot drive a terminal.
        writeln!(out, "warning: {}", escaped(warning))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokenizer_counts_as_o200k_base_does() {
        // "hello world" is two tokens in every OpenAI encoding.
        assert_eq!(count("hello world"), 2);
        assert!(count(r#"{"type":"object","properties":{"a":{"type":"number"}}}"#) > 10);
    }

    #[test]
    fn outliers_stand_far_above_the_median() {
        let tool = |name: &str, description: usize, schema: usize| ToolCost {
            name: name.to_owned(),
            total: description + schema,
            description,
            schema,
        };
        let tools = vec![tool("a", 40, 100), tool("b", 50, 110), tool("c", 900, 120), tool("d", 45, 2000)];
        let warnings = outliers(&tools);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("description of `c` costs 900 tokens"), "{warnings:?}");
        assert!(warnings[1].contains("schema of `d` costs 2000 tokens"), "{warnings:?}");
        assert!(outliers(&[tool("a", 100, 100), tool("b", 120, 120)]).is_empty());
    }
}
