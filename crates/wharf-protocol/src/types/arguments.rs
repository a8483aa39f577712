//! `ToolArguments`: the arguments of a `tools/call`, kept as the client's JSON text.

use std::fmt;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::types::common::JsonObject;
use crate::types::unique::UniqueReadError;

/// The arguments of a `tools/call`: a JSON object, kept as the text the client sent.
///
/// A server reads them once, straight into the tool's argument type, after checking them
/// against the tool's input schema; building a map of JSON values first would cost an
/// allocation for every member and a second walk to turn it into the type.
#[derive(Clone)]
pub struct ToolArguments(Box<str>);

impl ToolArguments {
    /// Arguments from `text`, which the caller has checked is a JSON object with no white
    /// space around it.
    pub(crate) fn from_checked_object(text: &str) -> ToolArguments {
        debug_assert!(text.starts_with('{') && serde_json::from_str::<&RawValue>(text).is_ok(), "{text}");
        ToolArguments(text.into())
    }

    /// The arguments as JSON text, exactly as received: always an object.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The arguments as a map of JSON values. Members given twice keep the last value.
    ///
    /// Fails when a string holds an escape no Rust string can hold (a lone UTF-16 surrogate
    /// such as `"\ud800"`): reading the text as raw JSON lets it through, reading its values
    /// does not.
    pub fn to_object(&self) -> Result<JsonObject, serde_json::Error> {
        serde_json::from_str(self.as_str())
    }

    /// The arguments as a map of JSON values, read strictly: a member given twice in one
    /// object, at any depth, is refused and named, since readers disagree on which of the two
    /// counts (a map keeps the last, a checker may see the first).
    pub fn to_unique_object(&self) -> Result<JsonObject, UniqueReadError> {
        crate::types::unique::object_from_str(self.as_str())
    }
}

impl From<&JsonObject> for ToolArguments {
    fn from(object: &JsonObject) -> ToolArguments {
        // A map of JSON values always serializes.
        let text = serde_json::to_string(object).unwrap_or_else(|_| "{}".to_owned());
        ToolArguments(text.into())
    }
}

impl From<JsonObject> for ToolArguments {
    fn from(object: JsonObject) -> ToolArguments {
        ToolArguments::from(&object)
    }
}

impl Default for ToolArguments {
    fn default() -> ToolArguments {
        ToolArguments("{}".into())
    }
}

impl fmt::Debug for ToolArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolArguments").field(&self.as_str()).finish()
    }
}

/// Two argument objects are equal when they hold the same members, however they were written.
impl PartialEq for ToolArguments {
    fn eq(&self, other: &ToolArguments) -> bool {
        self.as_str() == other.as_str()
            || matches!((self.to_object(), other.to_object()), (Ok(mine), Ok(theirs)) if mine == theirs)
    }
}

/// Written as the JSON text it holds. Only clients write arguments, so finding the text's
/// extent again here (`RawValue` is how serde is told to copy JSON text) costs a server nothing.
impl Serialize for ToolArguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(&self.0).map_err(S::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ToolArguments, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        // A raw value has no white space around it, so an object starts with its brace.
        if raw.get().starts_with('{') {
            Ok(ToolArguments(raw.into()))
        } else {
            Err(D::Error::invalid_type(unexpected(raw.get()), &"a JSON object"))
        }
    }
}

/// How serde names the kind of a JSON value that is not an object, for the error message.
fn unexpected(text: &str) -> serde::de::Unexpected<'static> {
    use serde::de::Unexpected;
    match text.as_bytes().first() {
        Some(b'[') => Unexpected::Seq,
        Some(b'"') => Unexpected::Other("a string"),
        Some(b't' | b'f') => Unexpected::Other("a boolean"),
        Some(b'n') => Unexpected::Unit,
        _ => Unexpected::Other("a number"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_member_given_twice_is_found_at_any_depth() {
        let first = |text: &str| match serde_json::from_str::<ToolArguments>(text).unwrap().to_unique_object() {
            Ok(_) => None,
            Err(UniqueReadError::DuplicateKey(key)) => Some(key),
            Err(UniqueReadError::Malformed(err)) => panic!("{text}: {err}"),
        };
        assert_eq!(first(r#"{"message":"first","message":"second"}"#).as_deref(), Some("message"));
        assert_eq!(first(r#"{"a":{"b":1,"c":[{"d":1},{"e":1,"e":2}]}}"#).as_deref(), Some("e"));
        // Names are compared as the strings they stand for, escapes read.
        assert_eq!(first(r#"{"k":1,"\u006b":2}"#).as_deref(), Some("k"));
        assert_eq!(first(r#"{"a":{"x":1},"b":{"x":1},"x":[{"x":1}]}"#), None);
        assert_eq!(first("{}"), None);
    }

    #[test]
    fn arguments_keep_the_clients_text() {
        let arguments: ToolArguments = serde_json::from_str(r#"{"b": 1, "a": [true]}"#).unwrap();
        assert_eq!(arguments.as_str(), r#"{"b": 1, "a": [true]}"#);
        assert_eq!(serde_json::to_string(&arguments).unwrap(), r#"{"b": 1, "a": [true]}"#);
        assert_eq!(serde_json::Value::Object(arguments.to_object().unwrap()), json!({"a": [true], "b": 1}));
    }

    #[test]
    fn values_no_string_can_hold_are_an_error_not_an_empty_object() {
        let arguments: ToolArguments = serde_json::from_str(r#"{"note": "\ud800"}"#).unwrap();
        let error = arguments.to_object().unwrap_err().to_string();
        assert!(error.contains("escape"), "{error}");
    }

    #[test]
    fn only_an_object_is_accepted() {
        for text in [r#""text""#, "[1]", "3", "true", "null"] {
            let error = serde_json::from_str::<ToolArguments>(text).unwrap_err().to_string();
            assert!(error.contains("expected a JSON object"), "{text}: {error}");
        }
    }

    #[test]
    fn equality_is_by_members_not_spelling() {
        let spaced: ToolArguments = serde_json::from_str(r#"{ "a": 1, "b": 2 }"#).unwrap();
        let object = json!({"b": 2, "a": 1}).as_object().cloned().unwrap();
        assert_eq!(spaced, ToolArguments::from(object));
        assert_ne!(spaced, ToolArguments::default());
    }

    #[test]
    fn arguments_read_from_a_json_value_too() {
        let arguments: ToolArguments = serde_json::from_value(json!({"message": "hi"})).unwrap();
        assert_eq!(serde_json::Value::Object(arguments.to_object().unwrap()), json!({"message": "hi"}));
    }
}
