//! A schema object's keywords, found in one pass over its members: the evaluator asks for
//! about thirty of them, and a lookup by name in the object for each would cost more than the
//! check it serves.

use serde_json::{Map, Value};

/// Every keyword the evaluator reads, in the order of `Keywords::values`.
const NAMES: [&str; 46] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "type",
    "enum",
    "const",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "maxItems",
    "minItems",
    "uniqueItems",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "$schema",
    "$id",
    "id",
];

/// Each keyword's place in [`NAMES`], by which the evaluator asks for it.
pub(crate) const REF: usize = 0;
pub(crate) const DYNAMIC_REF: usize = 1;
pub(crate) const RECURSIVE_REF: usize = 2;
pub(crate) const TYPE: usize = 3;
pub(crate) const ENUM: usize = 4;
pub(crate) const CONST: usize = 5;
pub(crate) const MAXIMUM: usize = 6;
pub(crate) const MINIMUM: usize = 7;
pub(crate) const EXCLUSIVE_MAXIMUM: usize = 8;
pub(crate) const EXCLUSIVE_MINIMUM: usize = 9;
pub(crate) const MULTIPLE_OF: usize = 10;
pub(crate) const MAX_LENGTH: usize = 11;
pub(crate) const MIN_LENGTH: usize = 12;
pub(crate) const PATTERN: usize = 13;
pub(crate) const FORMAT: usize = 14;
pub(crate) const ALL_OF: usize = 15;
pub(crate) const ANY_OF: usize = 16;
pub(crate) const ONE_OF: usize = 17;
pub(crate) const NOT: usize = 18;
pub(crate) const IF: usize = 19;
pub(crate) const THEN: usize = 20;
pub(crate) const ELSE: usize = 21;
pub(crate) const DEPENDENT_SCHEMAS: usize = 22;
pub(crate) const DEPENDENCIES: usize = 23;
pub(crate) const MAX_PROPERTIES: usize = 24;
pub(crate) const MIN_PROPERTIES: usize = 25;
pub(crate) const REQUIRED: usize = 26;
pub(crate) const DEPENDENT_REQUIRED: usize = 27;
pub(crate) const PROPERTIES: usize = 28;
pub(crate) const PATTERN_PROPERTIES: usize = 29;
pub(crate) const ADDITIONAL_PROPERTIES: usize = 30;
pub(crate) const PROPERTY_NAMES: usize = 31;
pub(crate) const UNEVALUATED_PROPERTIES: usize = 32;
pub(crate) const MAX_ITEMS: usize = 33;
pub(crate) const MIN_ITEMS: usize = 34;
pub(crate) const UNIQUE_ITEMS: usize = 35;
pub(crate) const PREFIX_ITEMS: usize = 36;
pub(crate) const ITEMS: usize = 37;
pub(crate) const ADDITIONAL_ITEMS: usize = 38;
pub(crate) const CONTAINS: usize = 39;
pub(crate) const MIN_CONTAINS: usize = 40;
pub(crate) const MAX_CONTAINS: usize = 41;
pub(crate) const UNEVALUATED_ITEMS: usize = 42;
pub(crate) const SCHEMA: usize = 43;
pub(crate) const DOLLAR_ID: usize = 44;
pub(crate) const ID: usize = 45;

/// The keywords of one schema object.
#[derive(Debug)]
pub(crate) struct Keywords<'v> {
    values: [Option<&'v Value>; NAMES.len()],
}

impl<'v> Keywords<'v> {
    pub(crate) fn of(schema: &'v Map<String, Value>) -> Keywords<'v> {
        let mut values = [None; NAMES.len()];
        for (name, value) in schema {
            if let Some(index) = index(name) {
                values[index] = Some(value);
            }
        }
        Keywords { values }
    }

    /// The value of the keyword at `place` (one of the constants above).
    #[inline]
    pub(crate) fn get(&self, place: usize) -> Option<&'v Value> {
        self.values[place]
    }

    #[inline]
    pub(crate) fn has(&self, place: usize) -> bool {
        self.values[place].is_some()
    }

    /// The value of the keyword `name`, for a name the evaluator holds as text.
    pub(crate) fn named(&self, name: &str) -> Option<&'v Value> {
        index(name).and_then(|place| self.values[place])
    }
}

/// The place of keyword `name` in [`NAMES`]: by its length first, so that a member that is
/// no keyword costs one comparison of lengths, and a keyword a few of short strings.
fn index(name: &str) -> Option<usize> {
    let place = match name.len() {
        2 => match name {
            "if" => 19,
            "id" => 45,
            _ => return None,
        },
        3 => match name {
            "not" => 18,
            "$id" => 44,
            _ => return None,
        },
        4 => match name {
            "$ref" => 0,
            "type" => 3,
            "enum" => 4,
            "then" => 20,
            "else" => 21,
            _ => return None,
        },
        5 => match name {
            "const" => 5,
            "allOf" => 15,
            "anyOf" => 16,
            "oneOf" => 17,
            "items" => 37,
            _ => return None,
        },
        6 => match name {
            "format" => 14,
            _ => return None,
        },
        7 => match name {
            "maximum" => 6,
            "minimum" => 7,
            "pattern" => 13,
            "$schema" => 43,
            _ => return None,
        },
        8 => match name {
            "required" => 26,
            "maxItems" => 33,
            "minItems" => 34,
            "contains" => 39,
            _ => return None,
        },
        9 => match name {
            "maxLength" => 11,
            "minLength" => 12,
            _ => return None,
        },
        10 => match name {
            "multipleOf" => 10,
            "properties" => 28,
            _ => return None,
        },
        11 => match name {
            "$dynamicRef" => 1,
            "uniqueItems" => 35,
            "prefixItems" => 36,
            "minContains" => 40,
            "maxContains" => 41,
            _ => return None,
        },
        12 => match name {
            "dependencies" => 23,
            _ => return None,
        },
        13 => match name {
            "$recursiveRef" => 2,
            "maxProperties" => 24,
            "minProperties" => 25,
            "propertyNames" => 31,
            _ => return None,
        },
        15 => match name {
            "additionalItems" => 38,
            _ => return None,
        },
        16 => match name {
            "exclusiveMaximum" => 8,
            "exclusiveMinimum" => 9,
            "dependentSchemas" => 22,
            "unevaluatedItems" => 42,
            _ => return None,
        },
        17 => match name {
            "dependentRequired" => 27,
            "patternProperties" => 29,
            _ => return None,
        },
        20 => match name {
            "additionalProperties" => 30,
            _ => return None,
        },
        21 => match name {
            "unevaluatedProperties" => 32,
            _ => return None,
        },
        _ => return None,
    };
    Some(place)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_keyword_is_found_and_others_are_not() {
        let schema = json!({"type": "object", "unevaluatedItems": false, "x-extra": 1, "id": "a"});
        let keywords = Keywords::of(schema.as_object().unwrap());
        assert_eq!(keywords.get(TYPE), Some(&json!("object")));
        assert_eq!(keywords.get(UNEVALUATED_ITEMS), Some(&json!(false)));
        assert_eq!(keywords.named("id"), Some(&json!("a")));
        assert!(!keywords.has(REF) && keywords.named("x-extra").is_none());
        for (place, name) in NAMES.iter().enumerate() {
            assert_eq!(index(name), Some(place), "{name}");
        }
    }
}
