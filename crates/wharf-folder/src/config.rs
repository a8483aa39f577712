//! `wharf.toml` (and `tools.toml`, for the tools alone): the server's name and description,
//! the URI scheme of the folder's resources, and its command tools.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Everything the configuration files say.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    #[serde(default)]
    pub(crate) server: ServerSection,
    #[serde(default)]
    pub(crate) resources: ResourcesSection,
    #[serde(default)]
    pub(crate) tools: Vec<ToolSpec>,
}

/// `[server]`: who the server says it is.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerSection {
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) instructions: Option<String>,
}

/// `[resources]`: how the files under `resources/` are named.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResourcesSection {
    /// `docs` serves `resources/guide.md` as `docs://guide.md`.
    #[serde(default = "default_scheme")]
    pub(crate) scheme: String,
}

impl Default for ResourcesSection {
    fn default() -> ResourcesSection {
        ResourcesSection { scheme: default_scheme() }
    }
}

fn default_scheme() -> String {
    "resource".to_owned()
}

/// `[[tools]]`: a tool that runs a program.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolSpec {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    /// The program and its arguments; `{name}` stands for the tool argument `name`. Never run
    /// through a shell.
    pub(crate) command: Vec<String>,
    /// The arguments, declared one by one; they become the input schema.
    #[serde(default)]
    pub(crate) arguments: BTreeMap<String, ArgumentSpec>,
    /// The input schema in full, instead of `arguments`.
    pub(crate) input_schema: Option<Value>,
    /// Where the program runs, relative to the folder (the folder itself unless set).
    pub(crate) cwd: Option<String>,
    /// Environment variables passed on from the server's (besides `PATH`); no others are.
    #[serde(default)]
    pub(crate) env: Vec<String>,
    /// Seconds the program may run before it is killed (30 unless set).
    pub(crate) timeout: Option<f64>,
    /// What its standard output is: `text` (the default) or `json` (structured content).
    #[serde(default)]
    pub(crate) output: OutputKind,
    /// The schema of the structured content, for `output = "json"`.
    pub(crate) output_schema: Option<Value>,
    #[serde(default)]
    pub(crate) read_only: bool,
    /// Unset leaves MCP's default (a tool that is not read-only may be destructive).
    pub(crate) destructive: Option<bool>,
    #[serde(default)]
    pub(crate) idempotent: bool,
    pub(crate) open_world: Option<bool>,
    /// Who may call the tool, for a tool with a view: `["app"]` for one only its view calls.
    pub(crate) visibility: Option<Vec<wharf_protocol::Visibility>>,
}

/// What a command tool's standard output is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OutputKind {
    #[default]
    Text,
    Json,
}

/// One declared argument of a command tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArgumentSpec {
    /// `string` (the default), `integer`, `number`, `boolean`, or `array` (of strings).
    #[serde(rename = "type", default = "default_type")]
    pub(crate) kind: String,
    pub(crate) description: Option<String>,
    #[serde(default)]
    pub(crate) required: bool,
    /// The values allowed.
    #[serde(rename = "enum")]
    pub(crate) allowed: Option<Vec<Value>>,
    pub(crate) default: Option<Value>,
}

fn default_type() -> String {
    "string".to_owned()
}

impl ToolSpec {
    /// The input schema: the one given, or one made from the declared arguments.
    pub(crate) fn schema(&self) -> Result<Map<String, Value>, String> {
        if let Some(schema) = &self.input_schema {
            if !self.arguments.is_empty() {
                return Err("give `arguments` or `input_schema`, not both".to_owned());
            }
            return match schema {
                Value::Object(object) if object.get("type") == Some(&json!("object")) => Ok(object.clone()),
                _ => Err("`input_schema` must be a JSON Schema of `\"type\": \"object\"`".to_owned()),
            };
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (name, argument) in &self.arguments {
            let mut property = Map::new();
            match argument.kind.as_str() {
                "string" | "integer" | "number" | "boolean" => {
                    property.insert("type".to_owned(), json!(argument.kind));
                }
                "array" => {
                    property.insert("type".to_owned(), json!("array"));
                    property.insert("items".to_owned(), json!({"type": "string"}));
                }
                other => {
                    return Err(format!(
                        "argument `{name}` has type `{other}`; it can be string, integer, number, boolean or array"
                    ));
                }
            }
            if let Some(description) = &argument.description {
                property.insert("description".to_owned(), json!(description));
            }
            if let Some(allowed) = &argument.allowed {
                property.insert("enum".to_owned(), Value::Array(allowed.clone()));
            }
            if let Some(default) = &argument.default {
                property.insert("default".to_owned(), default.clone());
            }
            if argument.required {
                required.push(json!(name));
            }
            properties.insert(name.clone(), Value::Object(property));
        }
        let mut schema = Map::new();
        schema.insert("type".to_owned(), json!("object"));
        schema.insert("properties".to_owned(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(required));
        }
        schema.insert("additionalProperties".to_owned(), json!(false));
        Ok(schema)
    }
}
