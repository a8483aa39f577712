//! A request's params as they are written: the `_meta` members the request adds (its progress
//! token, its revision, the caller's own) merged into those the params name, and on 2026-07-28
//! the client's own (capabilities, info, log level), encoded once when the client connected.
//! Merged as they are written, so that the caller's params are neither copied nor changed: a
//! request that must be sent again (another round of input) is sent from the same params.

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// `params` with `meta` merged into its `_meta` (`meta`'s members win), then `base`'s members
/// neither names: the bytes a sorted map of the merged params would give, without building it.
/// Params that are not an object are written as they are; the caller refuses them when there is
/// `meta` to add.
pub(crate) struct WithMeta<'a> {
    pub(crate) params: &'a Value,
    pub(crate) meta: &'a Map<String, Value>,
    pub(crate) base: &'a [(String, Box<RawValue>)],
}

impl WithMeta<'_> {
    /// True when there are members to add: the params' `_meta` is then written merged, and
    /// params without one get one.
    fn adds(&self) -> bool {
        !self.meta.is_empty() || !self.base.is_empty()
    }

    fn merged<'b>(&'b self, own: Option<&'b Map<String, Value>>) -> MergedMeta<'b> {
        MergedMeta { own, added: self.meta, base: self.base }
    }
}

impl Serialize for WithMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(object) = self.params.as_object() else { return self.params.serialize(serializer) };
        let own = object.get("_meta").and_then(Value::as_object);
        let mut merged_due = own.is_none() && self.adds();
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in object {
            // Where a sorted map would put an added `_meta`.
            if merged_due && key.as_str() > "_meta" {
                map.serialize_entry("_meta", &self.merged(None))?;
                merged_due = false;
            }
            if key == "_meta" && (own.is_some() || self.adds()) {
                // An own `_meta` that is not an object gives way to the merged one.
                map.serialize_entry(key, &self.merged(own))?;
                merged_due = false;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        if merged_due {
            map.serialize_entry("_meta", &self.merged(None))?;
        }
        map.end()
    }
}

/// A `_meta` object: the params' own members and the added ones in the order of their names
/// (an added one in the place of an own one of its name), then the client's base members
/// neither names.
struct MergedMeta<'a> {
    own: Option<&'a Map<String, Value>>,
    added: &'a Map<String, Value>,
    base: &'a [(String, Box<RawValue>)],
}

impl Serialize for MergedMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut own = self.own.into_iter().flatten().peekable();
        let mut added = self.added.iter().peekable();
        loop {
            let take_own = match (own.peek(), added.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((own_key, _)), Some((added_key, _))) => {
                    if own_key == added_key {
                        own.next();
                        false
                    } else {
                        own_key < added_key
                    }
                }
            };
            let (key, value) = if take_own { own.next() } else { added.next() }.unwrap_or_else(|| unreachable!());
            map.serialize_entry(key, value)?;
        }
        for (key, value) in self.base {
            let named = self.own.is_some_and(|own| own.contains_key(key)) || self.added.contains_key(key);
            if !named {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the client wrote before: `meta` inserted into a copy of the params (its members
    /// winning), then the base members the merged `_meta` does not name, after it.
    fn inserted(params: &Value, meta: &Map<String, Value>, base: &[(String, Box<RawValue>)]) -> String {
        let mut params = params.clone();
        if let Some(object) = params.as_object_mut()
            && (!meta.is_empty() || !base.is_empty())
        {
            let entry = object.entry("_meta").or_insert_with(|| json!({}));
            if !entry.is_object() {
                *entry = json!({});
            }
            let merged = entry.as_object_mut().unwrap();
            merged.extend(meta.clone());
            let mut text = serde_json::to_string(&Value::Object(merged.clone())).unwrap();
            let extra: Vec<String> = base
                .iter()
                .filter(|(key, _)| !merged.contains_key(key))
                .map(|(key, value)| format!("{}:{}", serde_json::to_string(key).unwrap(), value.get()))
                .collect();
            if !extra.is_empty() {
                text.pop();
                if !merged.is_empty() {
                    text.push(',');
                }
                text.push_str(&extra.join(","));
                text.push('}');
            }
            serde_json::from_str::<Value>(&text).unwrap();
            // A stand-in, replaced by the text once the rest is written.
            *entry = Value::Null;
            let written = serde_json::to_string(&params).unwrap();
            return written.replace(r#""_meta":null"#, &format!(r#""_meta":{text}"#));
        }
        serde_json::to_string(&params).unwrap()
    }

    #[test]
    fn the_merge_writes_what_inserting_into_a_copy_wrote() {
        let base: Vec<(String, Box<RawValue>)> = vec![
            ("io.modelcontextprotocol/clientCapabilities".into(), RawValue::from_string("{}".into()).unwrap()),
            ("io.modelcontextprotocol/clientInfo".into(), RawValue::from_string(r#"{"name":"c"}"#.into()).unwrap()),
        ];
        let added = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 3, "b": "added"});
        let added = added.as_object().unwrap();
        let none = Map::new();
        for params in [
            json!({}),
            json!({"name": "t", "arguments": {"x": 1}}),
            json!({"name": "t", "_meta": {"a": 1, "b": "own", "z": [1]}}),
            json!({"A": 1, "_meta": {"io.modelcontextprotocol/clientInfo": {"name": "mine"}}, "z": 2}),
            json!({"Upper": true, "name": "t"}),
            json!({"_meta": 5, "name": "t"}),
        ] {
            for (meta, base) in [(added, &base[..]), (added, &[][..]), (&none, &base[..]), (&none, &[][..])] {
                let written = serde_json::to_string(&WithMeta { params: &params, meta, base }).unwrap();
                if params.get("_meta").is_some_and(|own| !own.is_object()) && meta.is_empty() && base.is_empty() {
                    assert_eq!(written, serde_json::to_string(&params).unwrap());
                    continue;
                }
                assert_eq!(written, inserted(&params, meta, base), "{params} with {meta:?}");
                serde_json::from_str::<Value>(&written).unwrap();
            }
        }
        let not_an_object = json!([1, 2]);
        let written = serde_json::to_string(&WithMeta { params: &not_an_object, meta: added, base: &base }).unwrap();
        assert_eq!(written, "[1,2]");
    }
}
