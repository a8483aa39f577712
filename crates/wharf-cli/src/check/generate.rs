//! Arguments for a tool, made from its `inputSchema`: valid ones (every required property
//! given a value its schema allows: its `const`, `default`, first of `examples` or `enum`, a
//! number within its bounds and a multiple of `multipleOf`, a string in its `format` or
//! matching its `pattern`) and invalid ones (a required property of the wrong type),
//! each confirmed against the schema before it is sent, so that the check judges the server,
//! not the generator. What is made is capped (a string's length, an array's items, the values
//! in all), whatever the schema asks: the schema is the server's.

use serde_json::{Map, Value, json};

use crate::check::pattern::strings_matching;
use crate::check::schemas::matches_schema;

/// How deep the generator follows nested schemas.
const MAX_DEPTH: usize = 8;

/// The longest string made; a schema whose `minLength` asks for more gets no arguments.
const MAX_STRING_CHARS: usize = 4096;

/// The most items of an array made; a schema whose `minItems` asks for more gets no arguments.
const MAX_ITEMS: usize = 8;

/// The most values (strings, numbers, items, members) one set of arguments holds.
const MAX_VALUES: usize = 4096;

/// How many arguments with one property of the wrong type are tried against the schema.
const MAX_WRONG_TYPES: usize = 32;

/// Arguments the schema accepts, or why none could be made (a pattern, say, or more than the
/// generator makes).
pub(crate) fn valid_arguments(schema: &Value) -> Result<Value, String> {
    let mut maker = Maker { root: schema, values: 0, capped: None };
    let arguments = maker.value_for(schema, 0);
    if let Some(capped) = maker.capped {
        return Err(format!("no arguments made: {capped} (capped)"));
    }
    let arguments = arguments.filter(Value::is_object).unwrap_or_else(|| json!({}));
    match matches_schema(schema, &arguments) {
        Ok(()) => Ok(arguments),
        Err(_) => Err("no arguments its schema accepts could be made".to_owned()),
    }
}

/// A value the schema at `pointer` (in `root`) accepts, when one can be made.
pub(crate) fn value_for(root: &Value, pointer: &str) -> Option<Value> {
    let schema = root.pointer(pointer)?;
    let mut maker = Maker { root, values: 0, capped: None };
    maker.value_for(schema, 0).filter(|_| maker.capped.is_none())
}

/// Arguments the schema rejects, and what is wrong with them; `None` when the schema accepts
/// anything.
pub(crate) fn invalid_arguments(schema: &Value) -> Option<(Value, String)> {
    let valid = valid_arguments(schema).unwrap_or_else(|_| json!({}));
    let properties = resolve(schema, schema)?.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<String> = resolve(schema, schema)?
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let wrong_types = required.iter().chain(properties.keys()).filter_map(|name| {
        let property = properties.get(name)?;
        let mut arguments = valid.clone();
        arguments[name.as_str()] = wrong_type(resolve(schema, property).unwrap_or(property));
        Some((arguments, format!("`{name}` of the wrong type")))
    });
    let missing = required.first().map(|first| {
        let mut arguments = valid.clone();
        if let Some(object) = arguments.as_object_mut() {
            object.remove(first);
        }
        (arguments, format!("required `{first}` missing"))
    });
    let unexpected = (json!({"wharf_check_unexpected_argument": true}), "an argument it does not declare".to_owned());
    let mut candidates = wrong_types.take(MAX_WRONG_TYPES).chain(missing).chain([unexpected]);
    candidates.find(|(arguments, _)| matches_schema(schema, arguments).is_err())
}

/// A value of another type than `property` allows.
fn wrong_type(property: &Value) -> Value {
    match property.get("type").and_then(Value::as_str) {
        Some("string") => json!(12345),
        Some("integer") | Some("number") => json!("not a number"),
        Some("boolean") => json!("not a boolean"),
        Some("array") => json!({"not": "an array"}),
        Some("object") => json!("not an object"),
        _ => json!({"wharf_check": ["unexpected", 1]}),
    }
}

/// `schema` with a local `$ref` followed.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    let mut current = schema;
    for _ in 0..MAX_DEPTH {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => current = root.pointer(reference.strip_prefix('#')?)?,
            None => return Some(current),
        }
    }
    None
}

/// Makes values for one schema, counting them, and keeps the first cap that stopped it.
struct Maker<'a> {
    root: &'a Value,
    values: usize,
    /// What the schema asked for past a cap, in words.
    capped: Option<String>,
}

impl Maker<'_> {
    /// `None`, noting why, when the schema asks for more than is made.
    fn cap(&mut self, what: String) -> Option<Value> {
        self.capped.get_or_insert(what);
        None
    }

    fn value_for(&mut self, schema: &Value, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH || self.capped.is_some() {
            return None;
        }
        self.values += 1;
        if self.values > MAX_VALUES {
            return self.cap(format!("its schema asks for more than {MAX_VALUES} values, the most wharf check makes"));
        }
        let root = self.root;
        let schema = resolve(root, schema)?;
        if let Some(constant) = schema.get("const") {
            return Some(constant.clone());
        }
        if let Some(default) = schema.get("default") {
            return Some(default.clone());
        }
        if let Some(example) = schema.get("examples").and_then(Value::as_array).and_then(|examples| examples.first())
            && matches_schema(schema, example).is_ok()
        {
            return Some(example.clone());
        }
        if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|values| values.first()) {
            return Some(first.clone());
        }
        for keyword in ["anyOf", "oneOf", "allOf"] {
            if let Some(first) = schema.get(keyword).and_then(Value::as_array).and_then(|options| options.first())
                && schema.get("type").is_none()
                && schema.get("properties").is_none()
            {
                return self.value_for(first, depth + 1);
            }
        }
        let kind = match schema.get("type") {
            Some(Value::String(kind)) => kind.as_str(),
            Some(Value::Array(kinds)) => {
                kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null").unwrap_or("null")
            }
            _ if schema.get("properties").is_some() => "object",
            _ => "string",
        };
        Some(match kind {
            "object" => {
                let mut object = Map::new();
                let properties = schema.get("properties").and_then(Value::as_object);
                let required = schema.get("required").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let anything = json!({});
                for name in required.iter().filter_map(Value::as_str) {
                    let property = properties.and_then(|properties| properties.get(name)).unwrap_or(&anything);
                    object.insert(name.to_owned(), self.value_for(property, depth + 1)?);
                }
                Value::Object(object)
            }
            "array" => {
                let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                if count > MAX_ITEMS as u64 {
                    return self.cap(format!(
                        "its schema asks for an array of at least {count} items, and wharf check makes {MAX_ITEMS} at most"
                    ));
                }
                let anything = json!({});
                let items = schema.get("items").unwrap_or(&anything);
                (0..count).map(|_| self.value_for(items, depth + 1)).collect::<Option<Vec<_>>>().map(Value::Array)?
            }
            "integer" => json!(number(schema).round() as i64),
            "number" => json!(number(schema)),
            "boolean" => json!(true),
            "null" => Value::Null,
            _ => {
                let least = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                if least > MAX_STRING_CHARS as u64 {
                    return self.cap(format!(
                        "its schema asks for a string of at least {least} characters, and wharf check makes \
                         {MAX_STRING_CHARS} at most"
                    ));
                }
                Value::String(string(schema, least as usize))
            }
        })
    }
}

/// A number within the schema's bounds, 1 when they allow it, and a multiple of `multipleOf`.
fn number(schema: &Value) -> f64 {
    let value = bounded(schema);
    match schema.get("multipleOf").and_then(Value::as_f64).filter(|step| *step > 0.0) {
        Some(step) => {
            let multiple = (value / step).ceil() * step;
            let high = schema.get("maximum").and_then(Value::as_f64).unwrap_or(f64::INFINITY);
            if multiple <= high { multiple } else { (value / step).floor() * step }
        }
        None => value,
    }
}

/// A number within the schema's bounds, 1 when they allow it.
fn bounded(schema: &Value) -> f64 {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let low = bound("minimum").or_else(|| bound("exclusiveMinimum").map(|low| low + 1.0));
    let high = bound("maximum").or_else(|| bound("exclusiveMaximum").map(|high| high - 1.0));
    let mut value = 1.0f64;
    if let Some(low) = low {
        value = value.max(low);
    }
    if let Some(high) = high {
        value = value.min(high);
    }
    value
}

/// A string in the schema's format, of `least` characters at least (what `minLength` asks,
/// within the cap) and at most `maxLength`.
fn string(schema: &Value, least: usize) -> String {
    let most = schema.get("maxLength").and_then(Value::as_u64).map(|max| max as usize);
    if let Some(made) = schema.get("pattern").and_then(Value::as_str).and_then(|pattern| strings_matching(pattern).ok())
    {
        let fits =
            |text: &String| text.chars().count() >= least && most.is_none_or(|most| text.chars().count() <= most);
        if let Some(text) = made.into_iter().find(fits) {
            return text;
        }
    }
    let mut text = match schema.get("format").and_then(Value::as_str) {
        Some("email") => "wharf-check@example.com".to_owned(),
        Some("uri") | Some("url") | Some("uri-reference") | Some("iri") => "https://example.com/".to_owned(),
        Some("date") => "2026-01-01".to_owned(),
        Some("date-time") => "2026-01-01T00:00:00Z".to_owned(),
        Some("time") => "00:00:00Z".to_owned(),
        Some("uuid") => "00000000-0000-4000-8000-000000000000".to_owned(),
        Some("ipv4") => "127.0.0.1".to_owned(),
        Some("ipv6") => "::1".to_owned(),
        Some("hostname") => "example.com".to_owned(),
        _ => "wharf-check".to_owned(),
    };
    let short_by = least.saturating_sub(text.chars().count());
    text.extend(std::iter::repeat_n('x', short_by));
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
        text = text.chars().take(max as usize).collect();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_arguments_fill_what_is_required_within_bounds() {
        let schema = json!({"type": "object", "required": ["a", "op", "when", "tags", "nested"], "properties": {
            "a": {"type": "integer", "minimum": 5, "maximum": 9}, "op": {"enum": ["add", "sub"]},
            "when": {"type": "string", "format": "date-time"}, "tags": {"type": "array", "minItems": 2, "items": {"type": "string"}},
            "nested": {"$ref": "#/$defs/inner"}, "optional": {"type": "string"}},
            "$defs": {"inner": {"type": "object", "required": ["flag"], "properties": {"flag": {"type": "boolean"}}}}});
        let arguments = valid_arguments(&schema).unwrap();
        assert_eq!(arguments["a"], 5);
        assert_eq!(arguments["op"], "add");
        assert_eq!(arguments["tags"].as_array().unwrap().len(), 2);
        assert_eq!(arguments["nested"], json!({"flag": true}));
        assert!(arguments.get("optional").is_none());
    }

    #[test]
    fn invalid_arguments_break_the_schema_or_are_not_made() {
        let schema = json!({"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}});
        let (arguments, why) = invalid_arguments(&schema).unwrap();
        assert_eq!(arguments, json!({"message": 12345}));
        assert!(why.contains("`message`"));
        assert!(invalid_arguments(&json!({"type": "object"})).is_none(), "anything goes");
        let strict = json!({"type": "object", "additionalProperties": false});
        assert_eq!(invalid_arguments(&strict).unwrap().1, "an argument it does not declare");
        let digits = json!({"type": "object", "required": ["p"], "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}}});
        assert_eq!(valid_arguments(&digits).unwrap(), json!({"p": "0"}), "a pattern is matched");
        let odd = json!({"type": "object", "required": ["p"], "properties": {"p": {"type": "string", "pattern": "^(?=x)y$"}}});
        assert!(valid_arguments(&odd).is_err(), "a look-ahead is not generated");
        let stepped = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "number", "minimum": 2, "multipleOf": 0.75}}});
        assert_eq!(valid_arguments(&stepped).unwrap()["n"], 2.25);
        let example = json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "pattern": "^\\p{Lu}\\d$", "examples": ["Ä1"]}}});
        assert_eq!(valid_arguments(&example).unwrap()["id"], "Ä1", "an example the schema accepts");
    }

    #[test]
    fn what_a_schema_asks_past_the_caps_is_not_made_and_says_so() {
        let long = json!({"type": "object", "required": ["t"], "properties": {"t": {"type": "string", "minLength": 1_000_000}}});
        let why = valid_arguments(&long).unwrap_err();
        assert!(why.contains("a string of at least 1000000 characters") && why.ends_with("(capped)"), "{why}");
        let many =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "array", "minItems": 1_000_000}}});
        assert!(valid_arguments(&many).unwrap_err().contains("an array of at least 1000000 items"));
        // Six levels of eight items: every level within its cap, the whole past the values'.
        let mut nested = json!({"type": "string"});
        for _ in 0..6 {
            nested = json!({"type": "array", "minItems": 8, "items": nested});
        }
        let deep = json!({"type": "object", "required": ["n"], "properties": {"n": nested}});
        assert!(valid_arguments(&deep).unwrap_err().contains("more than 4096 values"));
        let fits =
            json!({"type": "object", "required": ["t"], "properties": {"t": {"type": "string", "minLength": 4096}}});
        assert_eq!(valid_arguments(&fits).unwrap()["t"].as_str().unwrap().len(), 4096);
    }
}
