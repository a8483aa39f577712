//! `wharf lock SERVER`: the server's surface (tools, prompts, resources, templates: names,
//! descriptions, schemas, annotations) written to `mcp.lock`, sorted, for review in version
//! control; `--check` compares the server with the file and fails with the differences, each
//! classed as breaking (a client that worked may fail: a tool removed, a new required
//! argument, a narrowed type) or additive (nothing that worked breaks), for CI.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Map, Value, json};
use wharf::client::Client;

use crate::answers::Declining;
use crate::exit;
use crate::server_args::{ServerArgs, block_on_unless_stopped, only_target, runtime};
use crate::surface::{self, Surface};

#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    /// [URL]: the server, when it is reached over HTTP.
    #[arg(value_name = "[URL]")]
    words: Vec<String>,
    /// The lockfile.
    #[arg(long, short = 'o', value_name = "FILE", default_value = "mcp.lock")]
    file: PathBuf,
    /// Compare the server with the lockfile instead of writing it: exit 1, naming each
    /// difference as breaking or additive, when they differ.
    #[arg(long)]
    check: bool,
    /// Print the differences as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// The lockfile's format version.
const LOCK_VERSION: u64 = 1;

/// The members of a definition that are part of its contract.
fn kept(definition: &Value, members: &[&str]) -> Value {
    let mut object = Map::new();
    for member in members {
        if let Some(value) = definition.get(*member) {
            object.insert((*member).to_owned(), sorted(value));
        }
    }
    Value::Object(object)
}

/// `value` with every object's members sorted, so that the file is the same for the same
/// surface.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|key| (key.clone(), sorted(&object[key]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn section(items: &[(String, Value)], members: &[&str]) -> Value {
    let mut items: Vec<&(String, Value)> = items.iter().collect();
    items.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Object(items.into_iter().map(|(name, definition)| (name.clone(), kept(definition, members))).collect())
}

/// The lockfile's contents for `surface`.
pub(crate) fn lock_of(surface: &Surface) -> Value {
    json!({
        "lockVersion": LOCK_VERSION,
        "tools": section(&surface.tools, &["title", "description", "inputSchema", "outputSchema", "annotations"]),
        "prompts": section(&surface.prompts, &["title", "description", "arguments"]),
        "resources": section(&surface.resources, &["name", "title", "description", "mimeType"]),
        "resourceTemplates": section(&surface.templates, &["name", "title", "description", "mimeType"]),
    })
}

/// One difference between the lockfile and the server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Change {
    /// `breaking` or `additive`.
    pub(crate) kind: &'static str,
    pub(crate) what: String,
}

fn breaking(what: String) -> Change {
    Change { kind: "breaking", what }
}

fn additive(what: String) -> Change {
    Change { kind: "additive", what }
}

/// The types a schema allows, as a set of names; `None` for any.
fn types(schema: &Value) -> Option<Vec<String>> {
    match schema.get("type") {
        Some(Value::String(kind)) => Some(vec![kind.clone()]),
        Some(Value::Array(kinds)) => Some(kinds.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => None,
    }
}

fn names(schema: &Value, member: &str) -> Vec<String> {
    match schema.get(member) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Some(Value::Object(object)) => object.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The differences between a tool's input schemas: arguments removed or newly required are
/// breaking, new optional ones additive; a type or `enum` narrowed is breaking, widened
/// additive; any other change to an argument's schema is counted breaking, as it may refuse
/// what passed.
fn input_changes(tool: &str, old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let (old_properties, new_properties) = (names(old, "properties"), names(new, "properties"));
    let (old_required, new_required) = (names(old, "required"), names(new, "required"));
    for name in &old_properties {
        if !new_properties.contains(name) {
            changes.push(breaking(format!("tool `{tool}`: argument `{name}` removed")));
        }
    }
    for name in &new_properties {
        if old_properties.contains(name) {
            continue;
        }
        if new_required.contains(name) {
            changes.push(breaking(format!("tool `{tool}`: new required argument `{name}`")));
        } else {
            changes.push(additive(format!("tool `{tool}`: new optional argument `{name}`")));
        }
    }
    for name in new_required.iter().filter(|name| old_properties.contains(name) && !old_required.contains(name)) {
        changes.push(breaking(format!("tool `{tool}`: argument `{name}` is now required")));
    }
    for name in old_required.iter().filter(|name| new_properties.contains(name) && !new_required.contains(name)) {
        changes.push(additive(format!("tool `{tool}`: argument `{name}` is now optional")));
    }
    for name in old_properties.iter().filter(|name| new_properties.contains(name)) {
        let (before, after) = (&old["properties"][name], &new["properties"][name]);
        if before == after {
            continue;
        }
        let (old_types, new_types) = (types(before), types(after));
        if old_types != new_types {
            let widened = match (&old_types, &new_types) {
                (_, None) => true,
                (Some(old), Some(new)) => old.iter().all(|kind| new.contains(kind)),
                (None, Some(_)) => false,
            };
            let shown = |kinds: &Option<Vec<String>>| kinds.as_ref().map_or("any".to_owned(), |kinds| kinds.join("|"));
            let what = format!("tool `{tool}`: argument `{name}` type {} -> {}", shown(&old_types), shown(&new_types));
            changes.push(if widened {
                additive(format!("{what} (widened)"))
            } else {
                breaking(format!("{what} (narrowed)"))
            });
            continue;
        }
        let (old_enum, new_enum) = (before.get("enum"), after.get("enum"));
        if old_enum != new_enum && strip(before, "enum") == strip(after, "enum") {
            let old_values = old_enum.and_then(Value::as_array).cloned().unwrap_or_default();
            let new_values = new_enum.and_then(Value::as_array).cloned();
            let widened = new_values.as_ref().is_none_or(|new| old_values.iter().all(|value| new.contains(value)));
            let what = format!("tool `{tool}`: argument `{name}` enum changed");
            changes.push(if widened {
                additive(format!("{what} (values added)"))
            } else {
                breaking(format!("{what} (values removed)"))
            });
            continue;
        }
        if strip(before, "description") == strip(after, "description") {
            changes.push(additive(format!("tool `{tool}`: argument `{name}` description changed")));
        } else {
            changes.push(breaking(format!("tool `{tool}`: argument `{name}` schema changed")));
        }
    }
}

fn strip(schema: &Value, member: &str) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove(member);
    }
    schema
}

/// The differences between two lockfiles' contents.
pub(crate) fn changes(old: &Value, new: &Value) -> Vec<Change> {
    let mut changes = Vec::new();
    for (section, what) in [
        ("tools", "tool"),
        ("prompts", "prompt"),
        ("resources", "resource"),
        ("resourceTemplates", "resource template"),
    ] {
        let empty = Map::new();
        let before = old.get(section).and_then(Value::as_object).unwrap_or(&empty);
        let after = new.get(section).and_then(Value::as_object).unwrap_or(&empty);
        for name in before.keys().filter(|name| !after.contains_key(*name)) {
            changes.push(breaking(format!("{what} `{name}` removed")));
        }
        for name in after.keys().filter(|name| !before.contains_key(*name)) {
            changes.push(additive(format!("{what} `{name}` added")));
        }
        for (name, old_definition) in before {
            let Some(new_definition) = after.get(name) else { continue };
            if old_definition == new_definition {
                continue;
            }
            match section {
                "tools" => {
                    let (old_input, new_input) = (&old_definition["inputSchema"], &new_definition["inputSchema"]);
                    if old_input != new_input {
                        input_changes(name, old_input, new_input, &mut changes);
                    }
                    let (old_output, new_output) = (&old_definition["outputSchema"], &new_definition["outputSchema"]);
                    let removed: Vec<String> = names(old_output, "properties")
                        .into_iter()
                        .filter(|member| !names(new_output, "properties").contains(member))
                        .collect();
                    for member in removed {
                        changes.push(breaking(format!("tool `{name}`: result member `{member}` removed")));
                    }
                    if old_output != new_output && names(old_output, "properties") == names(new_output, "properties") {
                        changes.push(additive(format!("tool `{name}`: output schema changed")));
                    }
                    for member in ["title", "description", "annotations"] {
                        if old_definition.get(member) != new_definition.get(member) {
                            changes.push(additive(format!("tool `{name}`: {member} changed")));
                        }
                    }
                }
                "prompts" => {
                    let arguments = |definition: &Value| -> Vec<(String, bool)> {
                        definition["arguments"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|argument| {
                                Some((argument["name"].as_str()?.to_owned(), argument["required"] == true))
                            })
                            .collect()
                    };
                    let (before_arguments, after_arguments) = (arguments(old_definition), arguments(new_definition));
                    for (argument, _) in before_arguments
                        .iter()
                        .filter(|(known, _)| !after_arguments.iter().any(|(new, _)| new == known))
                    {
                        changes.push(breaking(format!("prompt `{name}`: argument `{argument}` removed")));
                    }
                    for (argument, required) in after_arguments
                        .iter()
                        .filter(|(new, _)| !before_arguments.iter().any(|(known, _)| known == new))
                    {
                        let what = format!(
                            "prompt `{name}`: new {} argument `{argument}`",
                            if *required { "required" } else { "optional" }
                        );
                        changes.push(if *required { breaking(what) } else { additive(what) });
                    }
                    if before_arguments.iter().map(|(name, _)| name).eq(after_arguments.iter().map(|(name, _)| name)) {
                        changes.push(additive(format!("prompt `{name}` changed")));
                    }
                }
                _ => changes.push(additive(format!("{what} `{name}` changed"))),
            }
        }
    }
    changes
}

pub(crate) fn lock(mut args: LockArgs) -> ExitCode {
    let target = match only_target("lock", &mut args.words, &args.server) {
        Ok(target) => target,
        Err(exit) => return exit,
    };
    let options = match args.server.options(&target, Declining { tell: false }) {
        Ok(options) => options,
        Err(message) => return exit::usage("lock", &message),
    };
    let fetched = block_on_unless_stopped(&runtime(), async {
        let client = Client::connect_with(target, options).await?;
        let surface = surface::fetch(&client).await;
        client.close().await;
        surface
    });
    let fetched = match fetched {
        Ok(fetched) => fetched,
        Err(stopped) => stopped.exit("lock"),
    };
    let surface = match fetched {
        Ok(surface) => surface,
        Err(err) => return exit::failure("lock", &err),
    };
    let now = lock_of(&surface);
    let text = serde_json::to_string_pretty(&now).unwrap_or_default() + "\n";
    if !args.check {
        if let Err(err) = std::fs::write(&args.file, text) {
            eprintln!("wharf lock: {}: {err}", args.file.display());
            return ExitCode::from(exit::USAGE);
        }
        eprintln!("wharf lock: wrote {}", args.file.display());
        return ExitCode::SUCCESS;
    }
    let locked = match std::fs::read_to_string(&args.file)
        .map_err(|err| err.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|err| format!("not a lockfile: {err}")))
    {
        Ok(locked) => locked,
        Err(why) => {
            eprintln!("wharf lock: {}: {why}", args.file.display());
            return ExitCode::from(exit::USAGE);
        }
    };
    let found = changes(&locked, &now);
    if args.json {
        let breaking = found.iter().filter(|change| change.kind == "breaking").count();
        println!("{}", json!({"changes": found, "breaking": breaking, "additive": found.len() - breaking}));
    } else {
        for change in &found {
            println!("{:9} {}", change.kind, change.what);
        }
        let breaking = found.iter().filter(|change| change.kind == "breaking").count();
        println!(
            "{} changes since {}: {breaking} breaking, {} additive",
            found.len(),
            args.file.display(),
            found.len() - breaking
        );
    }
    if found.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(exit::TOOL_ERROR) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(input: Value) -> Value {
        json!({"tools": {"t": {"inputSchema": input}}})
    }

    #[test]
    fn changes_are_breaking_or_additive() {
        let old = tool(
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "enum": ["x", "y"]}, "b": {"type": "integer"}}}),
        );
        let new = tool(
            json!({"type": "object", "required": ["a", "c"], "properties": {"a": {"type": "string", "enum": ["x"]}, "c": {"type": "string"}, "d": {"type": "boolean"}}}),
        );
        let found: Vec<String> =
            changes(&old, &new).into_iter().map(|change| format!("{}: {}", change.kind, change.what)).collect();
        for wanted in [
            "breaking: tool `t`: argument `b` removed",
            "breaking: tool `t`: new required argument `c`",
            "additive: tool `t`: new optional argument `d`",
            "breaking: tool `t`: argument `a` enum changed (values removed)",
        ] {
            assert!(found.contains(&wanted.to_owned()), "{wanted} not in {found:#?}");
        }
        let gone = changes(&json!({"tools": {"t": {}}, "prompts": {}}), &json!({"tools": {}, "prompts": {"p": {}}}));
        assert_eq!(gone, [breaking("tool `t` removed".to_owned()), additive("prompt `p` added".to_owned())]);
        let widened = changes(
            &tool(json!({"properties": {"n": {"type": "integer"}}})),
            &tool(json!({"properties": {"n": {"type": ["integer", "string"]}}})),
        );
        assert_eq!(widened[0].kind, "additive", "{widened:?}");
    }
}
