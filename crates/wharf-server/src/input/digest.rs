//! A digest of a request's parameters that does not depend on how the client ordered the keys
//! of its JSON objects, so that a retry with the same parameters matches its sealed state.

use serde_json::Value;
use sha2::{Digest, Sha256};
use wharf_protocol::JsonObject;

/// The SHA-256 of `parts` in canonical JSON (object keys sorted, no whitespace), in hex.
pub(crate) fn of(parts: &[Value]) -> String {
    let mut canonical = String::new();
    for part in parts {
        write_canonical(part, &mut canonical);
        canonical.push('\n');
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = Sha256::digest(canonical.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in hash {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

/// An optional object as a value; absent and empty are the same request.
pub(crate) fn object(object: Option<&JsonObject>) -> Value {
    object.map_or_else(|| Value::Object(JsonObject::new()), |object| Value::Object(object.clone()))
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, value)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_change_the_digest_but_values_do() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(of(&[json!("t"), a.clone()]), of(&[json!("t"), b]));
        assert_ne!(of(&[json!("t"), a.clone()]), of(&[json!("t"), json!({"b": 2, "a": {"y": [1, 2], "x": "s"}})]));
        assert_ne!(of(&[json!("t"), a.clone()]), of(&[json!("u"), a]));
        assert_eq!(of(&[json!("t")]).len(), 64);
    }
}
