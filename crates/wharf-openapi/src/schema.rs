//! An OpenAPI schema made into JSON Schema 2020-12: `$ref`s to the document's own parts inlined
//! (a recursive one kept once under `$defs`, where it can refer to itself), references outside
//! the document refused, and 3.0's `nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`
//! and `example` written as 2020-12 says them.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::error::{OpenApiError, OpenApiErrorKind};

/// The deepest nesting of schemas converted; deeper is refused (a document could otherwise
/// make the conversion recurse without end through chains of references).
const MAX_DEPTH: usize = 64;

/// The keywords whose value is one schema.
const ONE_SCHEMA: [&str; 9] = [
    "not",
    "additionalProperties",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// The keywords whose value is a list of schemas.
const SCHEMA_LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// The keywords whose value maps names to schemas.
const SCHEMA_MAP: [&str; 5] = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];

/// Converts the schemas of one document, for one tool at a time.
pub(crate) struct Converter<'a> {
    document: &'a Value,
    /// True for a 3.0 document, whose schema dialect differs from 2020-12.
    legacy: bool,
    /// The references being converted, outermost first: one met again is recursive.
    converting: Vec<String>,
    /// The recursive references met, kept under `$defs` by name.
    defs: BTreeMap<String, Value>,
    /// The `$defs` names of the references kept there, by reference.
    def_names: BTreeMap<String, String>,
}

impl<'a> Converter<'a> {
    pub(crate) fn new(document: &'a Value, legacy: bool) -> Converter<'a> {
        Converter { document, legacy, converting: Vec::new(), defs: BTreeMap::new(), def_names: BTreeMap::new() }
    }

    /// The part of the document `reference` (`#/components/...`) names; an error for one outside
    /// the document or naming nothing.
    pub(crate) fn resolve(&self, reference: &str) -> Result<&'a Value, OpenApiError> {
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(OpenApiError::new(
                OpenApiErrorKind::Reference,
                format!(
                    "`{reference}` is outside the document, and references outside it are followed only when \
                     allowed (`--allow-external-refs`, `OpenApi::follow_external_refs`)"
                ),
            ));
        };
        self.document.pointer(pointer).ok_or_else(|| {
            OpenApiError::new(OpenApiErrorKind::Reference, format!("`{reference}` names nothing in the document"))
        })
    }

    /// `value`, or what it refers to when it is a `$ref` (a parameter, a request body, a
    /// response), followed up to a bound.
    pub(crate) fn dereference(&self, mut value: &'a Value) -> Result<&'a Value, OpenApiError> {
        for _ in 0..MAX_DEPTH {
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => value = self.resolve(reference)?,
                None => return Ok(value),
            }
        }
        Err(OpenApiError::new(OpenApiErrorKind::Reference, "a chain of `$ref`s is too long, or loops"))
    }

    /// `schema` as JSON Schema 2020-12, the definitions it needs under its `$defs`.
    pub(crate) fn convert_root(&mut self, schema: &Value) -> Result<Value, OpenApiError> {
        self.begin();
        let converted = self.convert_part(schema)?;
        Ok(self.attach_defs(converted))
    }

    /// Starts a root schema made of several parts (a tool's arguments): no definitions yet.
    pub(crate) fn begin(&mut self) {
        self.defs.clear();
        self.def_names.clear();
    }

    /// One part of the root begun, its definitions kept for [`Converter::attach_defs`].
    pub(crate) fn convert_part(&mut self, schema: &Value) -> Result<Value, OpenApiError> {
        self.convert(schema, 0)
    }

    /// `root` with the definitions its parts need under its `$defs`.
    pub(crate) fn attach_defs(&mut self, root: Value) -> Value {
        if self.defs.is_empty() {
            return root;
        }
        let defs: Map<String, Value> = std::mem::take(&mut self.defs).into_iter().collect();
        match root {
            Value::Object(mut object) => {
                object.insert("$defs".to_owned(), Value::Object(defs));
                Value::Object(object)
            }
            other => json!({"allOf": [other], "$defs": defs}),
        }
    }

    fn convert(&mut self, schema: &Value, depth: usize) -> Result<Value, OpenApiError> {
        if depth > MAX_DEPTH {
            return Err(OpenApiError::new(
                OpenApiErrorKind::Reference,
                format!("a schema nests more than {MAX_DEPTH} levels deep"),
            ));
        }
        let Value::Object(object) = schema else { return Ok(schema.clone()) };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let referred = self.referred(reference, depth)?;
            let siblings: Map<String, Value> =
                object.iter().filter(|(key, _)| *key != "$ref").map(|(k, v)| (k.clone(), v.clone())).collect();
            if siblings.is_empty() {
                return Ok(referred);
            }
            // 3.1 lets a `$ref` have siblings (a description, say): they apply beside it.
            let rest = self.convert(&Value::Object(siblings), depth + 1)?;
            return Ok(json!({"allOf": [referred, rest]}));
        }
        let mut converted = Map::new();
        for (key, value) in object {
            let value = match key.as_str() {
                key if ONE_SCHEMA.contains(&key) => self.convert(value, depth + 1)?,
                "items" => match value {
                    // 2019-09's list form of `items` is 2020-12's `prefixItems`.
                    Value::Array(items) => {
                        let items = self.convert_all(items, depth)?;
                        converted.insert("prefixItems".to_owned(), Value::Array(items));
                        continue;
                    }
                    one => self.convert(one, depth + 1)?,
                },
                key if SCHEMA_LIST.contains(&key) => match value {
                    Value::Array(items) => Value::Array(self.convert_all(items, depth)?),
                    other => other.clone(),
                },
                key if SCHEMA_MAP.contains(&key) => match value {
                    Value::Object(members) => {
                        let mut map = Map::new();
                        for (name, member) in members {
                            map.insert(name.clone(), self.convert(member, depth + 1)?);
                        }
                        Value::Object(map)
                    }
                    other => other.clone(),
                },
                _ => value.clone(),
            };
            converted.insert(key.clone(), value);
        }
        Ok(self.dialect(converted))
    }

    fn convert_all(&mut self, items: &[Value], depth: usize) -> Result<Vec<Value>, OpenApiError> {
        items.iter().map(|item| self.convert(item, depth + 1)).collect()
    }

    /// The schema `reference` names, inlined; a reference to itself (met while it is being
    /// converted) and every later one are `#/$defs/NAME`.
    fn referred(&mut self, reference: &str, depth: usize) -> Result<Value, OpenApiError> {
        if let Some(name) = self.def_names.get(reference) {
            return Ok(json!({"$ref": format!("#/$defs/{name}")}));
        }
        if self.converting.iter().any(|open| open == reference) {
            let name = self.def_name(reference);
            self.def_names.insert(reference.to_owned(), name.clone());
            return Ok(json!({"$ref": format!("#/$defs/{name}")}));
        }
        let target = self.resolve(reference)?;
        self.converting.push(reference.to_owned());
        let converted = self.convert(target, depth + 1);
        self.converting.pop();
        let converted = converted?;
        match self.def_names.get(reference) {
            // It referred to itself on the way: kept once, referred to from here too.
            Some(name) => {
                let reference = json!({"$ref": format!("#/$defs/{name}")});
                self.defs.insert(name.clone(), converted);
                Ok(reference)
            }
            None => Ok(converted),
        }
    }

    /// A `$defs` name for `reference`: its last segment, made unique.
    fn def_name(&self, reference: &str) -> String {
        let last = reference.rsplit('/').next().unwrap_or("schema").replace("~1", "/").replace("~0", "~");
        let base: String =
            last.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
        let taken = |name: &str| self.def_names.values().any(|known| known == name);
        let mut name = base.clone();
        let mut suffix = 2;
        while taken(&name) {
            name = format!("{base}_{suffix}");
            suffix += 1;
        }
        name
    }

    /// What 2020-12 says differently from a 3.0 schema object, rewritten: `nullable`,
    /// boolean exclusive bounds; and `example` (of either version) as `examples`.
    fn dialect(&self, mut object: Map<String, Value>) -> Value {
        if let Some(example) = object.remove("example") {
            object.entry("examples").or_insert_with(|| Value::Array(vec![example]));
        }
        if !self.legacy {
            return Value::Object(object);
        }
        for (exclusive, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
            if let Some(Value::Bool(on)) = object.get(exclusive) {
                let on = *on;
                object.remove(exclusive);
                if on && let Some(limit) = object.remove(bound) {
                    object.insert(exclusive.to_owned(), limit);
                }
            }
        }
        if object.remove("nullable") != Some(Value::Bool(true)) {
            return Value::Object(object);
        }
        if let Some(Value::Array(values)) = object.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        match object.get_mut("type") {
            Some(Value::String(single)) => {
                let single = std::mem::take(single);
                object.insert("type".to_owned(), json!([single, "null"]));
                Value::Object(object)
            }
            Some(Value::Array(types)) => {
                if !types.contains(&json!("null")) {
                    types.push(json!("null"));
                }
                Value::Object(object)
            }
            _ => json!({"anyOf": [Value::Object(object), {"type": "null"}]}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> Value {
        json!({
            "openapi": "3.0.3",
            "components": {"schemas": {
                "Pet": {"type": "object", "properties": {
                    "name": {"type": "string", "nullable": true, "example": "Rex"},
                    "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
                    "owner": {"$ref": "#/components/schemas/Person"}
                }},
                "Person": {"type": "object", "properties": {"name": {"type": "string"}}},
                "Node": {"type": "object", "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
                }}
            }}
        })
    }

    #[test]
    fn references_are_inlined_and_a_30_schema_is_written_as_2020_12() {
        let document = document();
        let mut converter = Converter::new(&document, true);
        let pet = converter.convert_root(&json!({"$ref": "#/components/schemas/Pet"})).unwrap();
        assert_eq!(
            pet,
            json!({"type": "object", "properties": {
                "name": {"type": ["string", "null"], "examples": ["Rex"]},
                "age": {"type": "integer", "exclusiveMinimum": 0},
                "owner": {"type": "object", "properties": {"name": {"type": "string"}}}
            }})
        );
    }

    #[test]
    fn a_recursive_schema_is_kept_once_under_defs() {
        let document = document();
        let mut converter = Converter::new(&document, true);
        let node = converter.convert_root(&json!({"$ref": "#/components/schemas/Node"})).unwrap();
        assert_eq!(
            node,
            json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            }}}})
        );
        // Inside a property, the definitions go on the root.
        let wrapped = converter
            .convert_root(&json!({"type": "object", "properties": {"tree": {"$ref": "#/components/schemas/Node"}}}))
            .unwrap();
        assert_eq!(wrapped["properties"]["tree"], json!({"$ref": "#/$defs/Node"}));
        assert!(wrapped["$defs"]["Node"].is_object());
    }

    #[test]
    fn references_outside_the_document_or_to_nothing_are_refused() {
        let document = document();
        let mut converter = Converter::new(&document, false);
        let outside = converter.convert_root(&json!({"$ref": "https://example.com/schema.json"})).unwrap_err();
        assert_eq!(outside.kind(), OpenApiErrorKind::Reference);
        assert!(outside.to_string().contains("outside the document"), "{outside}");
        let missing = converter.convert_root(&json!({"$ref": "#/components/schemas/Nope"})).unwrap_err();
        assert!(missing.to_string().contains("names nothing"), "{missing}");
    }

    #[test]
    fn nullable_without_a_type_and_false_exclusive_bounds() {
        let document = json!({});
        let mut converter = Converter::new(&document, true);
        let converted = converter
            .convert_root(&json!({"nullable": true, "enum": ["a"], "maximum": 5, "exclusiveMaximum": false}))
            .unwrap();
        assert_eq!(converted, json!({"anyOf": [{"enum": ["a", null], "maximum": 5}, {"type": "null"}]}));
        // In 3.1 the keywords are 2020-12's already.
        let mut converter = Converter::new(&document, false);
        let kept = converter.convert_root(&json!({"type": "number", "exclusiveMinimum": 1})).unwrap();
        assert_eq!(kept, json!({"type": "number", "exclusiveMinimum": 1}));
    }
}
