//! `wharf list SERVER [tools|prompts|resources|templates]`: what a server offers, as a table or
//! as JSON; a tool's MCP Apps view in a column of its own when any tool has one.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use wharf::client::{Client, ClientError};
use wharf::protocol::{Tool, ToolUiMeta, UI_META_KEY};

use crate::answers::Declining;
use crate::exit;
use crate::render;
use crate::server_args::{ServerArgs, block_on_unless_stopped, runtime, take_target};

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum What {
    /// Tools, with their arguments (`*` marks the required ones).
    Tools,
    /// Prompts, with their arguments.
    Prompts,
    /// Resources.
    Resources,
    /// Resource templates.
    Templates,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// [URL] [tools|prompts|resources|templates]: everything the server offers unless one kind
    /// is named.
    #[arg(value_name = "[URL] [WHAT]")]
    words: Vec<String>,
    /// Print JSON (an object of arrays, or one array when a kind is named) instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub(crate) fn list(mut args: ListArgs) -> ExitCode {
    let target = match take_target(&mut args.words, &args.server) {
        Ok(target) => target,
        Err(message) => return exit::usage("list", &message),
    };
    let what = match args.words.as_slice() {
        [] => None,
        [word] => match What::from_str(word, true) {
            Ok(what) => Some(what),
            Err(_) => return exit::usage("list", &format!("`{word}` is not tools, prompts, resources or templates")),
        },
        _ => return exit::usage("list", "name one kind at most: tools, prompts, resources or templates"),
    };
    let options = match args.server.options(&target, Declining { tell: true }) {
        Ok(options) => options,
        Err(message) => return exit::usage("list", &message),
    };
    block_on_unless_stopped(&runtime(), async {
        let client = match Client::connect_with(target, options).await {
            Ok(client) => client,
            Err(err) => return exit::failure("list", &err),
        };
        let listed = listing(&client, what, args.json).await;
        client.close().await;
        match listed {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => exit::failure("list", &err),
        }
    })
    .unwrap_or_else(|stopped| stopped.exit("list"))
}

/// The kinds to list: the one named, or each the server declares.
fn kinds(client: &Client, what: Option<What>) -> Vec<What> {
    if let Some(what) = what {
        return vec![what];
    }
    let capabilities = client.capabilities();
    let mut kinds = Vec::new();
    if capabilities.tools.is_some() {
        kinds.push(What::Tools);
    }
    if capabilities.prompts.is_some() {
        kinds.push(What::Prompts);
    }
    if capabilities.resources.is_some() {
        kinds.extend([What::Resources, What::Templates]);
    }
    kinds
}

/// The MCP Apps view a tool names (`_meta.ui.resourceUri`), marked when only views may call
/// the tool.
fn view_of(tool: &Tool) -> Option<String> {
    let ui = tool.meta.as_ref()?.get(UI_META_KEY)?;
    let meta: ToolUiMeta = serde_json::from_value(ui.clone()).ok()?;
    let uri = meta.resource_uri.clone()?;
    Some(if meta.visible_to_model() { uri } else { format!("{uri} (app only)") })
}

async fn listing(client: &Client, what: Option<What>, as_json: bool) -> Result<(), ClientError> {
    let mut out = std::io::stdout().lock();
    let mut all = serde_json::Map::new();
    let kinds = kinds(client, what);
    for (at, kind) in kinds.iter().enumerate() {
        let (key, value, header, rows) = match kind {
            What::Tools => {
                let tools = client.list_tools().await?;
                let rows: Vec<Vec<String>> = tools
                    .iter()
                    .map(|tool| {
                        let required: Vec<&str> = tool
                            .input_schema
                            .get("required")
                            .and_then(Value::as_array)
                            .map(|names| names.iter().filter_map(Value::as_str).collect())
                            .unwrap_or_default();
                        let arguments: Vec<String> = tool
                            .input_schema
                            .get("properties")
                            .and_then(Value::as_object)
                            .map(|properties| {
                                properties
                                    .keys()
                                    .map(|name| {
                                        if required.contains(&name.as_str()) {
                                            format!("{name}*")
                                        } else {
                                            name.clone()
                                        }
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        vec![tool.name.clone(), arguments.join(" "), tool.description.clone().unwrap_or_default()]
                    })
                    .collect();
                let views: Vec<Option<String>> = tools.iter().map(view_of).collect();
                if views.iter().any(Option::is_some) {
                    let rows = rows
                        .into_iter()
                        .zip(views)
                        .map(|(mut row, view)| {
                            row.insert(2, view.unwrap_or_default());
                            row
                        })
                        .collect();
                    ("tools", json!(tools), vec!["TOOL", "ARGUMENTS", "VIEW", "DESCRIPTION"], rows)
                } else {
                    ("tools", json!(tools), vec!["TOOL", "ARGUMENTS", "DESCRIPTION"], rows)
                }
            }
            What::Prompts => {
                let prompts = client.list_prompts().await?;
                let rows: Vec<Vec<String>> = prompts
                    .iter()
                    .map(|prompt| {
                        let arguments: Vec<String> = prompt
                            .arguments
                            .iter()
                            .flatten()
                            .map(|argument| {
                                if argument.required == Some(true) {
                                    format!("{}*", argument.name)
                                } else {
                                    argument.name.clone()
                                }
                            })
                            .collect();
                        vec![prompt.name.clone(), arguments.join(" "), prompt.description.clone().unwrap_or_default()]
                    })
                    .collect();
                ("prompts", json!(prompts), vec!["PROMPT", "ARGUMENTS", "DESCRIPTION"], rows)
            }
            What::Resources => {
                let resources = client.list_resources().await?;
                let rows: Vec<Vec<String>> = resources
                    .iter()
                    .map(|resource| {
                        vec![
                            resource.uri.clone(),
                            resource.mime_type.clone().unwrap_or_default(),
                            resource.description.clone().unwrap_or_else(|| resource.name.clone()),
                        ]
                    })
                    .collect();
                ("resources", json!(resources), vec!["RESOURCE", "MIME TYPE", "DESCRIPTION"], rows)
            }
            What::Templates => {
                let templates = client.list_resource_templates().await?;
                let rows: Vec<Vec<String>> = templates
                    .iter()
                    .map(|template| {
                        vec![
                            template.uri_template.clone(),
                            template.mime_type.clone().unwrap_or_default(),
                            template.description.clone().unwrap_or_else(|| template.name.clone()),
                        ]
                    })
                    .collect();
                ("templates", json!(templates), vec!["TEMPLATE", "MIME TYPE", "DESCRIPTION"], rows)
            }
        };
        if as_json {
            all.insert(key.to_owned(), value);
            continue;
        }
        if at > 0 {
            let _ = writeln!(out);
        }
        if rows.is_empty() {
            let _ = writeln!(out, "(no {key})");
        } else {
            let _ = render::table(&mut out, &header, &rows);
        }
    }
    if as_json {
        let value = match what {
            Some(_) => all.into_iter().next().map(|(_, value)| value).unwrap_or(Value::Null),
            None => Value::Object(all),
        };
        let _ = render::json(&mut out, &value);
    }
    Ok(())
}
