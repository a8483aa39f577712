//! Plain argument schemas, checked while reading the client's JSON text, without building any
//! JSON values: the fast way to accept a call's arguments.
//!
//! A schema is plain when every keyword in it is one this checker applies exactly as JSON
//! Schema does: `type`, `properties`, `required`, `additionalProperties`, `items`, the four
//! numeric bounds, `minLength`, `maxLength`, `enum` of strings, annotations, and a `$ref` to
//! `$defs` standing alone (as schemars writes nested types), and documented enum variants
//! (`oneOf` of strings). `default` is an annotation here: filling defaults in is the caller's
//! work. Anything else (`anyOf` of other schemas, `pattern`, `format`, ...) leaves the schema
//! to the full validator. So do arguments with a member the schema does not name, and any member
//! given twice: this checker keeps no names, and the full path refuses duplicates (readers
//! disagree on which of two counts). Every part of a plain schema, unused definitions and the values of
//! annotations included, is understood here, so a plain schema is a valid one. The checker
//! only ever says "certainly valid" or "ask the full validator", so a call it does not accept
//! still gets the full validator's verdict and its error message.

use std::cmp::Ordering;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use wharf_protocol::JsonObject;

mod fused;

/// The JSON types a value may have, as bits; no bit set means any type.
mod kind {
    pub(super) const NULL: u8 = 1;
    pub(super) const BOOLEAN: u8 = 1 << 1;
    pub(super) const OBJECT: u8 = 1 << 2;
    pub(super) const ARRAY: u8 = 1 << 3;
    pub(super) const NUMBER: u8 = 1 << 4;
    pub(super) const INTEGER: u8 = 1 << 5;
    pub(super) const STRING: u8 = 1 << 6;
}

/// True for a keyword that only describes and never constrains, with a value of the kind the
/// meta-schema wants for it (`x-` extensions may hold anything).
fn is_annotation(keyword: &str, value: &Value) -> bool {
    match keyword {
        "description" | "title" | "$comment" => value.is_string(),
        "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
        "examples" => value.is_array(),
        "default" => true,
        extension => extension.starts_with("x-"),
    }
}

/// A plain schema, ready to check JSON text against.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    types: u8,
    properties: Vec<(String, Shape)>,
    /// Bit `i` set: `properties[i]` is required.
    required: u64,
    items: Option<Box<Shape>>,
    bounds: Vec<(Bound, Number)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    choices: Option<Vec<String>>,
}

/// A shape that allows anything, for the items of an array whose schema says nothing of them:
/// their objects are still walked, so that a member given twice is never waved through.
static ANY: Shape = Shape {
    types: 0,
    properties: Vec::new(),
    required: 0,
    items: None,
    bounds: Vec::new(),
    min_length: None,
    max_length: None,
    choices: None,
};

#[derive(Debug, Clone, Copy)]
enum Bound {
    Minimum,
    ExclusiveMinimum,
    Maximum,
    ExclusiveMaximum,
}

/// How deep references may nest before a schema counts as not plain: recursive types would
/// otherwise unfold forever.
const MAX_DEPTH: usize = 16;

impl Shape {
    /// The shape of `root`, a whole argument schema, if it is plain; `None` leaves it to the
    /// full validator.
    pub(crate) fn of(root: &JsonObject) -> Option<Shape> {
        Shape::within(root, root, 0)
    }

    fn within(root: &JsonObject, schema: &JsonObject, depth: usize) -> Option<Shape> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(reference) = schema.get("$ref") {
            // Only a reference standing alone: beside other keywords, both would apply.
            let alone = schema.iter().all(|(keyword, value)| keyword == "$ref" || is_annotation(keyword, value));
            let name = reference.as_str()?.strip_prefix("#/$defs/")?;
            let target = root.get("$defs")?.get(name)?.as_object()?;
            return if alone { Shape::within(root, target, depth + 1) } else { None };
        }
        let mut shape = Shape::default();
        let mut required: Vec<&str> = Vec::new();
        for (keyword, value) in schema {
            match keyword.as_str() {
                "type" => shape.types = types(value)?,
                "properties" => {
                    for (name, property) in value.as_object()? {
                        shape.properties.push((name.clone(), Shape::within(root, property.as_object()?, depth + 1)?));
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        // The meta-schema wants the names unique.
                        let name = name.as_str()?;
                        if required.contains(&name) {
                            return None;
                        }
                        required.push(name);
                    }
                }
                // Members the schema does not name are left to the full path (a checker that
                // does not keep their names cannot see one given twice), so what this keyword
                // allows is never needed here; it must only be plain.
                "additionalProperties" => match value {
                    Value::Bool(_) => {}
                    Value::Object(schema) => {
                        Shape::within(root, schema, depth + 1)?;
                    }
                    _ => return None,
                },
                "items" => {
                    shape.items = match value {
                        Value::Bool(true) => None,
                        Value::Object(schema) => Some(Box::new(Shape::within(root, schema, depth + 1)?)),
                        _ => return None,
                    }
                }
                "minimum" => shape.bounds.push((Bound::Minimum, value.as_number()?.clone())),
                "exclusiveMinimum" => shape.bounds.push((Bound::ExclusiveMinimum, value.as_number()?.clone())),
                "maximum" => shape.bounds.push((Bound::Maximum, value.as_number()?.clone())),
                "exclusiveMaximum" => shape.bounds.push((Bound::ExclusiveMaximum, value.as_number()?.clone())),
                "minLength" => shape.min_length = Some(value.as_u64()?),
                "maxLength" => shape.max_length = Some(value.as_u64()?),
                "enum" if shape.choices.is_none() => shape.choices = Some(strings(value)?),
                // Documented enum variants, as schemars writes them: a branch per variant, each
                // one string. Distinct strings make `oneOf` (and `anyOf`) the same as an `enum`
                // of them all.
                "oneOf" | "anyOf" if shape.choices.is_none() => {
                    let mut choices: Vec<String> = Vec::new();
                    for branch in value.as_array()? {
                        for choice in branch_strings(branch.as_object()?)? {
                            if choices.contains(&choice) {
                                return None;
                            }
                            choices.push(choice);
                        }
                    }
                    if choices.is_empty() {
                        return None;
                    }
                    shape.choices = Some(choices);
                }
                // Definitions constrain nothing until referenced, but each must be plain too,
                // so that the whole schema is known to be valid.
                "$defs" if depth == 0 => {
                    for definition in value.as_object()?.values() {
                        Shape::within(root, definition.as_object()?, depth + 1)?;
                    }
                }
                annotation if is_annotation(annotation, value) => {}
                _ => return None,
            }
        }
        // Required members are tracked as bits of the properties they name.
        if shape.properties.len() > 64 {
            return None;
        }
        for name in required {
            let index = shape.properties.iter().position(|(property, _)| property == name)?;
            shape.required |= 1 << index;
        }
        Some(shape)
    }

    /// True when `text`, a JSON value, certainly satisfies the schema. False when it does not,
    /// or when this checker cannot tell (a member given twice, a number too large to compare
    /// exactly): the full validator then decides.
    pub(crate) fn accepts(&self, text: &str) -> bool {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        self.deserialize(&mut deserializer).is_ok() && deserializer.end().is_ok()
    }

    /// [`Shape::accepts`] for a value already read.
    pub(crate) fn accepts_value(&self, value: &Value) -> bool {
        self.deserialize(value).is_ok()
    }

    fn allows(&self, kind: u8) -> bool {
        self.types == 0 || self.types & kind != 0
    }

    fn check_number<E: serde::de::Error>(&self, number: Number) -> Result<(), E> {
        let integral = number.is_u64() || number.is_i64() || number.as_f64().is_some_and(|n| n.fract() == 0.0);
        let typed = self.allows(kind::NUMBER) || (integral && self.allows(kind::INTEGER));
        let bounded = self.bounds.iter().all(|(bound, limit)| match (bound, compare(&number, limit)) {
            (Bound::Minimum, Some(order)) => order != Ordering::Less,
            (Bound::ExclusiveMinimum, Some(order)) => order == Ordering::Greater,
            (Bound::Maximum, Some(order)) => order != Ordering::Greater,
            (Bound::ExclusiveMaximum, Some(order)) => order == Ordering::Less,
            (_, None) => false,
        });
        if typed && bounded && self.choices.is_none() { Ok(()) } else { Err(E::custom("not accepted")) }
    }

    /// Checks a value whose type has no other keywords here than `type` (and `enum`).
    fn check_kind<E: serde::de::Error>(&self, kind: u8) -> Result<(), E> {
        if self.allows(kind) && self.choices.is_none() { Ok(()) } else { Err(E::custom("not accepted")) }
    }

    fn check_str<E: serde::de::Error>(&self, value: &str) -> Result<(), E> {
        let fits_choices = self.choices.as_ref().is_none_or(|choices| choices.iter().any(|choice| choice == value));
        let length_checked = self.min_length.is_some() || self.max_length.is_some();
        let length = if length_checked { value.chars().count() as u64 } else { 0 };
        let fits_length =
            self.min_length.is_none_or(|min| length >= min) && self.max_length.is_none_or(|max| length <= max);
        if self.allows(kind::STRING) && fits_choices && fits_length { Ok(()) } else { Err(E::custom("not accepted")) }
    }
}

/// An `enum` of strings.
fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|choice| choice.as_str().map(str::to_owned)).collect()
}

/// The strings a `oneOf` branch allows, when it is only strings: a `const` or an `enum` of
/// strings, with `type: "string"` at most and annotations.
pub(super) fn branch_strings(branch: &JsonObject) -> Option<Vec<String>> {
    let mut choices = None;
    for (keyword, value) in branch {
        match keyword.as_str() {
            "const" if choices.is_none() => choices = Some(vec![value.as_str()?.to_owned()]),
            "enum" if choices.is_none() => choices = Some(strings(value)?),
            "type" if value == "string" => {}
            annotation if is_annotation(annotation, value) => {}
            _ => return None,
        }
    }
    choices
}

/// The JSON Schema `type` keyword as bits.
fn types(value: &Value) -> Option<u8> {
    let one = |name: &str| match name {
        "null" => Some(kind::NULL),
        "boolean" => Some(kind::BOOLEAN),
        "object" => Some(kind::OBJECT),
        "array" => Some(kind::ARRAY),
        "number" => Some(kind::NUMBER),
        "integer" => Some(kind::INTEGER),
        "string" => Some(kind::STRING),
        _ => None,
    };
    match value {
        Value::String(name) => one(name),
        // The meta-schema wants the names unique.
        Value::Array(names) if !names.is_empty() => names.iter().try_fold(0, |bits, name| {
            let bit = one(name.as_str()?)?;
            (bits & bit == 0).then_some(bits | bit)
        }),
        _ => None,
    }
}

/// Compares two JSON numbers exactly, or says it cannot (`None`): integers compare as
/// integers, and a float with an integer only while the integer converts to a float exactly.
fn compare(value: &Number, limit: &Number) -> Option<Ordering> {
    const EXACT: u64 = 1 << 53;
    let integer = |number: &Number| number.as_i64().map(i128::from).or_else(|| number.as_u64().map(i128::from));
    match (integer(value), integer(limit)) {
        (Some(value), Some(limit)) => Some(value.cmp(&limit)),
        (Some(whole), None) | (None, Some(whole)) if whole.unsigned_abs() > u128::from(EXACT) => None,
        _ => value.as_f64()?.partial_cmp(&limit.as_f64()?),
    }
}

impl<'de> DeserializeSeed<'de> for &Shape {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &Shape {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value the schema accepts")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.check_kind(kind::NULL)
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.check_kind(kind::BOOLEAN)
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<(), E> {
        self.check_number(Number::from(value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<(), E> {
        self.check_number(Number::from(value))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<(), E> {
        Number::from_f64(value).map_or_else(|| Err(E::custom("not a JSON number")), |number| self.check_number(number))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<(), E> {
        self.check_str(value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        self.check_kind::<A::Error>(kind::ARRAY)?;
        match &self.items {
            Some(shape) => while items.next_element_seed(&**shape)?.is_some() {},
            None => while items.next_element_seed(&ANY)?.is_some() {},
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        self.check_kind::<A::Error>(kind::OBJECT)?;
        let mut seen: u64 = 0;
        while let Some(known) = members.next_key_seed(PropertyName(&self.properties))? {
            match known {
                Some(index) => {
                    // A member given twice: the full validator sees only the last one, and so
                    // must the handler; leave it to that path.
                    if seen & (1 << index) != 0 {
                        return Err(A::Error::custom("a member given twice"));
                    }
                    seen |= 1 << index;
                    members.next_value_seed(&self.properties[index].1)?;
                }
                // A member the schema does not name may be given twice, which this checker
                // cannot see without keeping every such name; the full path refuses that.
                None => return Err(A::Error::custom("a member the schema does not name")),
            }
        }
        if self.required & !seen == 0 { Ok(()) } else { Err(A::Error::custom("a required member is missing")) }
    }
}

/// Reads a member name and finds its property, without copying the name.
struct PropertyName<'a>(&'a [(String, Shape)]);

impl<'de> DeserializeSeed<'de> for PropertyName<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for PropertyName<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|(property, _)| property == name))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shape(schema: Value) -> Shape {
        Shape::of(schema.as_object().unwrap()).expect("a plain schema")
    }

    /// Checks the shape's verdict on each instance against the full validator's: what the
    /// shape accepts, the validator must accept; `expected` says what the shape should say.
    fn agree(schema: Value, cases: &[(Value, bool)]) {
        let validator = wharf_schema::Validator::new(&schema).unwrap();
        let shape = shape(schema.clone());
        for (instance, expected) in cases {
            let accepted = shape.accepts(&instance.to_string());
            assert_eq!(accepted, *expected, "the shape of {schema} on {instance}");
            if accepted {
                assert!(validator.is_valid(instance), "the shape accepted {instance}, which {schema} refuses");
            }
        }
    }

    #[test]
    fn objects_need_their_required_members_with_the_right_types() {
        let schema = json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "what to say"}, "times": {"type": ["integer", "null"]}},
            "required": ["message"],
        });
        agree(
            schema,
            &[
                (json!({"message": "hi"}), true),
                // A member the schema does not name is valid, but left to the full path.
                (json!({"message": "hi", "times": 3, "extra": [1, {"a": null}]}), false),
                (json!({"message": "hi", "times": null}), true),
                (json!({"message": "hi", "times": 3.0}), true),
                (json!({"message": "hi", "times": 3.5}), false),
                (json!({"message": 5}), false),
                (json!({"times": 3}), false),
                (json!([]), false),
                (json!("message"), false),
            ],
        );
    }

    #[test]
    fn references_to_definitions_are_followed() {
        agree(
            json!({"type": "object", "properties": {"operation": {"$ref": "#/$defs/Operation", "description": "what"}},
                   "required": ["operation"], "$defs": {"Operation": {"type": "string", "enum": ["add"]}}}),
            &[(json!({"operation": "add"}), true), (json!({"operation": "subtract"}), false), (json!({}), false)],
        );
    }

    #[test]
    fn a_member_given_twice_is_left_to_the_full_validator() {
        let shape = shape(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
        assert!(shape.accepts(r#"{"a": "x"}"#));
        assert!(!shape.accepts(r#"{"a": "x", "a": 1}"#));
        assert!(!shape.accepts(r#"{"a": "x"} trailing"#));
    }

    #[test]
    fn numbers_are_bounded_exactly() {
        agree(
            json!({"type": "object", "properties": {
                "small": {"type": "integer", "minimum": 0, "maximum": 255},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
                "huge": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615_u64},
            }}),
            &[
                (json!({"small": 0, "ratio": 1.25}), true),
                (json!({"small": 255}), true),
                (json!({"small": 256}), false),
                (json!({"small": -1}), false),
                (json!({"ratio": 0}), false),
                (json!({"ratio": 1.5}), false),
                (json!({"ratio": 1}), true),
                (json!({"huge": 18446744073709551615_u64}), true),
                (json!({"huge": 1.8446744073709552e19}), false),
            ],
        );
    }

    #[test]
    fn strings_meet_their_choices_and_lengths() {
        agree(
            json!({"type": "object", "properties": {
                "operation": {"type": "string", "enum": ["add", "divide"]},
                "code": {"type": "string", "minLength": 2, "maxLength": 3},
            }, "additionalProperties": false}),
            &[
                (json!({"operation": "add"}), true),
                (json!({"operation": "multiply"}), false),
                (json!({"operation": 1}), false),
                (json!({"code": "ab"}), true),
                (json!({"code": "\u{e9}\u{e9}\u{e9}"}), true),
                (json!({"code": "a"}), false),
                (json!({"code": "abcd"}), false),
                (json!({"other": 1}), false),
            ],
        );
    }

    #[test]
    fn arrays_and_nested_objects_are_checked_all_the_way_down() {
        agree(
            json!({"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "window": {"type": "object", "properties": {"days": {"type": "integer"}}, "required": ["days"],
                           "additionalProperties": {"type": "boolean"}},
            }}),
            &[
                (json!({"tags": ["a", "b"], "window": {"days": 2}}), true),
                // Valid, but a member the schema does not name is left to the full path.
                (json!({"tags": ["a", "b"], "window": {"days": 2, "strict": true}}), false),
                (json!({"tags": ["a", 2]}), false),
                (json!({"tags": "a"}), false),
                (json!({"window": {}}), false),
                (json!({"window": {"days": 2, "strict": "yes"}}), false),
            ],
        );
    }

    #[test]
    fn documented_enum_variants_are_choices() {
        agree(
            json!({
                "type": "object",
                "properties": {"level": {"$ref": "#/$defs/Level"}},
                "required": ["level"],
                "$defs": {"Level": {"description": "How loud.", "oneOf": [
                    {"const": "quiet", "description": "Hardly.", "type": "string"},
                    {"enum": ["loud", "louder"], "type": "string"}
                ]}}
            }),
            &[
                (json!({"level": "quiet"}), true),
                (json!({"level": "louder"}), true),
                (json!({"level": "silent"}), false),
                (json!({"level": 1}), false),
                (json!({"level": null}), false),
                (json!({}), false),
            ],
        );
    }

    #[test]
    fn schemas_with_other_keywords_are_not_plain() {
        for schema in [
            json!({"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "type": "object"}}, "$defs": {"A": {}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}, "$defs": {"A": {}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"$ref": "#/$defs/A"}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"a": {"oneOf": [{"const": "x"}, {"const": 1}]}}}),
            json!({"type": "object", "properties": {"a": {"oneOf": [{"const": "x"}, {"enum": ["y", "x"]}]}}}),
            json!({"type": "object", "properties": {"a": {"oneOf": [{"const": "x", "type": "integer"}]}}}),
            json!({"type": "object", "properties": {"a": {"oneOf": [{"const": "x"}], "enum": ["x"]}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}),
            json!({"type": "object", "properties": {"a": {"enum": [1, 2]}}}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "string"]}}}),
            json!({"type": "object", "properties": {"a": {}}, "required": ["a", "a"]}),
            json!({"type": "object", "$defs": {"Unused": {"pattern": "^x"}}}),
            json!({"type": "object", "title": 1}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "readOnly": "yes"}}, "$defs": {"A": {}}}),
            json!({"type": "object", "required": ["not-a-property"]}),
            json!({"type": "object", "properties": {"a": {"const": "x"}}}),
        ] {
            assert!(Shape::of(schema.as_object().unwrap()).is_none(), "{schema}");
        }
        assert!(Shape::of(json!({"type": "object", "x-mcp-header": "Region"}).as_object().unwrap()).is_some());
        // A default only describes; filling it in is the caller's work.
        let with_default = json!({"type": "object", "properties": {"a": {"type": "integer", "default": 3}}});
        assert!(Shape::of(with_default.as_object().unwrap()).is_some());
    }
}
