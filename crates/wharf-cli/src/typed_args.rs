//! Arguments from the command line: `key=value` words typed by the tool's `inputSchema` (an
//! integer property gets a JSON number, a boolean `true`/`false`, an array or object parsed
//! JSON), merged over `--args-json`.

use serde_json::{Map, Value};

/// The arguments object for `words`, starting from `json` when given, typed by `schema`.
pub(crate) fn arguments(
    words: &[String],
    json: Option<&str>,
    schema: Option<&Map<String, Value>>,
) -> Result<Value, String> {
    let mut arguments = match json {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(object)) => object,
            Ok(_) => return Err("--args-json must be a JSON object".to_owned()),
            Err(err) => return Err(format!("--args-json is not JSON: {err}")),
        },
        None => Map::new(),
    };
    let properties = schema.and_then(|schema| schema.get("properties")).and_then(Value::as_object);
    for word in words {
        let (key, text) = word
            .split_once('=')
            .ok_or_else(|| format!("`{word}` is not key=value (use --args-json for complex arguments)"))?;
        let property = properties.and_then(|properties| properties.get(key));
        arguments.insert(key.to_owned(), typed(key, text, property)?);
    }
    Ok(Value::Object(arguments))
}

/// String arguments for a prompt: `key=value` words, all strings.
pub(crate) fn string_arguments(words: &[String]) -> Result<Value, String> {
    let mut arguments = Map::new();
    for word in words {
        let (key, text) = word.split_once('=').ok_or_else(|| format!("`{word}` is not key=value"))?;
        arguments.insert(key.to_owned(), Value::String(text.to_owned()));
    }
    Ok(Value::Object(arguments))
}

/// The JSON value of `text` for a property described by `property`.
fn typed(key: &str, text: &str, property: Option<&Value>) -> Result<Value, String> {
    let kinds = property.map(types).unwrap_or_default();
    let has = |kind: &str| kinds.iter().any(|known| known == kind);
    if kinds.is_empty() {
        // No schema to go by: JSON when the text is JSON (numbers, booleans, objects), else a
        // string.
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())));
    }
    if has("null") && text == "null" {
        return Ok(Value::Null);
    }
    if has("integer")
        && let Ok(number) = text.parse::<i64>()
    {
        return Ok(Value::from(number));
    }
    if has("number")
        && let Ok(number) = text.parse::<f64>()
        && let Some(number) = serde_json::Number::from_f64(number)
    {
        return Ok(Value::Number(number));
    }
    if has("boolean") && (text == "true" || text == "false") {
        return Ok(Value::Bool(text == "true"));
    }
    if (has("array") || has("object"))
        && let Ok(value) = serde_json::from_str::<Value>(text)
        && (value.is_array() || value.is_object())
    {
        return Ok(value);
    }
    if has("string") {
        return Ok(Value::String(text.to_owned()));
    }
    Err(format!("`{key}` must be {}; `{text}` is not", kinds.join(" or ")))
}

/// The JSON types a property allows: its `type` (one or a list), or its `enum` values' types.
fn types(property: &Value) -> Vec<String> {
    match property.get("type") {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => match property.get("enum").and_then(Value::as_array) {
            Some(values) if values.iter().all(Value::is_string) => vec!["string".to_owned()],
            _ => Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Map<String, Value> {
        json!({"type": "object", "properties": {
            "count": {"type": "integer"}, "ratio": {"type": "number"}, "loud": {"type": "boolean"},
            "name": {"type": "string"}, "tags": {"type": "array"}, "maybe": {"type": ["integer", "null"]},
            "mode": {"enum": ["a", "b"]}
        }})
        .as_object()
        .cloned()
        .unwrap()
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        let schema = schema();
        let args = words(&["count=3", "ratio=0.5", "loud=true", "name=42", "tags=[1,2]", "maybe=null", "mode=a"]);
        let typed = arguments(&args, None, Some(&schema)).unwrap();
        assert_eq!(
            typed,
            json!({"count": 3, "ratio": 0.5, "loud": true, "name": "42", "tags": [1, 2], "maybe": null, "mode": "a"})
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named() {
        let schema = schema();
        let error = arguments(&words(&["count=three"]), None, Some(&schema)).unwrap_err();
        assert!(error.contains("`count` must be integer"), "{error}");
        assert!(arguments(&words(&["count"]), None, Some(&schema)).unwrap_err().contains("key=value"));
    }

    #[test]
    fn words_override_the_json_and_unknown_keys_are_guessed() {
        let typed = arguments(
            &words(&["count=2", "extra=7", "note=hello"]),
            Some(r#"{"count": 1, "name": "x"}"#),
            Some(&schema()),
        )
        .unwrap();
        assert_eq!(typed, json!({"count": 2, "name": "x", "extra": 7, "note": "hello"}));
        assert!(arguments(&[], Some("[1]"), None).is_err());
    }
}
