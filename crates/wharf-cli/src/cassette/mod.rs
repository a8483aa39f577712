//! Cassettes: an MCP session recorded one message a line, to be served back or checked against
//! a server. From the bottom up: this file (the format, redaction, and what is volatile in a
//! message), `record.rs` (`wharf record`: a transparent stdio proxy that writes the cassette),
//! `replay.rs` (`wharf replay`: the cassette served as a server), `verify.rs` (`wharf verify`:
//! the recorded client side sent to a server, and the answers compared).

pub(crate) mod record;
pub(crate) mod replay;
pub(crate) mod verify;

use std::path::Path;

use serde_json::{Map, Value, json};

/// The cassette format's version, in its first line.
pub(crate) const CASSETTE_VERSION: u64 = 1;

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

impl Side {
    fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// One recorded message.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) from: Side,
    /// Milliseconds since the recording began.
    pub(crate) at_ms: u64,
    pub(crate) message: Value,
}

impl Entry {
    pub(crate) fn line(&self) -> String {
        json!({"t": self.at_ms, "from": self.from.as_str(), "message": self.message}).to_string()
    }

    /// A request: a method and an id.
    pub(crate) fn is_request(&self) -> bool {
        self.message.get("method").is_some() && self.message.get("id").is_some()
    }

    /// An answer: an id, and no method.
    pub(crate) fn is_answer(&self) -> bool {
        self.message.get("method").is_none() && self.message.get("id").is_some()
    }
}

/// The first line of a cassette.
pub(crate) fn header(transport: &str, command: &[String]) -> String {
    json!({"cassette": CASSETTE_VERSION, "transport": transport, "command": command}).to_string()
}

/// The entries of the cassette at `path`, or what is wrong with it.
pub(crate) fn read(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let mut lines = text.lines();
    let first: Value = lines
        .next()
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or_else(|| format!("{}: not a cassette (its first line is not a header)", path.display()))?;
    if first.get("cassette").and_then(Value::as_u64) != Some(CASSETTE_VERSION) {
        return Err(format!("{}: not a cassette of version {CASSETTE_VERSION}", path.display()));
    }
    let mut entries = Vec::new();
    for (number, line) in lines.enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        let value: Value =
            serde_json::from_str(line).map_err(|err| format!("{}: line {}: {err}", path.display(), number + 2))?;
        let from = match value.get("from").and_then(Value::as_str) {
            Some("client") => Side::Client,
            Some("server") => Side::Server,
            _ => return Err(format!("{}: line {}: no `from`", path.display(), number + 2)),
        };
        let at_ms = value.get("t").and_then(Value::as_u64).unwrap_or(0);
        entries.push(Entry { from, at_ms, message: value.get("message").cloned().unwrap_or(Value::Null) });
    }
    Ok(entries)
}

/// What is left out of a recorded message by default: argument and `_meta` members whose names
/// say they are secrets.
const SECRET_WORDS: [&str; 6] = ["password", "secret", "token", "apikey", "api_key", "authorization"];

/// What a redacted value is replaced by; in a recorded request it matches any value.
pub(crate) const REDACTED: &str = "[redacted]";

/// Names to redact beside the default ones.
#[derive(Debug, Default, Clone)]
pub(crate) struct Redaction {
    pub(crate) meta_keys: Vec<String>,
    pub(crate) arguments: Vec<String>,
}

impl Redaction {
    fn secret(name: &str, named: &[String]) -> bool {
        let lower = name.to_ascii_lowercase();
        // A progress token is not a secret; it is how progress finds its request.
        lower != "progresstoken"
            && (SECRET_WORDS.iter().any(|word| lower.contains(word)) || named.iter().any(|named| named == name))
    }

    /// `message` with secret `_meta` members and tool arguments replaced by `"[redacted]"`.
    pub(crate) fn apply(&self, mut message: Value) -> Value {
        if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
            if let Some(Value::Object(meta)) = params.get_mut("_meta") {
                redact_members(meta, &self.meta_keys);
            }
            if let Some(Value::Object(arguments)) = params.get_mut("arguments") {
                redact_members(arguments, &self.arguments);
            }
        }
        message
    }
}

fn redact_members(object: &mut Map<String, Value>, named: &[String]) {
    for (name, value) in object.iter_mut() {
        if Redaction::secret(name, named) {
            *value = Value::from(REDACTED);
        } else if let Value::Object(inner) = value {
            redact_members(inner, named);
        }
    }
}

/// Members that differ from one run to the next: ids, tokens, sealed state, times.
const VOLATILE: [&str; 10] = [
    "requestState",
    "progressToken",
    "taskId",
    "createdAt",
    "lastUpdatedAt",
    "sessionId",
    "timestamp",
    "written_at_ms",
    "process",
    "_meta",
];

/// `value` without its volatile members, at any depth, for comparing two runs.
pub(crate) fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| !VOLATILE.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), normalized(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// Methods matched by name alone: what one client sends in them (its name, its capabilities)
/// says nothing of what it asks.
const LIFECYCLE: [&str; 3] = ["initialize", "server/discover", "ping"];

/// How a request is known when it is matched: its method and its params, normalized (no params
/// and empty ones are the same; a lifecycle request's are left out).
pub(crate) fn request_key(message: &Value) -> (String, Value) {
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
    if LIFECYCLE.contains(&method.as_str()) {
        return (method, json!({}));
    }
    let params = match message.get("params") {
        None | Some(Value::Null) => json!({}),
        Some(params) => normalized(params),
    };
    (method, params)
}

/// A request as a person names it: its method, and the tool, prompt or resource.
pub(crate) fn describe(message: &Value) -> String {
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = message.get("params");
    let name =
        ["name", "uri"].iter().find_map(|key| params.and_then(|params| params.get(*key)).and_then(Value::as_str));
    match name {
        Some(name) => format!("{method} {name}"),
        None => method.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_volatile_members_ignored() {
        let redaction = Redaction { meta_keys: vec!["tenant".to_owned()], arguments: vec!["card".to_owned()] };
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pay",
            "arguments": {"card": "4111", "apiKey": "k", "amount": 5, "nested": {"password": "p"}},
            "_meta": {"tenant": "acme", "progressToken": 7}}});
        let redacted = redaction.apply(message);
        assert_eq!(
            redacted["params"]["arguments"],
            json!({"card": "[redacted]", "apiKey": "[redacted]", "amount": 5, "nested": {"password": "[redacted]"}})
        );
        assert_eq!(redacted["params"]["_meta"], json!({"tenant": "[redacted]", "progressToken": 7}));
        let one = json!({"content": [], "_meta": {"x": 1}, "structuredContent": {"requestState": "a", "n": 1}});
        let two = json!({"content": [], "structuredContent": {"requestState": "b", "n": 1}});
        assert_eq!(normalized(&one), normalized(&two));
        assert_eq!(describe(&json!({"method": "tools/call", "params": {"name": "echo"}})), "tools/call echo");
    }
}
