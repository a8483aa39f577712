//! Objects read from a client that refuse a member given twice, at any depth: serde's maps keep
//! the last of two, while a proxy or a checker may have read the first, so the two would see
//! different requests. Used for every map a handler reads (prompt and completion arguments,
//! input responses, task input) and for the client's answers to the server's requests.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Number, Value};

use crate::types::common::JsonObject;

/// The error for a member given twice.
fn given_twice<E: serde::de::Error>(key: &str) -> E {
    E::custom(format_args!("the member `{key}` is given twice; member names must be unique"))
}

/// Why JSON text could not be read strictly.
#[derive(Debug)]
pub enum UniqueReadError {
    /// An object gives this member twice.
    DuplicateKey(String),
    /// The text is not what was asked for (or holds a string no Rust string can hold).
    Malformed(serde_json::Error),
}

/// Reads any JSON value, refusing an object that gives a member twice; the member is noted in
/// the cell, for callers that name it in an error of their own.
struct UniqueValue<'n>(&'n Cell<Option<String>>);

impl<'de> DeserializeSeed<'de> for UniqueValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueValue<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut values = Vec::new();
        while let Some(value) = items.next_element_seed(UniqueValue(self.0))? {
            values.push(value);
        }
        Ok(Value::Array(values))
    }

    fn visit_map<A: MapAccess<'de>>(self, members: A) -> Result<Value, A::Error> {
        UniqueMembers(self.0).visit_map(members).map(Value::Object)
    }
}

/// Reads a JSON object, refusing (and noting) a member given twice at any depth.
struct UniqueMembers<'n>(&'n Cell<Option<String>>);

impl<'de> Visitor<'de> for UniqueMembers<'_> {
    type Value = JsonObject;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<JsonObject, A::Error> {
        let mut object = JsonObject::new();
        while let Some(key) = members.next_key::<String>()? {
            if object.contains_key(&key) {
                let error = given_twice(&key);
                self.0.set(Some(key));
                return Err(error);
            }
            let value = members.next_value_seed(UniqueValue(self.0))?;
            object.insert(key, value);
        }
        Ok(object)
    }
}

/// A JSON object read strictly: see the module's documentation.
struct UniqueObject(JsonObject);

impl<'de> Deserialize<'de> for UniqueObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UniqueObject, D::Error> {
        deserializer.deserialize_map(UniqueMembers(&Cell::new(None))).map(UniqueObject)
    }
}

/// A map of strings read strictly.
struct UniqueStrings(BTreeMap<String, String>);

impl<'de> Deserialize<'de> for UniqueStrings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UniqueStrings, D::Error> {
        struct Strings;

        impl<'de> Visitor<'de> for Strings {
            type Value = BTreeMap<String, String>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an object of strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Self::Value, A::Error> {
                let mut map = BTreeMap::new();
                while let Some((key, value)) = members.next_entry::<String, String>()? {
                    if map.contains_key(&key) {
                        return Err(given_twice(&key));
                    }
                    map.insert(key, value);
                }
                Ok(map)
            }
        }

        deserializer.deserialize_map(Strings).map(UniqueStrings)
    }
}

/// For `#[serde(deserialize_with)]`: an object whose members are all unique.
pub(crate) fn object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<JsonObject, D::Error> {
    UniqueObject::deserialize(deserializer).map(|object| object.0)
}

/// For `#[serde(deserialize_with)]`: an optional object whose members are all unique.
pub(crate) fn optional_object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<JsonObject>, D::Error> {
    Option::<UniqueObject>::deserialize(deserializer).map(|object| object.map(|object| object.0))
}

/// For `#[serde(deserialize_with)]`: an optional map of strings whose names are all unique.
pub(crate) fn optional_strings<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    Option::<UniqueStrings>::deserialize(deserializer).map(|map| map.map(|map| map.0))
}

/// Reads a JSON value from `text`, refusing an object that gives a member twice at any depth
/// (an error that names the member).
pub fn value_from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = UniqueValue(&Cell::new(None)).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Reads a JSON object from `text`, telling a member given twice at any depth (named) from
/// any other failure.
pub(crate) fn object_from_str(text: &str) -> Result<JsonObject, UniqueReadError> {
    let duplicate = Cell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let read = deserializer.deserialize_map(UniqueMembers(&duplicate)).and_then(|object| {
        deserializer.end()?;
        Ok(object)
    });
    read.map_err(|err| match duplicate.take() {
        Some(key) => UniqueReadError::DuplicateKey(key),
        None => UniqueReadError::Malformed(err),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_given_twice_are_refused_at_any_depth_and_the_rest_read_as_serde_does() {
        for text in [r#"{"a":1,"a":2}"#, r#"{"a":[{"b":{"c":1,"c":1}}]}"#, r#"[{"x":null,"\u0078":true}]"#] {
            let err = value_from_str(text).unwrap_err().to_string();
            assert!(err.contains("is given twice"), "{text}: {err}");
        }
        for text in [r#"{"a":1,"b":[1.5,-2,18446744073709551615,"s",null,true,{"a":{}}]}"#, "3", r#""\ud83d\ude00""#] {
            assert_eq!(value_from_str(text).unwrap(), serde_json::from_str::<Value>(text).unwrap(), "{text}");
        }
        assert!(value_from_str("{} extra").is_err());
        let strings: Result<UniqueStrings, _> = serde_json::from_str(r#"{"lang":"rust","lang":"go"}"#);
        assert!(strings.is_err());
        let key = |text: &str| match object_from_str(text) {
            Err(UniqueReadError::DuplicateKey(key)) => Some(key),
            _ => None,
        };
        assert_eq!(key(r#"{"a":{"b":[{"c":1,"c":2}]}}"#).as_deref(), Some("c"));
        assert!(matches!(object_from_str(r#"{"a":"\ud800"}"#), Err(UniqueReadError::Malformed(_))));
        assert!(matches!(object_from_str("[]"), Err(UniqueReadError::Malformed(_))));
    }
}
