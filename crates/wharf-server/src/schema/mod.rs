//! JSON Schemas of tool arguments: derived from Rust types, compiled once at registration,
//! and used before every call to fill in defaults and reject invalid arguments.
//!
//! `shape.rs` checks the arguments of plain schemas, straight from the client's text when
//! there are no defaults to fill in; the full validator here decides everything else, and
//! words every error. A plain schema is valid by construction, so its full validator is built
//! only when a call's arguments need it: building one checks the schema against its meta-schema
//! and compiles its patterns, which costs resident memory for schemas that never need it.

#[cfg(fuzzing)]
pub mod fuzzing;
mod shape;

use std::fmt::Write as _;
use std::sync::OnceLock;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};
use wharf_protocol::{JsonObject, ToolArguments, UniqueReadError};

use crate::error::{Error, RpcError};
use crate::schema::shape::Shape;

/// Generates the JSON Schema (draft 2020-12) of `T`, inlining nothing: nested types live in
/// `$defs` and are referenced with `$ref`.
pub(crate) fn schema_for<T: JsonSchema>() -> JsonObject {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = schema.to_value();
    drop_rust_number_formats(&mut value);
    match value {
        Value::Object(mut object) => {
            // The root `title` is the Rust type's name, which means nothing to a model, and
            // `$schema` is the default dialect anyway.
            object.remove("title");
            object.remove("$schema");
            object
        }
        Value::Bool(true) => Map::new(),
        other => {
            let mut object = Map::new();
            object.insert("not".to_owned(), other);
            object
        }
    }
}

/// Removes the `format`s schemars gives Rust number types (`uint32`, `double`, ...). They are
/// not JSON Schema formats, strict validators on the client side warn about them, and the
/// range they imply is already stated with `minimum` and `maximum`.
fn drop_rust_number_formats(value: &mut Value) {
    const RUST_FORMATS: [&str; 14] = [
        "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32", "uint64", "uint128",
        "float", "double",
    ];
    match value {
        Value::Object(object) => {
            if object.get("format").and_then(Value::as_str).is_some_and(|format| RUST_FORMATS.contains(&format)) {
                object.remove("format");
            }
            object.values_mut().for_each(drop_rust_number_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_rust_number_formats),
        _ => {}
    }
}

/// A compiled argument schema.
pub(crate) struct ArgumentSchema {
    schema: JsonObject,
    /// Built at registration when there is no shape (so that an invalid schema is refused
    /// there), else on first need.
    validator: OnceLock<Result<wharf_schema::Validator, String>>,
    /// False when no property anywhere in the schema has a `default`, so that there is
    /// nothing to fill in before a call.
    has_defaults: bool,
    /// The schema as a plain shape, when it is one (and has no defaults to fill in): calls
    /// whose arguments fit it are accepted without building JSON values.
    shape: Option<Shape>,
}

/// A call's arguments as the tool's schema accepted them ([`ArgumentSchema::accept`]); only
/// [`ArgumentSchema::read`] turns them into a value, so that nothing reads them unchecked.
#[derive(Debug)]
pub(crate) enum AcceptedArguments {
    /// The client's text, checked: the handler reads its type straight from it.
    Checked(ToolArguments),
    /// The client's text, not yet checked: [`ArgumentSchema::read`] checks it while reading the
    /// handler's type from it, in one pass, and takes the full check when that cannot vouch
    /// for it.
    NotYetChecked(ToolArguments),
    /// The arguments as JSON values, checked, with the schema's defaults filled in.
    Object(JsonObject),
}

/// Why a call's arguments were refused.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// They do not fit the schema: a tool error on 2025-11-25 and later, `-32602` before.
    Invalid(String),
    /// An object in them gives a member twice: `-32602` in every revision, because readers
    /// disagree on which of the two counts.
    DuplicateKey(String),
}

impl Refusal {
    /// The refusal's wording, for tests.
    #[cfg(test)]
    fn into_message(self) -> String {
        match self {
            Refusal::Invalid(message) => message,
            Refusal::DuplicateKey(key) => format!("`{key}` given twice"),
        }
    }

    /// The JSON-RPC error a duplicate member is refused with.
    pub(crate) fn duplicate_key_error(key: &str) -> RpcError {
        RpcError::invalid_params(format!(
            "Invalid params: the arguments give the member `{key}` twice in one object; member names must be unique"
        ))
    }
}

/// Whether the handler reads the arguments itself (it takes `Args`), which lets their check
/// happen while they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgumentReader {
    /// `Args` reads them: the check may be left to that read.
    Handler,
    /// Nothing reads them: they are checked before the handler runs.
    Nobody,
}

impl std::fmt::Debug for ArgumentSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentSchema").field("schema", &self.schema).finish_non_exhaustive()
    }
}

impl ArgumentSchema {
    /// Compiles an input schema, which must describe an object.
    pub(crate) fn compile(owner: &str, mut schema: JsonObject) -> Result<ArgumentSchema, Error> {
        match schema.get("type") {
            None if schema.is_empty() || !schema.contains_key("properties") => {
                schema.insert("type".to_owned(), Value::String("object".to_owned()));
            }
            None => {
                schema.insert("type".to_owned(), Value::String("object".to_owned()));
            }
            Some(Value::String(kind)) if kind == "object" => {}
            Some(other) => {
                return Err(Error::registration(format!(
                    "{owner}: the arguments must be a JSON object (a struct or a map), but the schema's type is {other}"
                )));
            }
        }
        let has_defaults = mentions_default(&schema);
        let shape = Shape::of(&schema);
        let validator = OnceLock::new();
        if shape.is_none() {
            let built = full_validator(&schema)
                .map_err(|err| Error::registration(format!("{owner}: the argument schema is not valid: {err}")))?;
            let _ = validator.set(Ok(built));
        }
        Ok(ArgumentSchema { schema, validator, has_defaults, shape })
    }

    /// True when a call's arguments can be checked while the handler's type is read from them:
    /// the schema is a plain shape with no defaults to fill in.
    fn reads_in_one_pass(&self) -> bool {
        self.shape.is_some() && !self.has_defaults
    }

    /// Decides how a call's arguments are accepted, the one place that does: when the handler
    /// reads them and the schema allows one pass, they are left to be checked as they are read
    /// ([`Self::read`]); otherwise they are checked now, and refused with the reason.
    pub(crate) fn accept(
        &self,
        arguments: Option<ToolArguments>,
        reader: ArgumentReader,
    ) -> Result<AcceptedArguments, Refusal> {
        match arguments {
            Some(text) if reader == ArgumentReader::Handler && self.reads_in_one_pass() => {
                Ok(AcceptedArguments::NotYetChecked(text))
            }
            arguments => self.check(arguments),
        }
    }

    /// Reads a `T` from accepted arguments, in as few passes as they allow; arguments not yet
    /// checked are checked as they are read. The error is the reason to refuse the call.
    pub(crate) fn read<T: serde::de::DeserializeOwned>(&self, arguments: AcceptedArguments) -> Result<T, Refusal> {
        match arguments {
            // Checked while read, in one pass. Anything the shape cannot vouch for (or `T`
            // refuses) takes the full check, whose result is read as any other; the two word
            // the refusal.
            AcceptedArguments::NotYetChecked(text) => {
                match self
                    .shape
                    .as_ref()
                    .filter(|_| self.reads_in_one_pass())
                    .and_then(|shape| shape.read(text.as_str()))
                {
                    Some(value) => Ok(value),
                    None => self.read(self.check(Some(text))?),
                }
            }
            // Read once, straight from the client's text. Should `T` refuse what the schema
            // accepted, the values path words the error as it would have anyway.
            AcceptedArguments::Checked(text) => match serde_json::from_str(text.as_str()) {
                Ok(value) => Ok(value),
                Err(err) => read_object(text.to_object().map_err(|_| Refusal::Invalid(err.to_string()))?)
                    .map_err(Refusal::Invalid),
            },
            AcceptedArguments::Object(object) => read_object(object).map_err(Refusal::Invalid),
        }
    }

    /// Checks a call's arguments: straight from the client's text when the schema is a plain
    /// shape and the text fits it (a shape never accepts a member given twice), otherwise as
    /// JSON values through [`Self::prepare`], which fills in defaults and words the error;
    /// arguments that give a member twice are refused before they become values, where the
    /// last would silently win.
    fn check(&self, arguments: Option<ToolArguments>) -> Result<AcceptedArguments, Refusal> {
        match (&self.shape, arguments) {
            // With defaults to fill in, the arguments are read as values first, then checked.
            (Some(shape), Some(text)) if !self.has_defaults && shape.accepts(text.as_str()) => {
                Ok(AcceptedArguments::Checked(text))
            }
            (_, arguments) => {
                // One strict read: a member given twice is refused and named, not read last-wins.
                let object = arguments.as_ref().map(ToolArguments::to_unique_object).transpose();
                let mut object = match object {
                    Ok(object) => object.unwrap_or_default(),
                    Err(UniqueReadError::DuplicateKey(key)) => return Err(Refusal::DuplicateKey(key)),
                    Err(UniqueReadError::Malformed(err)) => {
                        return Err(Refusal::Invalid(format!("the arguments cannot be read: {err}")));
                    }
                };
                self.prepare(&mut object).map_err(Refusal::Invalid)?;
                Ok(AcceptedArguments::Object(object))
            }
        }
    }

    /// The schema as advertised in `inputSchema`.
    pub(crate) fn schema(&self) -> &JsonObject {
        &self.schema
    }

    /// Fills in defaults for absent properties, then validates. The error names every invalid
    /// field by its JSON pointer.
    pub(crate) fn prepare(&self, arguments: &mut JsonObject) -> Result<(), String> {
        if self.has_defaults {
            apply_defaults(&self.schema, &self.schema, arguments, 0);
        }
        let instance = Value::Object(std::mem::take(arguments));
        let valid = match &self.shape {
            Some(shape) if shape.accepts_value(&instance) => true,
            _ => self.validator()?.is_valid(&instance),
        };
        if valid {
            let Value::Object(object) = instance else { unreachable!("wrapped an object above") };
            *arguments = object;
            return Ok(());
        }
        let mut message = String::new();
        for error in self.validator()?.errors(&instance) {
            if !message.is_empty() {
                message.push_str("; ");
            }
            let wording = choices_refusal(&self.schema, &error).unwrap_or_else(|| error.to_string());
            let path = error.instance_path();
            if path.is_empty() {
                message.push_str(&wording);
            } else {
                let _ = write!(message, "`{}`: {wording}", path.trim_start_matches('/').replace('/', "."));
            }
        }
        let Value::Object(object) = instance else { unreachable!("wrapped an object above") };
        *arguments = object;
        if message.is_empty() { Ok(()) } else { Err(message) }
    }

    /// The full validator, built now if it was not yet.
    fn validator(&self) -> Result<&wharf_schema::Validator, String> {
        let built = self.validator.get_or_init(|| {
            full_validator(&self.schema).map_err(|err| format!("the tool's argument schema is not valid: {err}"))
        });
        built.as_ref().map_err(String::clone)
    }
}

/// The most allowed values a refusal lists; past it, it says how many more there are.
const CHOICES_LISTED: usize = 16;

/// For a value refused by an `enum`, or by a `oneOf` or `anyOf` whose branches each allow only
/// strings (enum variants with documentation, as schemars writes them), the allowed values,
/// every one when there are few, instead of the validator's "not valid under any of the schemas
/// listed" or "or 2 other candidates".
fn choices_refusal(schema: &JsonObject, error: &wharf_schema::ValidationError) -> Option<String> {
    let choices = match error.keyword() {
        "enum" => error.allowed()?.as_array()?.clone(),
        "oneOf" | "anyOf" => {
            // The keyword's place in the schema, `$ref`s already followed: `/$defs/Level/oneOf`.
            let branches = Value::Object(schema.clone());
            let branches = branches.pointer(error.schema_location())?;
            let mut choices = Vec::new();
            for branch in branches.as_array()? {
                choices.extend(shape::branch_strings(branch.as_object()?)?.into_iter().map(Value::from));
            }
            choices
        }
        _ => return None,
    };
    Some(format!("{} is not one of {}", error.instance(), listed(&choices)))
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`, and past [`CHOICES_LISTED`], `..., or 5 more`.
fn listed(choices: &[Value]) -> String {
    let shown: Vec<String> = choices.iter().take(CHOICES_LISTED).map(Value::to_string).collect();
    match (shown.split_last(), choices.len().saturating_sub(CHOICES_LISTED)) {
        (None, _) => "nothing (the schema allows no value)".to_owned(),
        (Some((only, [])), 0) => only.clone(),
        (Some((last, rest)), 0) => format!("{} or {last}", rest.join(", ")),
        (Some(_), more) => format!("{}, or {more} more", shown.join(", ")),
    }
}

/// Reads a `T` from arguments held as JSON values.
pub(crate) fn read_object<T: serde::de::DeserializeOwned>(object: JsonObject) -> Result<T, String> {
    serde_json::from_value(Value::Object(object)).map_err(|err| err.to_string())
}

fn full_validator(schema: &JsonObject) -> Result<wharf_schema::Validator, wharf_schema::SchemaError> {
    wharf_schema::Validator::options().assert_formats(true).build_owned(Value::Object(schema.clone()))
}

/// True if a `default` member appears anywhere in `schema`, `$defs` included.
fn mentions_default(schema: &JsonObject) -> bool {
    schema.iter().any(|(key, value)| {
        key == "default"
            || match value {
                Value::Object(object) => mentions_default(object),
                Value::Array(items) => items.iter().any(|item| item.as_object().is_some_and(mentions_default)),
                _ => false,
            }
    })
}

/// Follows a local `$ref` (`#/$defs/Name` or `#/definitions/Name`) to its target.
fn resolve<'a>(root: &'a JsonObject, schema: &'a JsonObject) -> &'a JsonObject {
    let Some(Value::String(reference)) = schema.get("$ref") else { return schema };
    let mut target = root;
    for segment in reference.trim_start_matches("#/").split('/').filter(|s| !s.is_empty()) {
        match target.get(segment) {
            Some(Value::Object(next)) => target = next,
            _ => return schema,
        }
    }
    target
}

/// Inserts each absent property's `default`, recursing into nested objects. Depth is bounded so
/// that recursive types cannot loop.
fn apply_defaults(root: &JsonObject, schema: &JsonObject, value: &mut JsonObject, depth: usize) {
    if depth > 32 {
        return;
    }
    let schema = resolve(root, schema);
    let Some(Value::Object(properties)) = schema.get("properties") else { return };
    for (name, property) in properties {
        let Value::Object(property) = property else { continue };
        let property = resolve(root, property);
        match value.get_mut(name) {
            None => {
                if let Some(default) = property.get("default") {
                    value.insert(name.clone(), default.clone());
                }
            }
            Some(Value::Object(nested)) => apply_defaults(root, property, nested, depth + 1),
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(schema: Value) -> ArgumentSchema {
        let Value::Object(object) = schema else { panic!("not an object") };
        ArgumentSchema::compile("test", object).unwrap()
    }

    #[test]
    fn defaults_are_applied_before_validation() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {
                "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 7},
                "location": {"type": "string"}
            },
            "required": ["location"]
        }));
        let mut arguments = json!({"location": "Oslo"}).as_object().unwrap().clone();
        schema.prepare(&mut arguments).unwrap();
        assert_eq!(Value::Object(arguments), json!({"location": "Oslo", "days": 7}));
    }

    #[test]
    fn defaults_reached_through_refs_are_applied_too() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {"window": {"$ref": "#/$defs/Window"}},
            "$defs": {"Window": {"type": "object", "properties": {"days": {"type": "integer", "default": 7}}}}
        }));
        assert!(schema.has_defaults);
        let mut arguments = json!({"window": {}}).as_object().unwrap().clone();
        schema.prepare(&mut arguments).unwrap();
        assert_eq!(Value::Object(arguments), json!({"window": {"days": 7}}));
        let plain = compiled(json!({"type": "object", "properties": {"days": {"type": "integer"}}}));
        assert!(!plain.has_defaults);
    }

    #[test]
    fn errors_name_the_invalid_field() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {"days": {"type": "integer", "maximum": 14}},
        }));
        let mut arguments = json!({"days": 30}).as_object().unwrap().clone();
        let message = schema.prepare(&mut arguments).unwrap_err();
        assert!(message.starts_with("`days`: 30 is greater than the maximum of 14"), "{message}");
    }

    #[test]
    fn a_documented_enum_value_refused_names_the_allowed_values() {
        /// How loud.
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        enum Level {
            /// Quiet.
            Low,
            /// Loud.
            High,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Arguments {
            level: Level,
            levels: Vec<Level>,
        }
        let schema = ArgumentSchema::compile("test", schema_for::<Arguments>()).unwrap();
        let mut arguments = json!({"level": "Medium", "levels": ["Low", "Loudest"]}).as_object().unwrap().clone();
        let message = schema.prepare(&mut arguments).unwrap_err();
        assert!(message.contains(r#"`level`: "Medium" is not one of "Low" or "High""#), "{message}");
        assert!(message.contains(r#"`levels.1`: "Loudest" is not one of "Low" or "High""#), "{message}");
        assert!(!message.contains("oneOf"), "{message}");
    }

    #[test]
    fn an_enum_refusal_lists_every_allowed_value_when_there_are_few() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {"operation": {"type": "string", "enum": ["add", "subtract", "multiply", "divide"]}},
        }));
        let mut arguments = json!({"operation": "modulo"}).as_object().unwrap().clone();
        let message = schema.prepare(&mut arguments).unwrap_err();
        assert_eq!(message, r#"`operation`: "modulo" is not one of "add", "subtract", "multiply" or "divide""#);

        let many: Vec<String> = (0..20).map(|n| format!("v{n}")).collect();
        let schema = compiled(json!({"type": "object", "properties": {"v": {"enum": many}}}));
        let mut arguments = json!({"v": 3}).as_object().unwrap().clone();
        let message = schema.prepare(&mut arguments).unwrap_err();
        assert!(message.starts_with(r#"`v`: 3 is not one of "v0", "v1", "#), "{message}");
        assert!(message.ends_with(r#""v15", or 4 more"#), "{message}");

        let single = compiled(json!({"type": "object", "properties": {"v": {"enum": [1]}}}));
        let mut arguments = json!({"v": 2}).as_object().unwrap().clone();
        assert_eq!(single.prepare(&mut arguments).unwrap_err(), "`v`: 2 is not one of 1");
    }

    #[test]
    fn formats_are_checked() {
        let schema =
            compiled(json!({"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}));
        let mut arguments = json!({"email": "not an address"}).as_object().unwrap().clone();
        assert!(schema.prepare(&mut arguments).is_err());
    }

    #[test]
    fn rust_number_formats_are_left_out_and_json_schema_formats_kept() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Numbers {
            small: u8,
            ratio: f64,
            #[schemars(email)]
            email: String,
        }
        let schema = Value::Object(schema_for::<Numbers>());
        assert_eq!(schema["properties"]["small"], serde_json::json!({"type": "integer", "minimum": 0, "maximum": 255}));
        assert_eq!(schema["properties"]["ratio"], serde_json::json!({"type": "number"}));
        assert_eq!(schema["properties"]["email"]["format"], "email");
    }

    #[test]
    fn derived_argument_types_take_the_fast_way_and_the_rest_the_full_validator() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        #[serde(rename_all = "lowercase")]
        enum Operation {
            Add,
            Divide,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Calculation {
            operation: Operation,
            a: f64,
            b: f64,
            precision: Option<u32>,
            note: Option<String>,
        }
        let schema = ArgumentSchema::compile("tool `calc`", schema_for::<Calculation>()).unwrap();
        assert!(schema.shape.is_some(), "{:?}", schema.schema);
        let text = |text: &str| Some(serde_json::from_str::<ToolArguments>(text).unwrap());

        let fast = schema.check(text(r#"{"operation": "add", "a": 1, "b": 2.5, "precision": 3}"#)).unwrap();
        assert!(matches!(fast, AcceptedArguments::Checked(_)), "{fast:?}");
        // Arguments the shape cannot vouch for get the full validator's verdict and wording;
        // a member given twice is refused before any reader picks one of the two.
        let extra = schema.check(text(r#"{"operation": "add", "a": 1, "b": 3, "comment": "x"}"#)).unwrap();
        assert!(matches!(extra, AcceptedArguments::Object(_)), "{extra:?}");
        let twice = schema.check(text(r#"{"operation": "add", "a": 1, "a": 2, "b": 3}"#));
        assert!(matches!(twice, Err(Refusal::DuplicateKey(ref key)) if key == "a"), "{twice:?}");
        let message = schema.check(text(r#"{"operation": "modulo", "a": 1, "b": 2}"#)).unwrap_err().into_message();
        assert!(message.starts_with("`operation`:"), "{message}");
        let message =
            schema.check(text(r#"{"operation": "add", "a": 1, "precision": -1}"#)).unwrap_err().into_message();
        assert!(message.contains("\"b\" is a required property"), "{message}");
        assert!(message.contains("`precision`: -1 is less than the minimum of 0"), "{message}");
        assert!(schema.check(None).unwrap_err().into_message().contains("required"));

        let with_defaults =
            compiled(json!({"type": "object", "properties": {"days": {"type": "integer", "default": 7}}}));
        assert!(with_defaults.shape.is_some());
        let filled = with_defaults.check(text("{}")).unwrap();
        assert!(matches!(filled, AcceptedArguments::Object(object) if object["days"] == 7));
        let message = with_defaults.check(text(r#"{"days": "seven"}"#)).unwrap_err().into_message();
        assert!(message.starts_with("`days`:"), "{message}");
    }

    #[test]
    fn a_plain_schema_builds_its_full_validator_only_when_a_call_needs_it() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {
                "days": {"type": "integer", "minimum": 1, "default": 7},
                "place": {"type": "string"}
            },
            "required": ["place"]
        }));
        let text = |text: &str| Some(serde_json::from_str::<ToolArguments>(text).unwrap());
        // Accepted by the shape, defaults filled in: no full validator.
        let filled = schema.check(text(r#"{"place": "Oslo"}"#)).unwrap();
        assert!(matches!(filled, AcceptedArguments::Object(object) if object["days"] == 7));
        assert!(schema.validator.get().is_none());
        // Refused: the full validator is built to judge and word it.
        let message = schema.check(text(r#"{"place": "Oslo", "days": 0}"#)).unwrap_err().into_message();
        assert!(message.starts_with("`days`: 0 is less than the minimum of 1"), "{message}");
        assert!(matches!(schema.validator.get(), Some(Ok(_))));
        // A schema the shape does not cover has its validator from the start.
        let pattern = compiled(json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^u"}}}));
        assert!(pattern.shape.is_none() && pattern.validator.get().is_some());
    }

    #[test]
    fn every_schema_a_shape_is_made_of_compiles() {
        // A plain schema defers its full validator: each must still be one the validator
        // accepts, or a call would find out too late.
        for schema in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"], "default": null}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"],
                   "$defs": {"A": {"type": "array", "items": {"type": "integer", "exclusiveMaximum": 3}}}}),
            json!({"type": "object", "additionalProperties": {"type": "string", "enum": ["x", "y"], "maxLength": 1}}),
            json!({"type": "object", "properties": {"n": {"type": "number", "minimum": -1.5, "description": "d"}},
                   "additionalProperties": false, "x-note": 1}),
        ] {
            let Value::Object(object) = schema.clone() else { unreachable!() };
            let compiled = ArgumentSchema::compile("test", object).unwrap();
            assert!(compiled.shape.is_some(), "not plain: {schema}");
            assert!(compiled.validator().is_ok(), "{schema}");
        }
        // What the validator would refuse is not plain, so it is refused at registration.
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "string"]}}}),
            json!({"type": "object", "$defs": {"Unused": {"type": "strange"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "description": 3}}}),
            json!({"type": "object", "examples": {"a": 1}}),
        ] {
            let Value::Object(object) = schema.clone() else { unreachable!() };
            assert!(ArgumentSchema::compile("test", object).is_err(), "{schema}");
        }
    }

    #[test]
    fn arguments_no_string_can_hold_are_refused_not_dropped() {
        // A lone surrogate passes as raw JSON text but not as a value. With defaults to fill
        // in, the arguments are read as values; without, the shape refuses them first.
        let with_defaults =
            compiled(json!({"type": "object", "properties": {"days": {"type": "integer", "default": 7}}}));
        let plain = compiled(json!({"type": "object", "properties": {"note": {"type": "string"}}}));
        for schema in [&with_defaults, &plain] {
            let text = serde_json::from_str::<ToolArguments>(r#"{"days": 1, "note": "\ud800"}"#).unwrap();
            let message = schema.check(Some(text)).unwrap_err().into_message();
            assert!(message.contains("the arguments cannot be read"), "{message}");
        }
    }

    #[test]
    fn non_object_schemas_are_refused() {
        let Value::Object(schema) = json!({"type": "string"}) else { unreachable!() };
        let err = ArgumentSchema::compile("tool `x`", schema).unwrap_err();
        assert!(err.to_string().contains("must be a JSON object"), "{err}");
    }
}
