//! The operations of a document, each as the tool it becomes: its name, description,
//! annotations, the JSON Schema of its arguments (path, query, header and cookie parameters,
//! and the request body as `body`) and of its JSON answer, and where each argument goes in the
//! request.

use serde_json::{Map, Value, json};
use wharf_protocol::{JsonObject, ToolAnnotations};

use crate::error::{OpenApiError, OpenApiErrorKind};
use crate::names::{make_unique, tool_name};
use crate::schema::Converter;

/// The methods an OpenAPI path item may have, in the order operations are read.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Header parameters that are not arguments: `Accept`, `Content-Type` and `Authorization`
/// (which OpenAPI says to ignore), and those that frame the request.
const RESERVED_HEADERS: [&str; 9] = [
    "accept",
    "content-type",
    "authorization",
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "cookie",
    "te",
];

/// The longest description given a tool, in characters: summary and description together.
const MAX_DESCRIPTION: usize = 1024;

/// Where a parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A segment of the path, `{name}` in the template.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
    /// A cookie.
    Cookie,
}

/// One parameter of an operation, and the argument that carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// The argument's name in the tool's schema.
    pub argument: String,
    /// The parameter's name in the request.
    pub name: String,
    /// Where it goes.
    pub place: Place,
    /// How it is written (`form`, `simple`, ...); the place's default when absent.
    pub style: Option<String>,
    /// Whether arrays and objects are written as separate parameters.
    pub explode: Option<bool>,
}

/// How the request body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// JSON (`application/json`, `+json`): the argument's value.
    Json,
    /// `application/x-www-form-urlencoded`: the argument's members.
    Form,
    /// Text (`text/*`): the argument, a string, as it is.
    Text,
    /// Other bytes (`application/octet-stream`, an image): the argument, a base64 string,
    /// decoded.
    Bytes,
}

/// The request body of an operation, and the argument that carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// How it is written.
    pub kind: BodyKind,
    /// The argument's name in the tool's schema.
    pub argument: String,
    /// Its `Content-Type`.
    pub media_type: String,
}

/// One operation as a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationTool {
    /// The tool's name, unique in the document.
    pub name: String,
    /// The operation's `operationId`, when it has one.
    pub operation_id: Option<String>,
    /// The HTTP method, upper case.
    pub method: String,
    /// The path template, as the document writes it (`/pets/{id}`).
    pub path: String,
    /// Its summary and description, within a length budget.
    pub description: Option<String>,
    /// The arguments' JSON Schema (2020-12).
    pub input_schema: JsonObject,
    /// The JSON Schema of a successful JSON answer, when it is an object.
    pub output_schema: Option<JsonObject>,
    /// What the method says of the call.
    pub annotations: ToolAnnotations,
    /// The parameters, in the order the document lists them.
    pub parameters: Vec<Parameter>,
    /// The request body, when the operation takes one.
    pub body: Option<Body>,
    /// The operation's tags.
    pub tags: Vec<String>,
    /// True when the document marks the operation deprecated.
    pub deprecated: bool,
}

/// What reading a document's operations gave: the tools, and what was left out or renamed,
/// each said in a sentence naming the operation.
#[derive(Debug, Clone, Default)]
pub struct Operations {
    /// The operations made into tools, by path (sorted), then by method (GET, PUT, POST,
    /// DELETE, OPTIONS, HEAD, PATCH, TRACE).
    pub tools: Vec<OperationTool>,
    /// What was left out (an operation that could not be made into a tool) or renamed.
    pub notes: Vec<String>,
}

/// Reads every operation of `document`, an OpenAPI 3.0 or 3.1 document as JSON.
pub fn operations(document: &Value) -> Result<Operations, OpenApiError> {
    let version = document.get("openapi").and_then(Value::as_str).unwrap_or_default();
    let legacy = match version.get(..4) {
        Some("3.0.") => true,
        Some("3.1.") => false,
        _ => {
            return Err(OpenApiError::new(
                OpenApiErrorKind::NotOpenApi,
                format!("the document is not OpenAPI 3.0 or 3.1 (its `openapi` is `{version}`)"),
            ));
        }
    };
    let mut converter = Converter::new(document, legacy);
    let mut read = Operations::default();
    let paths = document.get("paths").and_then(Value::as_object).cloned().unwrap_or_default();
    for (path, item) in &paths {
        let item = match converter.dereference(item) {
            Ok(item) => item,
            Err(err) => {
                read.notes.push(format!("the path `{path}` is left out: {err}"));
                continue;
            }
        };
        let shared: &[Value] = item.get("parameters").and_then(Value::as_array).map_or(&[], Vec::as_slice);
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            match tool(&mut converter, method, path, operation, shared) {
                Ok(tool) => read.tools.push(tool),
                Err(err) => read.notes.push(format!("{} {path} is left out: {err}", method.to_ascii_uppercase())),
            }
        }
    }
    let mut names: Vec<String> = read.tools.iter().map(|tool| tool.name.clone()).collect();
    for (was, now) in make_unique(&mut names) {
        read.notes.push(format!("two operations are named `{was}`: the later one is `{now}`"));
    }
    for (tool, name) in read.tools.iter_mut().zip(names) {
        tool.name = name;
    }
    Ok(read)
}

fn tool(
    converter: &mut Converter<'_>,
    method: &str,
    path: &str,
    operation: &Value,
    shared: &[Value],
) -> Result<OperationTool, OpenApiError> {
    let operation_id = operation.get("operationId").and_then(Value::as_str).map(str::to_owned);
    converter.begin();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut parameters = Vec::new();
    // The operation's own parameters replace the path item's of the same name and place.
    let own: &[Value] = operation.get("parameters").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let mut listed: Vec<&Value> = Vec::new();
    for parameter in own.iter().chain(shared) {
        let parameter = converter.dereference(parameter)?;
        let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
        if !listed.iter().any(|known| key(known) == key(parameter)) {
            listed.push(parameter);
        }
    }
    for parameter in listed {
        let name = parameter.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let place = match parameter.get("in").and_then(Value::as_str) {
            Some("path") => Place::Path,
            Some("query") => Place::Query,
            Some("header") => Place::Header,
            Some("cookie") => Place::Cookie,
            other => {
                return Err(OpenApiError::new(
                    OpenApiErrorKind::NotOpenApi,
                    format!("the parameter `{name}` is in `{}`, which is no place", other.unwrap_or_default()),
                ));
            }
        };
        if name.is_empty() {
            return Err(OpenApiError::new(OpenApiErrorKind::NotOpenApi, "a parameter has no name"));
        }
        // OpenAPI says to ignore these three; the others would let an argument steer the
        // request itself (which virtual host, how long the body is).
        if place == Place::Header && RESERVED_HEADERS.iter().any(|reserved| reserved.eq_ignore_ascii_case(&name)) {
            continue;
        }
        let schema = parameter
            .get("schema")
            .or_else(|| parameter.get("content").and_then(first_media_schema))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut schema = converter.convert_part(&schema)?;
        describe(&mut schema, parameter.get("description"));
        let argument =
            if properties.contains_key(&name) { format!("{}_{name}", place_label(place)) } else { name.clone() };
        if place == Place::Path || parameter.get("required") == Some(&Value::Bool(true)) {
            required.push(Value::String(argument.clone()));
        }
        properties.insert(argument.clone(), schema);
        let style = parameter.get("style").and_then(Value::as_str).map(str::to_owned);
        let explode = parameter.get("explode").and_then(Value::as_bool);
        parameters.push(Parameter { argument, name, place, style, explode });
    }
    let mut body = None;
    if let Some(request_body) = operation.get("requestBody") {
        let request_body = converter.dereference(request_body)?;
        let content = request_body.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        // JSON first, then a form, then text, then other bytes; multipart is not sent.
        let kinds = content.keys().filter_map(|media| body_kind(media).map(|kind| (kind, media)));
        let Some((kind, media_type)) = kinds.min_by_key(|(kind, _)| *kind as u8) else {
            let types: Vec<&String> = content.keys().collect();
            return Err(OpenApiError::new(
                OpenApiErrorKind::NotOpenApi,
                format!("its request body is of no type Wharf sends (it is {types:?})"),
            ));
        };
        let media = &content[media_type.as_str()];
        let mut schema = match kind {
            BodyKind::Json | BodyKind::Form => converter.convert_part(media.get("schema").unwrap_or(&json!({})))?,
            BodyKind::Text => json!({"type": "string"}),
            BodyKind::Bytes => json!({"type": "string", "contentEncoding": "base64", "contentMediaType": media_type}),
        };
        describe(&mut schema, request_body.get("description"));
        let argument = if properties.contains_key("body") { "request_body" } else { "body" }.to_owned();
        if request_body.get("required") == Some(&Value::Bool(true)) {
            required.push(Value::String(argument.clone()));
        }
        properties.insert(argument.clone(), schema);
        let media_type = if kind == BodyKind::Json { "application/json".to_owned() } else { media_type.clone() };
        body = Some(Body { kind, argument, media_type });
    }
    let mut input = json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    let input_schema = match converter.attach_defs(input) {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    let output_schema = output_schema(converter, operation)?;
    let summary = operation.get("summary").and_then(Value::as_str);
    let description = description(summary, operation.get("description").and_then(Value::as_str));
    let tags = operation
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| tags.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(OperationTool {
        name: tool_name(operation_id.as_deref(), method, path),
        operation_id,
        method: method.to_ascii_uppercase(),
        path: path.to_owned(),
        description,
        input_schema,
        output_schema,
        annotations: annotations(method, summary),
        parameters,
        body,
        tags,
        deprecated: operation.get("deprecated") == Some(&Value::Bool(true)),
    })
}

/// The schema of the first 2xx answer's JSON, when it is an object (MCP's `outputSchema` must
/// be).
fn output_schema(converter: &mut Converter<'_>, operation: &Value) -> Result<Option<JsonObject>, OpenApiError> {
    let Some(responses) = operation.get("responses").and_then(Value::as_object) else { return Ok(None) };
    let mut codes: Vec<&String> = responses.keys().filter(|code| code.starts_with('2') && code.len() == 3).collect();
    codes.sort();
    let Some(code) = codes.first() else { return Ok(None) };
    let response = converter.dereference(&responses[code.as_str()])?;
    let Some(schema) = response
        .get("content")
        .and_then(Value::as_object)
        .and_then(|content| content.iter().find(|(media, _)| is_json(media)))
        .and_then(|(_, media)| media.get("schema"))
    else {
        return Ok(None);
    };
    let Value::Object(mut object) = converter.convert_root(schema)? else { return Ok(None) };
    // A recursive schema is a `$ref` to its own definition: the root is what that is.
    let referred_type = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| object.get("$defs")?.get(name)?.get("type"))
        .cloned();
    if let Some(kind) = referred_type.filter(|_| !object.contains_key("type")) {
        object.insert("type".to_owned(), kind);
    }
    Ok((object.get("type") == Some(&json!("object"))).then_some(object))
}

/// How a body of `media` is written; `None` for multipart, which is not sent.
fn body_kind(media: &str) -> Option<BodyKind> {
    let essence = media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match essence.as_str() {
        _ if is_json(&essence) => Some(BodyKind::Json),
        "application/x-www-form-urlencoded" => Some(BodyKind::Form),
        text if text.starts_with("text/") => Some(BodyKind::Text),
        multipart if multipart.starts_with("multipart/") => None,
        "" => None,
        _ => Some(BodyKind::Bytes),
    }
}

/// True for `application/json` and the `+json` types.
fn is_json(media: &str) -> bool {
    let essence = media.split(';').next().unwrap_or_default().trim();
    essence == "application/json" || essence.ends_with("+json")
}

/// The schema of a parameter's `content` (its one media type).
fn first_media_schema(content: &Value) -> Option<&Value> {
    content.as_object()?.values().next()?.get("schema")
}

fn place_label(place: Place) -> &'static str {
    match place {
        Place::Path => "path",
        Place::Query => "query",
        Place::Header => "header",
        Place::Cookie => "cookie",
    }
}

/// Gives `schema` the parameter's `description` when it has none of its own.
fn describe(schema: &mut Value, description: Option<&Value>) {
    if let (Value::Object(object), Some(Value::String(text))) = (schema, description) {
        object.entry("description").or_insert_with(|| Value::String(text.clone()));
    }
}

/// Summary and description, the summary first, cut to [`MAX_DESCRIPTION`] characters.
fn description(summary: Option<&str>, description: Option<&str>) -> Option<String> {
    let text = match (summary.map(str::trim).filter(|s| !s.is_empty()), description.map(str::trim)) {
        (Some(summary), Some(description)) if !description.is_empty() && description != summary => {
            format!("{summary}\n\n{description}")
        }
        (Some(summary), _) => summary.to_owned(),
        (None, Some(description)) if !description.is_empty() => description.to_owned(),
        _ => return None,
    };
    if text.chars().count() <= MAX_DESCRIPTION {
        return Some(text);
    }
    let mut cut: String = text.chars().take(MAX_DESCRIPTION - 1).collect();
    cut.push('…');
    Some(cut)
}

/// What the method says: GET and HEAD only read; DELETE destroys; PUT and DELETE may be
/// repeated; every operation reaches the world outside the server.
fn annotations(method: &str, summary: Option<&str>) -> ToolAnnotations {
    let reads = matches!(method, "get" | "head" | "options");
    ToolAnnotations {
        title: summary.map(str::to_owned),
        read_only_hint: Some(reads),
        destructive_hint: (!reads).then_some(method == "delete" || method == "put"),
        idempotent_hint: Some(reads || matches!(method, "put" | "delete")),
        open_world_hint: Some(true),
    }
}
