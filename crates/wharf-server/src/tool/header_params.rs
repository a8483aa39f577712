//! `x-mcp-header` (2026-07-28): tool arguments that clients mirror into `Mcp-Param-{Name}`
//! HTTP headers, so that gateways can route on them without reading the body. Checked when the
//! tool is registered; a call's headers, as the transport reads them, are compared with its
//! arguments here.

use serde_json::Value;
use wharf_protocol::{ErrorCode, ErrorObject, JsonObject, ToolArguments};

/// The schema keyword that marks an argument.
pub(crate) const KEYWORD: &str = "x-mcp-header";

/// One argument mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    /// The argument's name in `arguments`.
    pub(crate) property: String,
    /// `Mcp-Param-{Name}`, as declared.
    pub(crate) header: String,
}

/// The arguments of `schema` marked with `x-mcp-header`, or why the marks are not allowed:
/// names must be RFC 9110 tokens, unique ignoring case, on top-level properties of type
/// string, integer or boolean.
pub(crate) fn header_params(schema: &JsonObject) -> Result<Vec<HeaderParam>, String> {
    let mut params: Vec<HeaderParam> = Vec::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (property, definition) in properties.into_iter().flatten() {
        let Some(definition) = definition.as_object() else { continue };
        if let Some(nested) = find_keyword(definition) {
            return Err(format!(
                "argument `{property}`: `{KEYWORD}` is only allowed on top-level properties, not inside `{nested}`"
            ));
        }
        let Some(name) = definition.get(KEYWORD) else { continue };
        let name = name.as_str().filter(|name| is_token(name)).ok_or_else(|| {
            format!(
                "argument `{property}`: `{KEYWORD}` must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_`|~)"
            )
        })?;
        if !has_primitive_type(definition) {
            return Err(format!(
                "argument `{property}`: `{KEYWORD}` needs a string, integer or boolean argument (not number, \
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
        if keyword == KEYWORD {
            return Err(format!("`{KEYWORD}` belongs on a top-level property, not on the schema itself"));
        }
        if keyword != "properties" && contains_keyword(value) {
            return Err(format!("`{KEYWORD}` is only allowed on top-level properties, not inside `{keyword}`"));
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
        Value::Object(object) => object.contains_key(KEYWORD) || object.values().any(contains_keyword),
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

/// Checks the `Mcp-Param-*` headers of a 2026-07-28 `tools/call` against its arguments: each
/// marked argument present in the body needs its header with the same value, and a header
/// needs its argument. `header(name)` is the transport's reading of `Mcp-Param-{name}`:
/// `None` when absent, `Some(None)` when it cannot be decoded. The arguments are read only for
/// a tool that marks some.
pub(crate) fn check_mirrored(
    params: &[HeaderParam],
    arguments: Option<&ToolArguments>,
    header: impl Fn(&str) -> Option<Option<String>>,
) -> Result<(), ErrorObject> {
    if params.is_empty() {
        return Ok(());
    }
    let arguments = arguments.map(ToolArguments::to_object).transpose().map_err(|err| {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: the arguments cannot be read: {err}"))
    })?;
    let arguments = arguments.as_ref();
    let mismatch = |message: String| ErrorObject::new(ErrorCode::HEADER_MISMATCH, message);
    for param in params {
        let body = arguments.and_then(|arguments| arguments.get(&param.property)).filter(|value| !value.is_null());
        let display = format!("Mcp-Param-{}", param.header);
        match (header(&param.header), body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header mismatch: argument `{}` is in the body, so the `{display}` header is required",
                    param.property
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header mismatch: `{display}` is set but the body has no argument `{}`",
                    param.property
                )));
            }
            (Some(decoded), Some(body)) => {
                let decoded = decoded.ok_or_else(|| {
                    mismatch(format!("Header mismatch: `{display}` is not valid base64-encoded UTF-8"))
                })?;
                if header_text(body).as_deref() != Some(decoded.as_str()) {
                    return Err(mismatch(format!(
                        "Header mismatch: `{display}` is {decoded:?} but argument `{}` is {body}",
                        param.property
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The text a header carries for an argument's JSON value: strings as they are, integers in
/// decimal, booleans as `true`/`false`; `None` for values no header can carry.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
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

    #[test]
    fn values_become_header_text() {
        assert_eq!(header_text(&json!("eu")).as_deref(), Some("eu"));
        assert_eq!(header_text(&json!(42)).as_deref(), Some("42"));
        assert_eq!(header_text(&json!(false)).as_deref(), Some("false"));
        assert_eq!(header_text(&json!(1.5)), None);
    }
}
