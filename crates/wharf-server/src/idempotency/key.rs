//! What an idempotent call is known by: the key the client sends in `_meta`, or one derived
//! from who calls, the tool and its arguments; and the fingerprint of the arguments, which a
//! later call with the same key must match. Both are digests of canonical JSON (`input/digest.rs`,
//! which `requestState` uses too), so the order of a client's object members changes neither.

use serde_json::Value;

use crate::input::digest;

/// The `_meta` member in which a client names a call's idempotency key (a string).
pub const IDEMPOTENCY_KEY_META: &str = "wharf/idempotencyKey";

/// The `_meta` member (`true`) of a result answered from a key's record rather than by running
/// the handler again.
pub const IDEMPOTENT_REPLAY_META: &str = "wharf/idempotentReplay";

/// The fingerprint of a call of `tool` with `arguments`: two calls have the same one exactly
/// when they name the same tool with the same arguments, whatever the order of their members.
pub fn arguments_fingerprint(tool: &str, arguments: &Value) -> String {
    digest::of(&[Value::from(tool), arguments.clone()])
}

/// The key of a call of `tool` with `arguments` by `caller` (a principal, or a session), for a
/// tool whose calls are known by what they do rather than by a key the client sends.
pub fn derived_key(caller: &str, tool: &str, arguments: &Value) -> String {
    format!("derived:{}", digest::of(&[Value::from(caller), Value::from(tool), arguments.clone()]))
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
