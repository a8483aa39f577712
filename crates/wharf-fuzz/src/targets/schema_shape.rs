//! `shape`: the plain-schema checker that accepts tool arguments without building JSON values
//! (`accepts`, `accepts_value`, and the fused check-while-reading `read`), and the whole
//! argument check a call goes through, against the full validator (`wharf-schema`). Schemas are
//! generated (plain ones mostly, with `$defs`, bounds at the edges, enums and documented
//! variants) or derived from Rust types as `Args<T>` derives them; arguments are written near
//! the schema, then pushed over its edges: bounds crossed, lengths counted in code points,
//! names spelled with escapes, members repeated or unknown.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use wharf_protocol::{JsonObject, ToolArguments};
use wharf_server::fuzzing::{PlainShape, ToolArgumentCheck, Verdict, schema_of};

use crate::json_text::{JsonText, KEYS, NUMBERS};
use crate::reference::{self, Reading};
use crate::rng::Rng;
use crate::target::Target;

/// The target.
pub(super) struct SchemaShape;

/// Property names of generated schemas.
const PROPERTIES: &[&str] = &["a", "b", "message", "name", "\u{e9}", "n"];

/// Strings for enums and instances, some of several bytes per code point.
const STRINGS: &[&str] = &["a", "ab", "abc", "", "\u{e9}", "\u{e9}\u{e9}", "\u{1f600}", "x\u{1f600}y", "fast", "slow"];

/// A mode, as a unit enum: an `enum` of strings.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Slow,
    #[serde(rename = "\u{e9}")]
    Accent,
}

/// A level with documented variants: a `oneOf` of `const`s.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
enum Level {
    /// Quiet.
    #[serde(rename = "a")]
    Low,
    /// Loud.
    #[serde(rename = "ab")]
    High,
}

/// A nested type, in `$defs`.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Inner {
    id: i64,
    flag: bool,
    small: i8,
}

/// A handler's argument type with a little of everything.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Everything {
    message: String,
    count: Option<u8>,
    big: u64,
    ratio: f64,
    tags: Vec<String>,
    mode: Mode,
    level: Option<Level>,
    inner: Option<Inner>,
}

/// Arguments read as a plain map.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Numbers {
    a: i32,
    b: Option<u32>,
    n: Option<f32>,
}

/// The typed argument types, by the name a case gives.
const TYPES: &[&str] = &["Everything", "Numbers", "Inner"];

fn typed_schema(name: &str) -> Option<JsonObject> {
    Some(match name {
        "Everything" => schema_of::<Everything>(),
        "Numbers" => schema_of::<Numbers>(),
        "Inner" => schema_of::<Inner>(),
        _ => return None,
    })
}

impl Target for SchemaShape {
    fn name(&self) -> &'static str {
        "shape"
    }

    fn generate(&self, rng: &mut Rng) -> Vec<u8> {
        let typed = rng.one_in(3).then(|| *rng.pick(TYPES));
        let schema = match typed.and_then(typed_schema) {
            Some(schema) => schema,
            None => root_schema(rng),
        };
        let invalid = if rng.one_in(3) { 60 } else { 0 };
        let mut json = JsonText::new(rng, invalid);
        instance(&mut json, &schema, &schema, 4);
        let case = json!({ "type": typed, "schema": schema, "arguments": json.out });
        case.to_string().into_bytes()
    }

    fn check(&self, case: &[u8]) -> Result<&'static str, String> {
        let Ok(case) = serde_json::from_slice::<Value>(case) else { return Ok("unreadable case") };
        let (Some(Value::Object(schema)), Some(arguments)) = (case.get("schema"), case["arguments"].as_str()) else {
            return Ok("unreadable case");
        };
        let typed = case["type"].as_str();
        let reading = reference::read(arguments);
        let mut label = "not plain";
        if let Some(shape) = PlainShape::of(schema) {
            let Ok(validator) = validator(schema) else {
                return Err(format!(
                    "a plain schema that the full validator refuses\nschema: {}",
                    Value::from(schema.clone())
                ));
            };
            let valid = match &reading {
                Reading::Unique(value) => validator.is_valid(value),
                _ => false,
            };
            let fail = |what: &str| {
                Err(format!(
                    "{what}\nschema: {}\narguments: {arguments}\nreference: {reading:?}\nvalid: {valid}",
                    Value::from(schema.clone())
                ))
            };
            if shape.accepts(arguments) && !valid {
                return fail("the shape accepts text the full validator refuses");
            }
            if let Reading::Unique(value) = &reading
                && shape.accepts_value(value)
                && !valid
            {
                return fail("the shape accepts a value the full validator refuses");
            }
            let read_agrees = match typed {
                Some("Everything") => fused_read_agrees::<Everything>(&shape, arguments, valid),
                Some("Numbers") => fused_read_agrees::<Numbers>(&shape, arguments, valid),
                Some("Inner") => fused_read_agrees::<Inner>(&shape, arguments, valid),
                _ => fused_read_agrees::<Value>(&shape, arguments, valid),
            };
            if !read_agrees {
                return fail("the fused read vouches for what the full validator or serde refuses");
            }
            label = match (valid, shape.accepts(arguments)) {
                (true, true) => "plain: valid, vouched",
                (true, false) => "plain: valid, left to the validator",
                (false, _) => "plain: invalid",
            };
        }
        // Defaults are filled in before the full check, which the reference here does not do.
        if Value::from(schema.clone()).to_string().contains("\"default\"") {
            return Ok(label);
        }
        let Some(check) = ToolArgumentCheck::compile(schema.clone()) else { return Ok("schema refused") };
        let Ok(tool_arguments) = serde_json::from_str::<ToolArguments>(arguments) else { return Ok(label) };
        let Ok(validator) = validator(check.schema()) else {
            return Err(format!(
                "a compiled schema the full validator refuses\nschema: {}",
                Value::from(check.schema().clone())
            ));
        };
        for handler_reads in [true, false] {
            let verdict = check.check(Some(tool_arguments.clone()), handler_reads);
            let agrees = match (&reading, &verdict) {
                (Reading::Unique(value), Verdict::Accepted(read)) => validator.is_valid(value) && value == read,
                (Reading::Unique(value), Verdict::Invalid) => !validator.is_valid(value),
                (Reading::Repeats(names), Verdict::DuplicateKey(key)) => names.contains(key),
                // A repeat may come before what makes the text malformed, and be refused first.
                (Reading::Malformed, Verdict::Invalid | Verdict::DuplicateKey(_)) => true,
                _ => false,
            };
            if !agrees {
                return Err(format!(
                    "the tool's argument check disagrees with the full validator\nschema: {}\narguments: {arguments}\nhandler reads: {handler_reads}\nreference: {reading:?}\nverdict: {verdict:?}",
                    Value::from(check.schema().clone())
                ));
            }
        }
        Ok(label)
    }
}

fn validator(schema: &JsonObject) -> Result<wharf_schema::Validator, String> {
    wharf_schema::Validator::options()
        .assert_formats(true)
        .build(&Value::Object(schema.clone()))
        .map_err(|err| err.to_string())
}

/// True unless the fused read returns a `T` for text that the full validator refuses, that
/// repeats a member, or that serde reads as another `T`.
fn fused_read_agrees<T: DeserializeOwned + PartialEq>(shape: &PlainShape, arguments: &str, valid: bool) -> bool {
    match shape.read::<T>(arguments) {
        None => true,
        Some(read) => valid && serde_json::from_str::<T>(arguments).is_ok_and(|expected| expected == read),
    }
}

/// A whole argument schema: an object, with `$defs` now and then.
fn root_schema(rng: &mut Rng) -> JsonObject {
    let mut root = match schema(rng, 3) {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    if !rng.one_in(10) {
        root.insert("type".into(), "object".into());
        root.entry("properties").or_insert_with(|| Value::Object(properties(rng, 2)));
    }
    if rng.one_in(3) {
        let definition = schema(rng, 2);
        root.insert("$defs".into(), json!({ "D": definition }));
        if let Some(Value::Object(properties)) = root.get_mut("properties") {
            let mut reference = json!({ "$ref": "#/$defs/D" });
            if rng.one_in(4) {
                let sibling = *rng.pick(&["description", "type", "title"]);
                reference[sibling] = if sibling == "type" { "string".into() } else { "words".into() };
            }
            if rng.one_in(10) {
                reference["$ref"] = "#/$defs/Missing".into();
            }
            properties.insert((*rng.pick(PROPERTIES)).into(), reference);
        }
    }
    root
}

fn properties(rng: &mut Rng, depth: usize) -> JsonObject {
    (0..1 + rng.below(4)).map(|_| ((*rng.pick(PROPERTIES)).to_owned(), schema(rng, depth))).collect()
}

fn edge_number(rng: &mut Rng) -> Value {
    loop {
        let text =
            if rng.one_in(3) { (rng.below(20) as i64 - 10).to_string() } else { (*rng.pick(NUMBERS)).to_owned() };
        if let Ok(number) = serde_json::from_str::<Value>(&text) {
            return number;
        }
    }
}

/// A schema for one value, plain mostly.
fn schema(rng: &mut Rng, depth: usize) -> Value {
    let mut schema = Map::new();
    let kinds = ["object", "string", "integer", "number", "boolean", "null", "array"];
    let kind = *rng.pick(&kinds[..if depth == 0 { 6 } else { 7 }]);
    let kind = if kind == "object" && depth == 0 { "string" } else { kind };
    match rng.below(8) {
        0 => {}
        1 => {
            schema.insert("type".into(), json!([kind, rng.pick(&kinds[1..6])]));
        }
        _ => {
            schema.insert("type".into(), kind.into());
        }
    }
    match kind {
        "object" => {
            let properties = properties(rng, depth - 1);
            let mut required: Vec<Value> = Vec::new();
            for name in properties.keys() {
                if rng.one_in(2) {
                    required.push(name.as_str().into());
                }
            }
            if rng.one_in(12) {
                required.push("missing".into());
            }
            if !required.is_empty() {
                schema.insert("required".into(), required.into());
            }
            schema.insert("properties".into(), properties.into());
            match rng.below(4) {
                0 => {
                    schema.insert("additionalProperties".into(), false.into());
                }
                1 => {
                    schema.insert("additionalProperties".into(), schema_leaf(rng));
                }
                _ => {}
            }
        }
        "array" if !rng.one_in(4) => {
            schema.insert("items".into(), self::schema(rng, depth - 1));
        }
        "string" => match rng.below(6) {
            0 => {
                let choices: Vec<&str> = (0..1 + rng.below(3)).map(|_| *rng.pick(STRINGS)).collect();
                schema.insert("enum".into(), json!(choices));
            }
            1 => {
                let branches: Vec<Value> = (0..1 + rng.below(3))
                    .map(|_| json!({ "const": rng.pick(STRINGS), "description": "a choice" }))
                    .collect();
                schema.insert((*rng.pick(&["oneOf", "anyOf"])).into(), branches.into());
            }
            2 | 3 => {
                if rng.one_in(2) {
                    schema.insert("minLength".into(), rng.below(4).into());
                }
                if rng.one_in(2) {
                    schema.insert("maxLength".into(), rng.below(4).into());
                }
            }
            4 if rng.one_in(3) => {
                schema.insert("pattern".into(), "^a".into());
            }
            _ => {}
        },
        "integer" | "number" => {
            for bound in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                if rng.one_in(3) {
                    schema.insert(bound.into(), edge_number(rng));
                }
            }
            if rng.one_in(15) {
                schema.insert("multipleOf".into(), 2.into());
            }
        }
        _ => {}
    }
    if rng.one_in(5) {
        let (keyword, value) = rng
            .pick(&[
                ("description", json!("what it is")),
                ("title", json!("T")),
                ("examples", json!([1])),
                ("deprecated", json!(true)),
                ("x-extra", json!({ "any": [] })),
                ("default", json!(null)),
                ("description", json!(5)),
            ])
            .clone();
        schema.insert(keyword.into(), value);
    }
    Value::Object(schema)
}

fn schema_leaf(rng: &mut Rng) -> Value {
    json!({ "type": rng.pick(&["string", "integer", "boolean"]) })
}

/// Writes arguments near `schema`: what it asks for mostly, over its edges now and then.
fn instance(json: &mut JsonText<'_>, root: &JsonObject, schema: &JsonObject, depth: usize) {
    if depth == 0 || json.rng.one_in(12) {
        json.value(1);
        return;
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| root.get("$defs")?.get(name)?.as_object())
    {
        return instance(json, root, target, depth - 1);
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) if !kinds.is_empty() => json.rng.pick(kinds).as_str().unwrap_or("null"),
        _ if schema.contains_key("properties") => "object",
        _ if schema.contains_key("enum") || schema.contains_key("oneOf") || schema.contains_key("anyOf") => "string",
        _ => *json.rng.pick(&["string", "integer", "number", "boolean", "null", "array", "object"]),
    };
    match kind {
        "object" => object(json, root, schema, depth),
        "array" => {
            json.out.push('[');
            let items = schema.get("items").and_then(Value::as_object).cloned().unwrap_or_default();
            let len = json.rng.below(4);
            for index in 0..len {
                json.separator(index);
                instance(json, root, &items, depth - 1);
            }
            json.close(len, ']');
        }
        "string" => string(json, schema),
        "integer" | "number" => number(json, schema, kind == "integer"),
        "boolean" => {
            let word = if json.rng.one_in(2) { "true" } else { "false" };
            json.out.push_str(word);
        }
        _ => json.out.push_str("null"),
    }
}

fn object(json: &mut JsonText<'_>, root: &JsonObject, schema: &JsonObject, depth: usize) {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut members: Vec<(String, String)> = Vec::new();
    for (name, property) in properties {
        let include = if required.contains(&name.as_str()) { !json.rng.one_in(10) } else { json.rng.one_in(2) };
        if !include {
            continue;
        }
        let before = json.out.len();
        instance(json, root, property.as_object().unwrap_or(&empty), depth - 1);
        let value = json.out.split_off(before);
        members.push((member_name(json.rng, name), value));
    }
    if json.rng.one_in(8) {
        let before = json.out.len();
        json.value(1);
        let value = json.out.split_off(before);
        members.push(((*json.rng.pick(KEYS)).to_owned(), value));
    }
    if json.rng.one_in(10) && !members.is_empty() {
        let repeated = members[json.rng.below(members.len())].clone();
        let at = json.rng.below(members.len() + 1);
        members.insert(at, repeated);
    }
    json.out.push('{');
    for (index, (name, value)) in members.iter().enumerate() {
        json.separator(index);
        json.member_name(name);
        json.out.push_str(value);
    }
    json.close(members.len(), '}');
}

/// A member name as JSON string contents: plain mostly, its first character escaped now and
/// then (the same name to a reader that decodes it).
fn member_name(rng: &mut Rng, name: &str) -> String {
    let quoted = Value::from(name).to_string();
    let plain = quoted[1..quoted.len() - 1].to_owned();
    match name.chars().next() {
        Some(first) if rng.one_in(6) => {
            let mut units = [0u16; 2];
            let escaped: String = first.encode_utf16(&mut units).iter().map(|unit| format!("\\u{unit:04x}")).collect();
            escaped + &plain[first.len_utf8()..]
        }
        _ => plain,
    }
}

fn string(json: &mut JsonText<'_>, schema: &JsonObject) {
    let choices: Vec<&str> = match (schema.get("enum"), schema.get("oneOf").or(schema.get("anyOf"))) {
        (Some(Value::Array(choices)), _) => choices.iter().filter_map(Value::as_str).collect(),
        (_, Some(Value::Array(branches))) => branches.iter().filter_map(|branch| branch["const"].as_str()).collect(),
        _ => Vec::new(),
    };
    if !choices.is_empty() && !json.rng.one_in(5) {
        let choice = *json.rng.pick(&choices);
        if json.rng.one_in(5) {
            let escaped = member_name(json.rng, choice);
            json.out.push('"');
            json.out.push_str(&escaped);
            json.out.push('"');
        } else {
            json.plain_string(choice);
        }
        return;
    }
    if json.rng.one_in(4) {
        json.string();
        return;
    }
    let bound = schema.get("minLength").or(schema.get("maxLength")).and_then(Value::as_u64).unwrap_or(2) as usize;
    let len = (bound + json.rng.below(3)).saturating_sub(1);
    let text: String = (0..len).map(|_| *json.rng.pick(&["a", "\u{e9}", "\u{1f600}", "b"])).collect();
    json.plain_string(&text);
}

fn number(json: &mut JsonText<'_>, schema: &JsonObject, integer: bool) {
    let bounds: Vec<&Value> = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
        .iter()
        .filter_map(|bound| schema.get(*bound))
        .collect();
    if bounds.is_empty() || json.rng.one_in(4) {
        if integer && json.rng.one_in(2) {
            let small = (json.rng.below(600) as i64 - 300).to_string();
            json.out.push_str(&small);
        } else {
            json.number();
        }
        return;
    }
    let bound = json.rng.pick(&bounds).to_string();
    let near = match json.rng.below(6) {
        0 => bound.clone(),
        1 => format!("{bound}.0").replace("e.0", "e0").replace(".0.0", ".0"),
        2 => format!("{bound}1"),
        3 if bound.starts_with('-') => bound[1..].to_owned(),
        3 => format!("-{bound}"),
        4 => match serde_json::from_str::<f64>(&bound) {
            Ok(value) => Value::from(value + json.rng.pick(&[-1.0, -0.5, 0.5, 1.0])).to_string(),
            Err(_) => bound.clone(),
        },
        _ => match bound.parse::<i128>() {
            Ok(value) => (value + *json.rng.pick(&[-1, 1])).to_string(),
            Err(_) => bound.clone(),
        },
    };
    json.out.push_str(&near);
}
