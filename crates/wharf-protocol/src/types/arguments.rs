//! `ToolArguments`: the arguments of a `tools/call`, kept as the client's JSON text.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::types::common::JsonObject;

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

    /// The first member name given twice in one object, at any depth, if any: readers disagree
    /// on which of the two counts (a map keeps the last, a checker may see the first), so such
    /// arguments are refused rather than read.
    pub fn first_duplicate_key(&self) -> Option<String> {
        let found = RefCell::new(None);
        let mut deserializer = serde_json::Deserializer::from_str(self.as_str());
        // Only the duplicate stops the walk early; malformed text cannot get here.
        let _ = UniqueKeys(&found).deserialize(&mut deserializer);
        found.into_inner()
    }
}

/// Walks a JSON value, noting the first member name an object gives twice.
struct UniqueKeys<'a>(&'a RefCell<Option<String>>);

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items.next_element_seed(UniqueKeys(self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        let mut names: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(name) = members.next_key::<Cow<'de, str>>()? {
            if names.contains(&name) {
                *self.0.borrow_mut() = Some(name.into_owned());
                return Err(A::Error::custom("a member given twice"));
            }
            names.insert(name);
            members.next_value_seed(UniqueKeys(self.0))?;
        }
        Ok(())
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
        let first = |text: &str| serde_json::from_str::<ToolArguments>(text).unwrap().first_duplicate_key();
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
