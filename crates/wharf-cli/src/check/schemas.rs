//! The official JSON Schema of each protocol revision, compiled into the binary (without their
//! prose: build.rs), to validate what a server sends; and the JSON Schema meta-schema, to
//! validate the schemas a server advertises for its tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{Value, json};
use wharf::protocol::ProtocolVersion;

fn document_text(version: ProtocolVersion) -> &'static str {
    match version {
        ProtocolVersion::V2024_11_05 => include_str!(concat!(env!("OUT_DIR"), "/2024-11-05.json")),
        ProtocolVersion::V2025_03_26 => include_str!(concat!(env!("OUT_DIR"), "/2025-03-26.json")),
        ProtocolVersion::V2025_06_18 => include_str!(concat!(env!("OUT_DIR"), "/2025-06-18.json")),
        ProtocolVersion::V2025_11_25 => include_str!(concat!(env!("OUT_DIR"), "/2025-11-25.json")),
        _ => include_str!(concat!(env!("OUT_DIR"), "/2026-07-28.json")),
    }
}

type Cache = HashMap<(ProtocolVersion, String), Option<Arc<wharf_schema::Validator>>>;

/// The validator of `definition` in `version`'s schema; `None` when that revision has no such
/// definition.
fn validator(version: ProtocolVersion, definition: &str) -> Option<Arc<wharf_schema::Validator>> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let key = (version, definition.to_owned());
    if let Some(found) = cache.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return found.clone();
    }
    let document: Value = serde_json::from_str(document_text(version)).ok()?;
    let defs_key = if document.get("$defs").is_some() { "$defs" } else { "definitions" };
    let compiled = document[defs_key].get(definition).is_some().then(|| {
        let root = json!({
            "$schema": document["$schema"],
            "$ref": format!("#/{defs_key}/{definition}"),
            defs_key: document[defs_key],
        });
        wharf_schema::Validator::new(&root).ok().map(Arc::new)
    });
    let compiled = compiled.flatten();
    cache.lock().unwrap_or_else(PoisonError::into_inner).insert(key, compiled.clone());
    compiled
}

/// Checks `value` against `definition` of `version`'s schema: `Ok(false)` when the revision
/// has no such definition, an error listing what does not match.
pub(crate) fn conforms(version: ProtocolVersion, definition: &str, value: &Value) -> Result<bool, String> {
    let Some(validator) = validator(version, definition) else { return Ok(false) };
    let errors: Vec<String> = validator
        .errors(value)
        .into_iter()
        .take(5)
        .map(|err| {
            let at = err.instance_path().to_string();
            if at.is_empty() { err.to_string() } else { format!("{err} (at {at})") }
        })
        .collect();
    if errors.is_empty() {
        Ok(true)
    } else {
        Err(format!("not a valid {definition} of {version}: {}", errors.join("; ")))
    }
}

/// Checks that `schema` is itself a valid JSON Schema (by the meta-schema of the draft it
/// names, 2020-12 when it names none): `"type": "float"` passes MCP's schema but is not JSON
/// Schema.
pub(crate) fn is_json_schema(schema: &Value) -> Result<(), String> {
    let mut named = schema.clone();
    if named.get("$schema").is_none()
        && let Some(object) = named.as_object_mut()
    {
        object.insert("$schema".to_owned(), json!("https://json-schema.org/draft/2020-12/schema"));
    }
    let errors: Vec<String> = match wharf_schema::meta::validate(&named, wharf_schema::Draft::Draft202012) {
        Ok(()) => return Ok(()),
        Err(err) => {
            let at = err.instance_path().to_string();
            vec![if at.is_empty() { err.to_string() } else { format!("{err} (at {at})") }]
        }
    };
    Err(errors.join("; "))
}

/// Checks a Server Card against the draft's schema (`mcp-spec/ext-server-card`), its formats
/// asserted; the first errors when it does not conform.
pub(crate) fn server_card_errors(card: &Value) -> Result<(), String> {
    static VALIDATOR: std::sync::OnceLock<Result<wharf_schema::Validator, String>> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let document: Value = serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/server-card.json")))
            .map_err(|err| err.to_string())?;
        let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/ServerCard",
            "$defs": document["$defs"]});
        wharf_schema::Validator::options().assert_formats(true).build(&schema).map_err(|err| err.to_string())
    });
    let validator = validator.as_ref().map_err(|err| format!("the Server Card schema does not compile: {err}"))?;
    let errors: Vec<String> = validator.errors(card).into_iter().take(3).map(|err| err.to_string()).collect();
    if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
}

/// Checks `instance` against a schema the server advertised.
pub(crate) fn matches_schema(schema: &Value, instance: &Value) -> Result<(), String> {
    let validator =
        wharf_schema::Validator::new(schema).map_err(|err| format!("the schema does not compile: {err}"))?;
    let errors: Vec<String> = validator.errors(instance).into_iter().take(3).map(|err| err.to_string()).collect();
    if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
}

/// Checks `instance` against a schema the server advertised, its `format`s asserted too.
pub(crate) fn matches_schema_with_formats(schema: &Value, instance: &Value) -> Result<(), String> {
    let validator = wharf_schema::Validator::options()
        .assert_formats(true)
        .build(schema)
        .map_err(|err| format!("the schema does not compile: {err}"))?;
    let errors: Vec<String> = validator.errors(instance).into_iter().take(3).map(|err| err.to_string()).collect();
    if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_checked_against_their_revisions_schema() {
        let tools = json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
        assert_eq!(conforms(ProtocolVersion::V2025_11_25, "ListToolsResult", &tools), Ok(true));
        let broken = json!({"tools": [{"inputSchema": {"type": "object"}}]});
        let error = conforms(ProtocolVersion::V2025_11_25, "ListToolsResult", &broken).unwrap_err();
        assert!(error.contains("name"), "{error}");
        assert_eq!(conforms(ProtocolVersion::V2024_11_05, "DiscoverResult", &json!({})), Ok(false));
    }

    #[test]
    fn a_made_up_type_is_not_json_schema() {
        assert!(is_json_schema(&json!({"type": "object", "properties": {"n": {"type": "integer"}}})).is_ok());
        let error = is_json_schema(&json!({"type": "object", "properties": {"n": {"type": "float"}}})).unwrap_err();
        assert!(!error.is_empty());
        assert!(matches_schema(&json!({"type": "integer"}), &json!("x")).is_err());
    }
}
