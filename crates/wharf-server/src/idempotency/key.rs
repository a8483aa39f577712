//! What an idempotent call is known by: the key the client sends in `_meta`, or one derived
//! from who calls, the tool and its arguments; and the fingerprint of the arguments, which a
//! later call with the same key must match.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `_meta` member in which a client names a call's idempotency key (a string).
pub const IDEMPOTENCY_KEY_META: &str = "wharf/idempotencyKey";

/// The arguments as one canonical text: object members sorted by name at every depth (whatever
/// order a map keeps them in), no spaces, strings and numbers as JSON writes them.
fn canonical(arguments: &Value) -> String {
    let mut text = String::new();
    write_canonical(arguments, &mut text);
    text
}

fn write_canonical(value: &Value, text: &mut String) {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by_key(|(name, _)| *name);
            text.push('{');
            for (at, (name, member)) in sorted.into_iter().enumerate() {
                if at > 0 {
                    text.push(',');
                }
                text.push_str(&Value::String(name.clone()).to_string());
                text.push(':');
                write_canonical(member, text);
            }
            text.push('}');
        }
        Value::Array(items) => {
            text.push('[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    text.push(',');
                }
                write_canonical(item, text);
            }
            text.push(']');
        }
        scalar => text.push_str(&scalar.to_string()),
    }
}

/// The fingerprint of a call of `tool` with `arguments`: two calls have the same one exactly
/// when they name the same tool with the same arguments, whatever the order of their members.
pub fn arguments_fingerprint(tool: &str, arguments: &Value) -> String {
    let mut hash = Sha256::new();
    hash.update(tool.as_bytes());
    hash.update([0]);
    hash.update(canonical(arguments).as_bytes());
    hex(&hash.finalize())
}

/// The key of a call of `tool` with `arguments` by `caller` (a principal, or a session), for a
/// tool whose calls are known by what they do rather than by a key the client sends.
pub fn derived_key(caller: &str, tool: &str, arguments: &Value) -> String {
    let mut hash = Sha256::new();
    hash.update(caller.as_bytes());
    hash.update([0]);
    hash.update(arguments_fingerprint(tool, arguments).as_bytes());
    format!("derived:{}", hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fingerprints_follow_the_arguments_not_their_order() {
        let one: Value = serde_json::from_str(r#"{"to": "ada", "amount": 10}"#).unwrap();
        let same: Value = serde_json::from_str(r#"{"amount": 10, "to": "ada"}"#).unwrap();
        assert_eq!(arguments_fingerprint("pay", &one), arguments_fingerprint("pay", &same));
        assert_ne!(
            arguments_fingerprint("pay", &one),
            arguments_fingerprint("pay", &json!({"to": "ada", "amount": 11}))
        );
        assert_ne!(arguments_fingerprint("pay", &one), arguments_fingerprint("refund", &one));
        assert_eq!(arguments_fingerprint("pay", &one).len(), 64);
        let nested = json!({"b": [{"y": 1, "x": 2}], "a": "\"q\""});
        assert_eq!(canonical(&nested), r#"{"a":"\"q\"","b":[{"x":2,"y":1}]}"#);
    }

    #[test]
    fn derived_keys_differ_by_caller_tool_and_arguments() {
        let arguments = json!({"text": "milk"});
        let key = derived_key("principal a", "note_add", &arguments);
        assert!(key.starts_with("derived:"));
        assert_eq!(key, derived_key("principal a", "note_add", &json!({"text": "milk"})));
        assert_ne!(key, derived_key("principal b", "note_add", &arguments));
        assert_ne!(key, derived_key("principal a", "note_del", &arguments));
        assert_ne!(key, derived_key("principal a", "note_add", &json!({"text": "eggs"})));
    }
}
