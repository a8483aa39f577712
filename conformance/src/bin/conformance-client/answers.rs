//! How the conformance client answers a server's questions: it accepts every elicitation,
//! filling each field with its schema's default or a plain value of its type (the suite checks
//! that defaults are applied), samples a fixed message, and has no roots.

use serde_json::{Map, Value, json};
use wharf::client::{Answer, ClientHandler};
use wharf::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ElicitationCapability, ListRootsResult, RootsCapability, SamplingCapability,
};

/// Accepts and answers everything.
pub(crate) struct Accepting;

impl ClientHandler for Accepting {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: Some(ElicitationCapability::default()),
            sampling: Some(SamplingCapability::default()),
            roots: Some(RootsCapability::default()),
            ..ClientCapabilities::default()
        }
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        let schema = serde_json::to_value(&params.requested_schema).unwrap_or(Value::Null);
        let mut content = Map::new();
        for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
            content.insert(name.clone(), value_for(property));
        }
        Box::pin(async move { Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content), meta: None }) })
    }

    fn create_message(&self, _params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        let result = serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "A response from the conformance client"},
            "model": "conformance-model",
            "stopReason": "endTurn"
        }));
        Box::pin(async move {
            result.map_err(|err| {
                wharf::protocol::ErrorObject::new(wharf::protocol::ErrorCode::INTERNAL_ERROR, err.to_string())
            })
        })
    }

    fn list_roots(&self) -> Answer<'_, ListRootsResult> {
        Box::pin(async { Ok(ListRootsResult::default()) })
    }
}

/// The value a form field gets: its default, else the first of its choices, else a plain
/// value of its type.
fn value_for(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property.get("enum").and_then(Value::as_array).and_then(|choices| choices.first()) {
        return first.clone();
    }
    match property.get("type").and_then(Value::as_str) {
        Some("boolean") => Value::Bool(true),
        Some("integer") => json!(1),
        Some("number") => json!(1.5),
        Some("array") => json!([]),
        _ => Value::String("conformance".to_owned()),
    }
}
