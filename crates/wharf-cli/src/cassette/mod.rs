//! Cassettes: MCP sessions recorded one message a line, to be served back or checked against a
//! server. From the bottom up: this file (redaction, and how a request is matched; the format,
//! and what is volatile in a message, are `wharf::cassette`'s, which replays cassettes in
//! memory), `loopback.rs` (the local HTTP servers' address, guard and accept loop), `tape.rs`
//! (the cassette being written, with each message's revision and session), `tee.rs` (a response
//! body passed on while its messages are written), `record.rs` and `record_http.rs` (`wharf
//! record`: a transparent stdio or HTTP proxy), `replayer.rs` (what answers a replayed
//! request), `replay.rs` and `replay_http.rs` (`wharf replay`: the cassette served as a server
//! over stdio or HTTP), `verify.rs` (`wharf verify`:
//! each recorded session's client side sent to a server, and the answers compared).

mod loopback;
mod tape;
mod tee;

pub(crate) mod record;
mod record_http;
pub(crate) mod replay;
mod replay_http;
mod replayer;
pub(crate) mod verify;

use serde_json::{Map, Value, json};
pub(crate) use wharf::cassette::{
    CASSETTE_VERSION, Cassette, CassetteEntry as Entry, CassetteSide as Side, describe_request as describe,
    first_difference, normalized,
};

/// The first line of a cassette.
pub(crate) fn header(transport: &str, command: &[String]) -> String {
    json!({"cassette": CASSETTE_VERSION, "transport": transport, "command": command}).to_string()
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
