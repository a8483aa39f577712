//! JSON whose objects keep their members in the order they were written, so that a client's
//! configuration file edited by `wharf install` differs from before only where it must.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value, objects in their written order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(name, _)| name == key).map(|(_, value)| value),
            _ => None,
        }
    }

    /// Sets the member `key` of an object, in place when it is there and last when it is not;
    /// the value it had.
    pub(crate) fn set(&mut self, key: &str, value: Json) -> Option<Json> {
        let Json::Object(members) = self else { return None };
        match members.iter_mut().find(|(name, _)| name == key) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                members.push((key.to_owned(), value));
                None
            }
        }
    }

    /// The member `key`, made an empty object first when it is not there.
    pub(crate) fn object_at(&mut self, key: &str) -> Option<&mut Json> {
        if self.get(key).is_none() {
            self.set(key, Json::Object(Vec::new()));
        }
        match self {
            Json::Object(members) => members.iter_mut().find(|(name, _)| name == key).map(|(_, value)| value),
            _ => None,
        }
    }

    /// Two-space indented text, as editors write these files.
    pub(crate) fn pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(flag) => serializer.serialize_bool(*flag),
            Json::Number(number) => number.serialize(serializer),
            Json::String(text) => serializer.serialize_str(text),
            Json::Array(items) => {
                let mut sequence = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    sequence.serialize_element(item)?;
                }
                sequence.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("JSON")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Json, E> {
        Ok(Json::Bool(flag))
    }

    fn visit_i64<E>(self, number: i64) -> Result<Json, E> {
        Ok(Json::Number(number.into()))
    }

    fn visit_u64<E>(self, number: u64) -> Result<Json, E> {
        Ok(Json::Number(number.into()))
    }

    fn visit_f64<E>(self, number: f64) -> Result<Json, E> {
        Ok(serde_json::Number::from_f64(number).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, text: &str) -> Result<Json, E> {
        Ok(Json::String(text.to_owned()))
    }

    fn visit_string<E>(self, text: String) -> Result<Json, E> {
        Ok(Json::String(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = sequence.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            match members.iter_mut().find(|(name, _)| *name == key) {
                Some((_, slot)) => *slot = value,
                None => members.push((key, value)),
            }
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_their_order_through_an_edit() {
        let mut json: Json = serde_json::from_str(r#"{"zeta": 1, "alpha": {"b": 2, "a": [true, null, 1.5]}}"#).unwrap();
        json.object_at("servers").unwrap().set("new", Json::String("x".to_owned()));
        assert_eq!(json.set("zeta", Json::Number(2.into())), Some(Json::Number(1.into())));
        assert_eq!(
            serde_json::to_string(&json).unwrap(),
            r#"{"zeta":2,"alpha":{"b":2,"a":[true,null,1.5]},"servers":{"new":"x"}}"#
        );
    }
}
