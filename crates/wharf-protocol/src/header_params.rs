//! `x-mcp-header` (2026-07-28): tool arguments that clients mirror into `Mcp-Param-{Name}`
//! HTTP headers, so that gateways can route on them without reading the body. A server checks
//! the marks when it registers a tool; a client checks them in `tools/list` and does not call
//! a tool whose marks are invalid.

use crate::types::common::JsonObject;
use serde_json::Value;

/// The schema keyword that marks an argument.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// One argument mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The argument's name in `arguments`.
    pub property: String,
    /// `Mcp-Param-{Name}`, as declared.
    pub header: String,
}

/// The arguments of `schema` marked with `x-mcp-header`, or why the marks are not allowed:
/// names must be RFC 9110 tokens, unique ignoring case, on top-level properties of type
/// string, integer or boolean.
pub fn header_params(schema: &JsonObject) -> Result<Vec<HeaderParam>, String> {
    let mut params: Vec<HeaderParam> = Vec::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (property, definition) in properties.into_iter().flatten() {
        let Some(definition) = definition.as_object() else { continue };
        if let Some(nested) = find_keyword(definition) {
            return Err(format!(
                "argument `{property}`: `{X_MCP_HEADER}` is only allowed on top-level properties, not inside `{nested}`"
            ));
        }
        let Some(name) = definition.get(X_MCP_HEADER) else { continue };
        let name = name.as_str().filter(|name| is_token(name)).ok_or_else(|| {
            format!(
                "argument `{property}`: `{X_MCP_HEADER}` must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_`|~)"
            )
        })?;
        if !has_primitive_type(definition) {
            return Err(format!(
                "argument `{property}`: `{X_MCP_HEADER}` needs a string, integer or boolean argument (not number, \
                 object, array or `$ref`)"
            ));
        }
        if let Some(other) = params.iter().find(|param| param.header.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "arguments `{}` and `{property}` both mirror into `Mcp-Param-{name}`; header names must differ \
                 ignoring case",
                other.property
            ));
        }
        params.push(HeaderParam { property: property.clone(), header: name.to_owned() });
    }
    for (keyword, value) in schema {
        if keyword == X_MCP_HEADER {
            return Err(format!("`{X_MCP_HEADER}` belongs on a top-level property, not on the schema itself"));
        }
        if keyword != "properties" && contains_keyword(value) {
            return Err(format!("`{X_MCP_HEADER}` is only allowed on top-level properties, not inside `{keyword}`"));
        }
    }
    Ok(params)
}

/// Where `x-mcp-header` occurs below `definition` (not on it).
fn find_keyword(definition: &JsonObject) -> Option<&str> {
    definition.iter().find(|(_, value)| contains_keyword(value)).map(|(key, _)| key.as_str())
}

/// True when `x-mcp-header` is a key anywhere in `value`.
fn contains_keyword(value: &Value) -> bool {
    match value {
        Value::Object(object) => object.contains_key(X_MCP_HEADER) || object.values().any(contains_keyword),
        Value::Array(items) => items.iter().any(contains_keyword),
        _ => false,
    }
}

/// `"type"` names exactly one of string, integer and boolean, optionally with null.
fn has_primitive_type(definition: &JsonObject) -> bool {
    let primitive = |kind: &str| matches!(kind, "string" | "integer" | "boolean");
    match definition.get("type") {
        Some(Value::String(kind)) => primitive(kind),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).filter(|kind| *kind != "null").collect();
            kinds.len() == 1 && primitive(kinds[0])
        }
        _ => false,
    }
}

/// An RFC 9110 token: one or more tchars.
fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(schema: Value) -> Result<Vec<HeaderParam>, String> {
        header_params(schema.as_object().unwrap())
    }

    #[test]
    fn marked_primitive_properties_become_header_params() {
        let found = params(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "shard": {"type": ["integer", "null"], "x-mcp-header": "Shard"},
            "plain": {"type": "string"}}}))
        .unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0], HeaderParam { property: "region".to_owned(), header: "Region".to_owned() });
    }

    #[test]
    fn misplaced_mistyped_and_duplicate_marks_are_refused() {
        for (schema, expected) in [
            (json!({"properties": {"n": {"type": "number", "x-mcp-header": "N"}}}), "string, integer or boolean"),
            (json!({"properties": {"n": {"type": "string", "x-mcp-header": "bad name"}}}), "HTTP token"),
            (json!({"properties": {"n": {"type": "string", "x-mcp-header": ""}}}), "HTTP token"),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "Zone"},
                    "b": {"type": "string", "x-mcp-header": "zone"}}}),
                "differ ignoring case",
            ),
            (
                json!({"properties": {"list": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
                "top-level properties",
            ),
            (
                json!({"properties": {}, "anyOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]}),
                "top-level properties",
            ),
            (json!({"properties": {"r": {"$ref": "#/$defs/R", "x-mcp-header": "R"}}}), "string, integer or boolean"),
        ] {
            let err = params(schema.clone()).unwrap_err();
            assert!(err.contains(expected), "{schema}: {err}");
        }
    }
}
