//! Validates what the server sent against the official JSON Schema of the protocol revision in
//! use, matching each response to the method of the request it answers.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};
use wharf_protocol::ProtocolVersion;
use wharf_server::testing::InMemoryClient;

#[path = "../../../wharf-protocol/tests/support/spec_dir.rs"]
mod spec_dir;
use spec_dir::spec_dir;

type Validators = HashMap<(ProtocolVersion, String), std::sync::Arc<jsonschema::Validator>>;

fn validator(version: ProtocolVersion, definition: &str) -> std::sync::Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<Validators>> = OnceLock::new();
    static DOCUMENTS: OnceLock<Mutex<HashMap<ProtocolVersion, Value>>> = OnceLock::new();
    let key = (version, definition.to_owned());
    if let Some(found) = CACHE.get_or_init(Default::default).lock().unwrap().get(&key) {
        return found.clone();
    }
    let document = DOCUMENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(version)
        .or_insert_with(|| {
            let path = spec_dir().join(format!("{version}/schema.json"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            serde_json::from_str(&text).unwrap()
        })
        .clone();
    let defs_key = if document.get("$defs").is_some() { "$defs" } else { "definitions" };
    assert!(document[defs_key].get(definition).is_some(), "{version} has no definition `{definition}`");
    let root = json!({
        "$schema": document["$schema"],
        "$ref": format!("#/{defs_key}/{definition}"),
        defs_key: document[defs_key],
    });
    let compiled = std::sync::Arc::new(jsonschema::validator_for(&root).unwrap());
    CACHE.get().unwrap().lock().unwrap().insert(key, compiled.clone());
    compiled
}

fn check(version: ProtocolVersion, definition: &str, value: &Value) -> Result<(), String> {
    let validator = validator(version, definition);
    let errors: Vec<String> =
        validator.iter_errors(value).map(|err| format!("{} at {}", err, err.instance_path())).collect();
    if errors.is_empty() { Ok(()) } else { Err(format!("{definition}: {}", errors.join("; "))) }
}

fn result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => "EmptyResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        "tasks/get" => "GetTaskResult",
        "tasks/cancel" => "CancelTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        "tasks/list" => "ListTasksResult",
        _ => return None,
    })
}

fn notification_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        "notifications/elicitation/complete" => "ElicitationCompleteNotification",
        "notifications/tasks/status" => "TaskStatusNotification",
        _ => return None,
    })
}

fn request_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "sampling/createMessage" => "CreateMessageRequest",
        "elicitation/create" => "ElicitRequest",
        "roots/list" => "ListRootsRequest",
        "ping" => "PingRequest",
        _ => return None,
    })
}

/// Checks one message the server sent; `methods` maps request ids to the methods the client
/// called.
fn check_message(version: ProtocolVersion, message: &Value, methods: &HashMap<String, String>) -> Result<(), String> {
    let error_definition =
        if version >= ProtocolVersion::V2025_11_25 { "JSONRPCErrorResponse" } else { "JSONRPCError" };
    let result_definition_name =
        if version >= ProtocolVersion::V2025_11_25 { "JSONRPCResultResponse" } else { "JSONRPCResponse" };
    if let Value::Array(items) = message {
        for item in items {
            check_message(version, item, methods)?;
        }
        return Ok(());
    }
    let method = message.get("method").and_then(Value::as_str);
    match (method, message.get("id")) {
        (Some(method), Some(_)) => {
            check(version, "JSONRPCRequest", message)?;
            let definition = request_definition(method).ok_or(format!("unexpected server request `{method}`"))?;
            check(version, definition, message)
        }
        (Some(method), None) => {
            check(version, "JSONRPCNotification", message)?;
            if method == "notifications/tasks" {
                // The tasks extension's notification is not in the core schema.
                return Ok(());
            }
            let definition = notification_definition(method).ok_or(format!("unexpected notification `{method}`"))?;
            check(version, definition, message)
        }
        (None, id) => {
            if message.get("error").is_some() {
                return check(version, error_definition, message);
            }
            check(version, result_definition_name, message)?;
            let id = id.map(Value::to_string).unwrap_or_default();
            let method = methods.get(&id).ok_or(format!("a response to an unknown id {id}"))?;
            // tools/call, prompts/get and resources/read answer either their result or an
            // InputRequiredResult (2026-07-28), told apart by `resultType`.
            if message["result"]["resultType"] == "input_required" {
                return check(version, "InputRequiredResult", &message["result"]);
            }
            // The 2026-07-28 tasks extension's results are not in the core schema; the envelope
            // was checked. 2025-11-25 tasks are, and are checked below.
            if version.is_stateless() && (message["result"]["resultType"] == "task" || method.starts_with("tasks/")) {
                return Ok(());
            }
            if method == "tools/call" && message["result"].get("task").is_some() {
                return check(version, "CreateTaskResult", &message["result"]);
            }
            match result_definition(method) {
                Some(definition) => check(version, definition, &message["result"]),
                None => Ok(()),
            }
        }
    }
}

/// Asserts that everything `client` received validates against the schema of `version`.
pub(crate) fn assert_valid(client: &InMemoryClient, version: ProtocolVersion) {
    let mut methods = HashMap::new();
    for sent in client.sent() {
        if let (Some(id), Some(method)) = (sent.get("id"), sent.get("method").and_then(Value::as_str)) {
            methods.insert(id.to_string(), method.to_owned());
        }
    }
    let received = client.received();
    assert!(!received.is_empty(), "the client received nothing to validate");
    let failures: Vec<String> = received
        .iter()
        .filter_map(|message| {
            check_message(version, message, &methods).err().map(|err| format!("{err}\n  in {message}"))
        })
        .collect();
    assert!(failures.is_empty(), "messages that do not match the {version} schema:\n{}", failures.join("\n"));
}

/// Asserts that one message the server sent, answering or about a `request_method` call,
/// validates against the schema of `version`.
pub(crate) fn assert_message_valid(version: ProtocolVersion, message: &Value, request_method: &str) {
    let mut methods = HashMap::new();
    if let Some(id) = message.get("id") {
        methods.insert(id.to_string(), request_method.to_owned());
    }
    if let Err(err) = check_message(version, message, &methods) {
        panic!("a message that does not match the {version} schema: {err}\n  in {message}");
    }
}
