//! The repository's copy of the official MCP schemas (`mcp-spec/` at its root, found from this
//! crate's manifest, so a clone at any path tests with nothing beside it), and checking what a
//! server sent against the definition of the method each message answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use wharf_protocol::{
    Era, ProtocolVersion, error_response_definition, notification_definition, result_definition,
    result_response_definition, server_request_definition,
};
use wharf_server::testing::InMemoryClient;

/// The repository's `mcp-spec` directory, holding `<revision>/schema.json` and
/// `<revision>/examples/`.
pub fn spec_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mcp-spec");
    assert!(
        dir.join("2026-07-28/schema.json").is_file(),
        "{} has no `2026-07-28/schema.json`: the repository's copy of the official schemas is missing",
        dir.display()
    );
    dir
}

type Validators = HashMap<(ProtocolVersion, String), Arc<wharf_schema::Validator>>;

/// The compiled validator of `definition` in the schema of `version`, compiled once.
fn validator(version: ProtocolVersion, definition: &str) -> Arc<wharf_schema::Validator> {
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
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        })
        .clone();
    let defs_key = if document.get("$defs").is_some() { "$defs" } else { "definitions" };
    assert!(document[defs_key].get(definition).is_some(), "{version} has no definition `{definition}`");
    let root = json!({
        "$schema": document["$schema"],
        "$ref": format!("#/{defs_key}/{definition}"),
        defs_key: document[defs_key],
    });
    let compiled = Arc::new(wharf_schema::Validator::new(&root).unwrap_or_else(|err| panic!("{definition}: {err}")));
    CACHE.get_or_init(Default::default).lock().unwrap().insert(key, compiled.clone());
    compiled
}

/// Checks `card` against the Server Card draft's schema (`mcp-spec/ext-server-card`), its
/// formats asserted; the errors, if any.
pub fn check_server_card(card: &Value) -> Result<(), String> {
    static VALIDATOR: OnceLock<wharf_schema::Validator> = OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let path = spec_dir().join("ext-server-card/schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let document: Value = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let root = json!({"$schema": document["$schema"], "$ref": "#/$defs/ServerCard", "$defs": document["$defs"]});
        wharf_schema::Validator::options().assert_formats(true).build(&root).unwrap_or_else(|err| panic!("{err}"))
    });
    let errors: Vec<String> =
        validator.errors(card).into_iter().map(|err| format!("{} at {}", err, err.instance_path())).collect();
    if errors.is_empty() { Ok(()) } else { Err(format!("ServerCard: {}", errors.join("; "))) }
}

/// Checks `value` against `definition` in the schema of `version`; the errors, if any.
pub fn check(version: ProtocolVersion, definition: &str, value: &Value) -> Result<(), String> {
    let validator = validator(version, definition);
    let errors: Vec<String> =
        validator.errors(value).into_iter().map(|err| format!("{} at {}", err, err.instance_path())).collect();
    if errors.is_empty() { Ok(()) } else { Err(format!("{definition}: {}", errors.join("; "))) }
}

/// Checks one message a server sent; `methods` maps request ids (as JSON text) to the methods
/// the client called.
pub fn check_message(
    version: ProtocolVersion,
    message: &Value,
    methods: &HashMap<String, String>,
) -> Result<(), String> {
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
            let definition =
                server_request_definition(method).ok_or(format!("unexpected server request `{method}`"))?;
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
                return check(version, error_response_definition(version), message);
            }
            check(version, result_response_definition(version), message)?;
            let id = id.map(Value::to_string).unwrap_or_default();
            let method = methods.get(&id).ok_or(format!("a response to an unknown id {id}"))?;
            // tools/call, prompts/get and resources/read answer either their result or an
            // InputRequiredResult (2026-07-28), told apart by `resultType`.
            if message["result"]["resultType"] == "input_required" {
                return check(version, "InputRequiredResult", &message["result"]);
            }
            // The 2026-07-28 tasks extension's results are not in the core schema; the envelope
            // was checked. 2025-11-25 tasks are, and are checked below.
            if version.era() == Era::Stateless
                && (message["result"]["resultType"] == "task" || method.starts_with("tasks/"))
            {
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
pub fn assert_valid(client: &InMemoryClient, version: ProtocolVersion) {
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

/// Asserts that one message a server sent, answering or about a `request_method` call,
/// validates against the schema of `version`.
pub fn assert_message_valid(version: ProtocolVersion, message: &Value, request_method: &str) {
    let mut methods = HashMap::new();
    if let Some(id) = message.get("id") {
        methods.insert(id.to_string(), request_method.to_owned());
    }
    if let Err(err) = check_message(version, message, &methods) {
        panic!("a message that does not match the {version} schema: {err}\n  in {message}");
    }
}
